"""Whole nccl-tests curves from calibration sources that are not cases yet, against the engine.

A calibration case must pass (docs/FIDELITY.md, "Calibration and validation"), and the engine
misses these curves between their two ends; only their largest rows are cases. This prints the
engine's prediction at every published size — NCCL's choice, or a forced algorithm/protocol —
so the next mechanism can be fitted here and then judged on the validation split.

    PYTHONPATH=. .venv/bin/python tools/calibration_curves.py [ring:LL128 nvls:Simple ...]

Source: oracle-quickstart/oci-gpu-quickstarts nvidia/GB300/README-GB300.md (OCI BM.GPU.GB300.4,
GB300 NVL72, NCCL 2.28.7, ``all_reduce_perf -b 512K -e 16G -f 2 -g 1`` over MPI ranks,
``NCCL_BUFFSIZE=16777216``, ``NCCL_MNNVL_ENABLE=1``, ``NCCL_NVLS_ENABLE=1``); out-of-place busbw,
GB/s. Mapped as the cases of the same source: ``gb200-nvl72`` (one rack), the rack's first GPUs.
"""
from __future__ import annotations

import sys

from designer.engine.analysis.nccl_tests import predict_sweep
from designer.engine.benchmarks.fidelity import build_topology

_SIZES = [512 << 10 << i for i in range(16)]   # 512 KiB … 16 GiB
CURVES = {
    "1 host, 4 GPUs (one tray)": (4, [43.87, 77.81, 117.78, 152.98, 260.67, 333.72, 413.39, 559.78, 596.63,
                                      617.05, 632.27, 639.96, 657.53, 665.45, 681.03, 685.19]),
    "2 hosts, 8 GPUs (two trays, MNNVL)": (8, [30.27, 61.09, 105.46, 131.05, 193.24, 276.88, 346.73, 421.21,
                                               596.65, 657.17, 702.18, 724.98, 823.23, 832.47, 838.38, 841.63]),
    "16 hosts, 64 GPUs (one rack, MNNVL)": (64, [15.57, 30.87, 59.06, 110.18, 173.82, 222.39, 301.95, 399.55,
                                                 485.05, 583.51, 645.41, 743.33, 820.02]),
}


def main(argv: list[str]) -> None:
    combos = [tuple(a.split(":")) for a in argv] or [("auto", "auto")]
    topo = build_topology({"template": "gb200-nvl72", "hosts": 1})
    for name, (gpus, busbw) in CURVES.items():
        sizes = _SIZES[:len(busbw)]
        ids = {"ids": [f"h0/tray{i // 4}/gpu{i % 4}" for i in range(gpus)]}
        runs = [predict_sweep(topo, "all_reduce", sizes=sizes, participants=ids, algorithm=a, protocol=p)
                for a, p in combos]
        print(f"\n{name}\n{'bytes':>12} {'published':>9}  " + "  ".join(f"{a}:{p}".rjust(27) for a, p in combos))
        for i, (size, pub) in enumerate(zip(sizes, busbw)):
            cells = [f"{r[i]['busbw_gbs']:8.1f} {100 * (r[i]['busbw_gbs'] / pub - 1):+6.1f}% "
                     f"{r[i].get('algorithm', '')}/{r[i].get('protocol', '')}".rjust(27) for r in runs]
            print(f"{size:>12} {pub:>9.2f}  " + "  ".join(cells))


if __name__ == "__main__":
    main(sys.argv[1:])
