"""Write the SimAI topology fixtures of ``tests/engine/data/simai_topo/``.

A reimplementation (not a copy) of what aliyun/SimAI's topology generator
``astra-sim-alibabacloud/inputs/topo/gen_Topo_Template.py`` writes for its three named templates,
from its published wiring rules:

- ``Spectrum-X`` — rail-optimized, one ToR (ASW) per rail per segment, every ASW to every PSW
  (``Rail_Opti_SingleToR``); run as ``-topo Spectrum-X -g 16 -gps 8 -bw 100Gbps -gt A100
  -nvbw 2400Gbps``, the configuration of SimAI's shipped ``Spectrum-X_16g_8gps_100Gbps_A100``;
- ``AlibabaHPN --dp`` — dual ToR, dual plane: each GPU to one ASW of each plane, plane k's ASWs to
  plane k's half of the PSWs (``Rail_Opti_DualToR_DualPlane``); run with ``-g 32``;
- ``DCN+`` — not rail-optimized, one ToR per ``nics_per_aswitch`` GPUs (``No_Rail_Opti_SingleToR``);
  run with ``-g 128 -npa 32 -asn 4``.

Run ``python tools/simai_topo_fixtures.py`` from the repository root. Each fixture's first line
holds the counts the generator states (nodes, GPUs per server, NVSwitches, switches, links).
"""
from __future__ import annotations

import math
import pathlib

__all__ = ["spectrum_x", "hpn_dual_plane", "dcn_plus", "main"]

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "engine" / "data" / "simai_topo"
# The generator's defaults (analysis_template in gen_Topo_Template.py).
DEFAULTS = {"gpu_per_server": 8, "gpu_type": "H100", "nv_switch_per_server": 1, "nvlink_bw": "2880Gbps",
            "nv_latency": "0.000025ms", "latency": "0.0005ms", "bandwidth": "400Gbps", "nics_per_aswitch": 64,
            "psw_switch_num": 64, "ap_bandwidth": "400Gbps", "error_rate": 0}


def _write(p, asw_per_segment, planes, psw_planes, gpu_lines):
    """Header, switch-id line, GPU lines (``gpu_lines(gpu, asw lists)``), then ASW–PSW lines."""
    g, gps = p["gpu"], p["gpu_per_server"]
    servers = g // gps
    nvs = servers * p["nv_switch_per_server"]
    asw, psw = p["asw_switch_num"], p["psw_switch_num"]
    n = g + nvs + asw + psw
    ids = list(range(g, n))
    nv_ids, rest = ids[:nvs], ids[nvs:]
    asws = [rest[k * asw // planes:(k + 1) * asw // planes] for k in range(planes)]
    psw_ids = rest[asw:]
    psws = [psw_ids[k * psw // psw_planes:(k + 1) * psw // psw_planes] for k in range(psw_planes)]
    body = []
    for gpu in range(g):
        server = gpu // gps
        for j in range(p["nv_switch_per_server"]):
            body.append(f"{gpu} {nv_ids[server * p['nv_switch_per_server'] + j]} {p['nvlink_bw']} "
                        f"{p['nv_latency']} {p['error_rate']}")
        body += [f"{gpu} {s} {p['bandwidth']} {p['latency']} {p['error_rate']}" for s in gpu_lines(gpu, asws)]
    for k, plane in enumerate(asws):
        targets = psws[k % psw_planes]
        body += [f"{a} {s} {p['ap_bandwidth']} {p['latency']} {p['error_rate']}" for a in plane for s in targets]
    head = f"{n} {gps} {nvs} {asw + psw} {len(body)} {p['gpu_type']}"
    return "\n".join([head, "".join(f"{i} " for i in ids)] + body) + "\n"


def spectrum_x(**over) -> str:
    """Rail-optimized single ToR: GPU g on ASW ``segment × gps + g mod gps``."""
    p = {**DEFAULTS, **over}
    seg = p["gpu_per_server"] * p["nics_per_aswitch"]
    p["asw_switch_num"] = math.ceil(p["gpu"] / seg) * p["gpu_per_server"]
    return _write(p, p["gpu_per_server"], 1, 1,
                  lambda g, asws: [asws[0][(g // seg) * p["gpu_per_server"] + g % p["gpu_per_server"]]])


def hpn_dual_plane(**over) -> str:
    """Dual ToR, dual plane (AlibabaHPN defaults: 200 Gb/s NICs, 128 NICs per ASW, 120 PSWs)."""
    p = {**DEFAULTS, "bandwidth": "200Gbps", "nics_per_aswitch": 128, "psw_switch_num": 120, **over}
    gps = p["gpu_per_server"]
    seg = gps * p["nics_per_aswitch"]
    p["asw_switch_num"] = math.ceil(p["gpu"] / seg) * gps * 2
    return _write(p, gps * 2, 2, 2, lambda g, asws: [asws[k][(g // seg) * gps + g % gps] for k in (0, 1)])


def dcn_plus(**over) -> str:
    """Not rail-optimized, single ToR: ``nics_per_aswitch`` consecutive GPUs per ASW."""
    p = {**DEFAULTS, "psw_switch_num": 8, **over}
    p["asw_switch_num"] = math.ceil(p["gpu"] / p["nics_per_aswitch"])
    return _write(p, 1, 1, 1, lambda g, asws: [asws[0][g // p["nics_per_aswitch"]]])


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    files = {"Spectrum-X_16g_8gps_100Gbps_A100": spectrum_x(gpu=16, bandwidth="100Gbps", gpu_type="A100",
                                                            nvlink_bw="2400Gbps"),
             "AlibabaHPN_32g_8gps_DualToR_DualPlane_200Gbps_H100": hpn_dual_plane(gpu=32),
             "DCN+SingleToR_128g_8gps_400Gbps_H100": dcn_plus(gpu=128, nics_per_aswitch=32)}
    for name, text in files.items():
        (OUT / name).write_text(text, encoding="utf-8")
        print(name, text.split("\n", 1)[0])


if __name__ == "__main__":
    main()
