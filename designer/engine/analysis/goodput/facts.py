"""Default failure rates of a training cluster's parts, fitted to a published interruption table.

Source: "The Llama 3 Herd of Models" (Llama Team, AI @ Meta, 2024), Section 3.3.4 and Table 5,
"Root-cause categorization of unexpected interruptions during a 54-day period of Llama 3 405B
pre-training": 419 unexpected interruptions on 16,384 H100 GPUs (Section 3.3.1: Grand Teton
servers of 8 GPUs, one 400 Gb/s NIC per GPU on the RoCE fabric). Each row of the table is
mapped to one of Fabricscope's failure classes; a class's annualized failure rate (AFR, failures
per unit-year) is ``count / units × 365 / 54``, with the units of the Llama 3 cluster below.

What the table does not separate is stated, not invented:

- NVLink / NVSwitch failures are counted under "Faulty GPU" in the paper (Section 3.3.4), so the
  ``nvswitch`` class defaults to 0 and the GPU class carries them;
- whole-switch failures are inside "Network Switch/Cable"; the table's 35 are fitted to the
  host⇄switch cables (each with its transceivers and the two ports it plugs into), the
  elements whose failure interrupts a job. A switch⇄switch cable of the same kind fails at the
  same per-cable rate, but ECMP routes around it: it *degrades* the job (``fabric_link``);
- partial failures (a straggler GPU, a NIC at half rate, an NVLink domain with some paths down)
  have no published rate: they default to 0 and are set per design.

Repair (replace) times and the restart overhead have no figure in these sources; the defaults
(``REPAIR_HOURS``) are labelled as assumptions and are meant to be edited per design.

Meta's "Revisiting Reliability in Large-Scale Machine Learning Research Clusters" (HPCA 2025)
reports job mean time to failure falling as 1/N with the job's GPU count N — what per-unit rates
summed over a job's units give (``job_rate = Σ units × AFR``).
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LLAMA3_TABLE5", "LLAMA3_RUN", "FailureClass", "CLASSES", "CLASS_NAMES",
           "REPAIR_HOURS", "fitted_afr", "DEFAULT_RESTART_OVERHEAD_S", "BYTES_PER_PARAMETER"]

#: Table 5 of the Llama 3 paper: (component, category, interruptions, Fabricscope class).
LLAMA3_TABLE5: tuple[tuple[str, str, int, str], ...] = (
    ("Faulty GPU", "GPU", 148, "gpu"),
    ("GPU HBM3 Memory", "GPU", 72, "hbm"),
    ("Software Bug", "Dependency", 54, "software"),
    ("Network Switch/Cable", "Network", 35, "host_link"),
    ("Host Maintenance", "Unplanned Maintenance", 32, "host"),
    ("GPU SRAM Memory", "GPU", 19, "gpu"),
    ("GPU System Processor", "GPU", 17, "gpu"),
    ("NIC", "Host", 7, "nic"),
    ("NCCL Watchdog Timeouts", "Unknown", 7, "software"),
    ("Silent Data Corruption", "GPU", 6, "gpu"),
    ("GPU Thermal Interface + Sensor", "GPU", 6, "gpu"),
    ("SSD", "Host", 3, "host"),
    ("Power Supply", "Host", 3, "psu"),
    ("Server Chassis", "Host", 2, "host"),
    ("IO Expansion Board", "Host", 2, "host"),
    ("Dependency", "Dependency", 2, "software"),
    ("CPU", "Host", 2, "host"),
    ("System Memory", "Host", 2, "host"),
)

#: The Llama 3 405B run the table covers (Sections 3.3.1 and 3.3.4): days, and units per class
#: unit kind (one NIC and one host⇄leaf cable per GPU; 8 GPUs per server).
LLAMA3_RUN = {"days": 54, "interruptions": 419, "gpu": 16_384, "host": 2_048, "nic": 16_384,
              "host_link": 16_384}


@dataclass(frozen=True)
class FailureClass:
    """One class of failure: what a unit is, what its failure does, and its default rate.

    ``unit``: what is counted in the design (``gpu``, ``host``, ``nic``, ``nvswitch``,
    ``host_link``, ``fabric_link``, ``leaf``, ``spine``, ``core``); ``effect``: ``interrupt``
    (breaks a communicator: the job restarts from its last checkpoint) or ``degrade`` (the job
    runs slower until the part is repaired); ``afr``: failures per unit-year; ``source``: where
    the rate comes from.
    """

    name: str
    unit: str
    effect: str
    afr: float
    source: str


def fitted_afr(cls: str) -> float:
    """Failures per unit-year of ``cls`` fitted to Table 5: ``count / units × 365 / days``.

    Parameters
    ----------
    cls : str
        A class named in :data:`LLAMA3_TABLE5` (``gpu``, ``hbm``, ``nic``, ``host_link``,
        ``host``, ``psu``, ``software``).

    Returns
    -------
    float
        Failures per unit per year (the unit of the class, counted as in :data:`LLAMA3_RUN`).
    """
    count = sum(row[2] for row in LLAMA3_TABLE5 if row[3] == cls)
    unit = _FIT_UNIT[cls]
    return count / LLAMA3_RUN[unit] * 365.0 / LLAMA3_RUN["days"]


# The Llama 3 unit a class's count is divided by (HBM and software scale with the GPUs).
_FIT_UNIT = {"gpu": "gpu", "hbm": "gpu", "software": "gpu", "nic": "nic", "host_link": "host_link",
             "host": "host", "psu": "host"}
_TABLE = "Llama 3 Herd of Models, Table 5 (fitted: count / units × 365 / 54)"
_NONE = "no published rate: 0 until set per design"


def _classes() -> dict[str, FailureClass]:
    rows = [("gpu", "gpu", "interrupt", _TABLE), ("hbm", "gpu", "interrupt", _TABLE),
            ("nvswitch", "nvswitch", "interrupt", "counted under Faulty GPU in Table 5: " + _NONE),
            ("nic", "nic", "interrupt", _TABLE), ("host_link", "host_link", "interrupt", _TABLE),
            ("fabric_link", "fabric_link", "degrade", "per-cable rate of host_link (Table 5)"),
            ("leaf", "leaf", "interrupt", "inside Network Switch/Cable in Table 5: " + _NONE),
            ("spine", "spine", "degrade", "inside Network Switch/Cable in Table 5: " + _NONE),
            ("core", "core", "degrade", "inside Network Switch/Cable in Table 5: " + _NONE),
            ("psu", "host", "interrupt", _TABLE), ("host", "host", "interrupt", _TABLE),
            ("software", "gpu", "interrupt", _TABLE),
            ("gpu_straggler", "gpu", "degrade", _NONE), ("nic_half_rate", "nic", "degrade", _NONE),
            ("nvlink_partial", "nvswitch", "degrade", _NONE)]
    out = {}
    for name, unit, effect, source in rows:
        fit = name if name in _FIT_UNIT else ("host_link" if name == "fabric_link" else None)
        out[name] = FailureClass(name, unit, effect, fitted_afr(fit) if fit else 0.0, source)
    return out


#: Every failure class, in display order.
CLASSES: dict[str, FailureClass] = _classes()
CLASS_NAMES = tuple(CLASSES)

#: Hours from a failure to the part back in service (assumptions: no figure in the sources;
#: a GPU, HBM, NVSwitch or host fault takes the server out for a swap, a cable or NIC is a
#: field replacement, software is a restart).
REPAIR_HOURS = {"gpu": 72.0, "hbm": 72.0, "nvswitch": 72.0, "nic": 24.0, "host_link": 8.0,
                "fabric_link": 8.0, "leaf": 24.0, "spine": 24.0, "core": 24.0, "psu": 24.0,
                "host": 48.0, "software": 1.0, "gpu_straggler": 24.0, "nic_half_rate": 24.0,
                "nvlink_partial": 72.0}

#: Seconds from an interruption to the job running again, before reading the checkpoint back
#: (assumption: detection, drain and rescheduling on spare nodes).
DEFAULT_RESTART_OVERHEAD_S = 600.0

#: Checkpoint bytes per parameter of mixed-precision Adam: bf16 weights (2) + fp32 master
#: weights, momentum and variance (12) — "ZeRO: Memory Optimizations Toward Training Trillion
#: Parameter Models" (Rajbhandari et al., SC 2020), Section 3.1 (the 16Ψ of model states less
#: the 2Ψ of fp16 gradients, which a checkpoint does not keep).
BYTES_PER_PARAMETER = 14.0
