"""The engine's reference data the pages and the API build their choices and limits from:
templates, fabrics, switch models and link speeds, import formats, sweep classes, the catalog,
and the engine's own size limits.

Unlike the other bridge modules this one imports engine modules at its top (form and serializer
fields are declared with these values when their modules load), so ``designer.bridge`` does not
import it: ask for ``designer.bridge.facts`` where the values are needed.
"""
from __future__ import annotations

from designer.bridge.common import json_safe
from designer.engine.catalog import SWITCH_MODELS, SWITCH_PORT_TECH
from designer.engine.errors import EngineError
from designer.engine.io import FORMATS as IMPORT_FORMATS
from designer.engine.model.fabrics import FABRICS, MAX_HOSTS, MAX_PLAN_HOSTS
from designer.engine.model.hop_latency import DEFAULTS as _LATENCY_DEFAULTS
from designer.engine.model.hop_latency import INITIATORS as _INITIATORS
from designer.engine.model.templates import TEMPLATES

__all__ = [
    "MAX_BUILD_HOSTS", "MAX_PREVIEW_HOSTS", "FABRICS", "SWITCH_MODEL_IDS", "TEMPLATE_NAMES", "IMPORT_FORMATS",
    "switch_choices", "nic_speed_choices", "template_choices", "template_details", "catalog",
    "sweep_classes", "engine_limits", "host_elements", "link_capacity_gbps",
    "LATENCY_INITIATORS", "LATENCY_CONSTANTS",
]

#: Hosts one build request may make, pages and API alike (2,048 eight-GPU hosts = 16,384 GPUs).
MAX_BUILD_HOSTS: int = MAX_HOSTS
#: Hosts a BOM preview may count (no document is built: ``engine.model.bom.plan_bom``).
MAX_PREVIEW_HOSTS: int = MAX_PLAN_HOSTS
#: Switch model ids of the catalog, sorted.
SWITCH_MODEL_IDS: list[str] = sorted(SWITCH_MODELS)
#: Host template names, sorted.
TEMPLATE_NAMES: list[str] = sorted(TEMPLATES)
#: Who starts a transfer in the latency view (docs/FORMATS.md, Scenario ``latency``).
LATENCY_INITIATORS: tuple[str, ...] = tuple(_INITIATORS)
#: The latency model's constants (ns) a scenario's ``latency.overrides`` may replace, sorted.
LATENCY_CONSTANTS: list[str] = sorted(_LATENCY_DEFAULTS)


def switch_choices() -> list[tuple[str, str]]:
    """``(id, "id — name")`` of every catalog switch model, in catalog order."""
    return [(m.id, f"{m.id} — {m.name}") for m in SWITCH_MODELS.values()]


def nic_speed_choices() -> list[tuple[str, str]]:
    """``(link tech, "tech (400 Gb/s ethernet)")`` of every switch-port speed."""
    return [(t, f"{t} ({g:g} Gb/s {f})") for (f, g), t in SWITCH_PORT_TECH.items()]


def template_choices() -> list[tuple[str, str]]:
    """(name, one-line description) of every host template, sorted by name."""
    return [(name, TEMPLATES[name]["description"]) for name in TEMPLATE_NAMES]


def template_details() -> dict[str, dict]:
    """Built-in host templates: name -> {name, description, details, params}."""
    return json_safe(TEMPLATES)


def catalog() -> dict:
    """The link/device catalog (techs, capacities in Gbit/s, latencies in ns) as plain JSON."""
    from designer.engine.catalog import catalog_as_dict

    return json_safe(catalog_as_dict())


def sweep_classes() -> tuple[str, ...]:
    """The failure classes a sweep can go over (``nic``, ``leaf-spine`` …)."""
    from designer.engine.analysis.whatif import SWEEP_CLASSES  # here: whatif loads the solver

    return tuple(SWEEP_CLASSES)


def engine_limits() -> dict:
    """The engine's own limits: ``document`` (the topology document's) and ``max_flows``."""
    from designer.engine.document import LIMITS
    from designer.engine.traffic.workloads import MAX_FLOWS

    return {"document": dict(LIMITS), "max_flows": MAX_FLOWS}


def host_elements(template, params: dict | None = None) -> int:
    """Nodes + links of one host of ``template`` (a name or a spec dict) with ``params``; 0 when
    the engine refuses the spec (the build then reports the error itself, located)."""
    from designer.engine.model.templates import template_spec

    try:
        spec = template_spec(template, **(params or {}))
    except (EngineError, TypeError, ValueError):
        return 0
    return len(spec.get("nodes") or ()) + len(spec.get("links") or ())


def link_capacity_gbps(tech) -> float | None:
    """Default (effective) capacity of link technology ``tech`` in Gb/s, ``None`` when unknown."""
    from designer.engine.catalog import TECHS

    info = TECHS.get(tech)
    return float(info.effective_gbps) if info else None
