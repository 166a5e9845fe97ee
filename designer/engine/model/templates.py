"""Host templates from published server topologies, and user-saved templates.

Each built-in builder (:mod:`designer.engine.model.servers`, :mod:`designer.engine.model.racks`)
names its vendor sources in its docstring.

A template is a *host-local* spec: nodes and links with local ids (``gpu0``, ``pcie3``,
``gpu0-pcie0``). :func:`build_host` instantiates it for one host as a document fragment whose ids
are ``<host>/<local>`` and whose nodes sit in a ``host`` group. Built-in templates and user
templates (:func:`template_from_host`) share that spec format, ``fabricscope.host-template/1``,
which is plain JSON.

Modelling the CPU side (why it looks like this)
-----------------------------------------------
- ``cpu{s}`` (kind ``cpu``, ``attrs.role = "socket"``) is socket *s*: its internal fabric (mesh /
  Infinity Fabric), its memory controllers and its end of the inter-socket link. ``mem{s}``
  (kind ``memory``) is that socket's DRAM, joined by a DDR link of the socket's channel count,
  so GPU⇄host-memory traffic has a real path (``gpu → pcie → rc → cpu → mem``).
- A PCIe *root complex / host bridge* is a ``cpu``-kind node too: the socket node itself in the
  simple case (commodity server: every slot hangs off ``cpu0``), or separate ``rc{k}`` nodes
  (``attrs.role = "root_complex"``, ``attrs.socket``) when a socket has several host bridges —
  EPYC's four I/O-die quadrants (DGX A100, p5) and Sapphire Rapids' PCIe stacks (DGX H100).
  An ``rc``–``cpu`` link is the on-die fabric, given an explicit capacity
  (:data:`SOCKET_FABRIC_GBPS`) that is deliberately not a bottleneck.
- Path classes then follow from the ``cpu`` nodes a path crosses (see ``pathclass.py``): one →
  PHB, several of one socket → NODE, two sockets → SYS; ``pcie_switch`` nodes give PIX/PXB.
- A root complex may carry ``capacity_gbps`` (peer-to-peer throughput through it); only the
  commodity template sets one, and only when asked (``root_complex_gbps``).

Per template: see the builder docstrings (``_dgx_a100`` … in :mod:`.servers`). AMD platforms have no switch between
GPUs: one direct ``gpu``–``gpu`` link per pair (catalog family ``xgmi``), which routing and path
classes treat like a direct NVLink (``NV1``: one bonded link). NIC ``attrs``: ``rail`` (compute
NICs, 0-based, = index among compute NICs), ``port_gbps``, ``role`` (``compute``/``storage``),
``socket``, ``model``; GPU ``attrs``: ``model``, ``index``, ``socket``; CPU ``attrs``: ``socket``.
"""
from __future__ import annotations

import copy
import functools
import inspect
import json

from designer.engine.catalog import TECHS
from designer.engine.document import FORMAT, normalize, validate
from designer.engine.errors import InvalidTopology, Problem
from designer.engine.model.host_spec import SOCKET_FABRIC_GBPS, TEMPLATE_FORMAT, instantiate
from designer.engine.model.racks import RACK_BUILDERS, RACK_PARAM_HELP
from designer.engine.model.servers import SERVER_BUILDERS, SERVER_PARAM_HELP, XGMI_TECH_BY_MODEL
from designer.engine.model.servers_more import MORE_BUILDERS, MORE_PARAM_HELP

__all__ = ["TEMPLATES", "TEMPLATE_FORMAT", "MAX_TEMPLATE_COUNT", "SOCKET_FABRIC_GBPS", "build_host", "host_document",
           "template_spec", "resolved_spec", "template_from_host", "compute_nics", "XGMI_TECH_BY_MODEL"]

# Servers (servers.py) and rack-scale systems (several hosts in one NVLink domain, GB200 NVL72: racks.py).
# More servers (GH200, H800/H20, Google Cloud and Azure machines: servers_more.py).
_BUILDERS = {**SERVER_BUILDERS, **RACK_BUILDERS, **MORE_BUILDERS}
_PARAM_HELP = {**SERVER_PARAM_HELP, **RACK_PARAM_HELP, **MORE_PARAM_HELP}


def _describe(name: str, fn) -> dict:
    params = {p.name: {"default": p.default, "help": _PARAM_HELP.get(p.name, "")}
              for p in inspect.signature(fn).parameters.values()}
    doc = (fn.__doc__ or "").strip()
    return {"name": name, "description": doc.split("\n")[0], "details": doc, "params": params}


# name -> {"name", "description", "details", "params": {param: {"default", "help"}}}
TEMPLATES: dict[str, dict] = {name: _describe(name, fn) for name, fn in _BUILDERS.items()}


# ============================================================================ specs and instances
# Largest count parameter (gpus, nics, nvme) of a built-in template: far above any real server,
# and it keeps one host spec small (parameters arrive from API requests).
MAX_TEMPLATE_COUNT = 1024


def _check_params(name: str, params: dict) -> None:
    known = TEMPLATES[name]["params"]
    problems = []
    for key, value in params.items():
        if key not in known:
            message = f"unknown parameter of template {name!r} (known: {', '.join(known) or 'none'})"
        else:
            message = _param_problem(key, value, known[key]["default"])
        if message:
            problems.append(Problem(f"params.{key}", message))
    for key, default, allowed, message in _CHOICES:
        if params.get(key, default) not in allowed:
            problems.append(Problem(f"params.{key}", message))
    if problems:
        raise InvalidTopology(f"invalid parameters for template {name!r}", problems)


# Parameters with a few allowed values: (name, default, allowed values, problem).
_CHOICES = (("sockets", 1, (1, 2), "must be 1 or 2"),
            ("pcie_gen", 4, (3, 4, 5, 6), "must be 3, 4, 5 or 6"))


def _param_problem(key: str, value, default) -> str | None:
    """What is wrong with ``value`` for a parameter whose default is ``default`` (None: nothing).
    A numeric parameter (a number default, or a ``*_gbps`` one defaulting to None) takes a
    non-negative number or None; a count (an int default) a whole number up to
    :data:`MAX_TEMPLATE_COUNT`."""
    numeric = isinstance(default, (int, float)) or default is None and key.endswith("_gbps")
    if numeric and value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                          or value < 0):
        return f"must be a non-negative number, got {value!r}"
    if not isinstance(default, int) or isinstance(default, bool):
        return None
    if isinstance(value, float) and not value.is_integer():
        return f"must be an integer, got {value!r}"
    if isinstance(value, (int, float)) and value > MAX_TEMPLATE_COUNT:
        return f"at most {MAX_TEMPLATE_COUNT}, got {value!r}"
    return None


@functools.lru_cache(maxsize=64)
def _builtin_spec(name: str, frozen_params: str) -> dict:
    params = json.loads(frozen_params)
    for key, value in params.items():  # JSON keeps 8.0 as float; the builders want ints
        if isinstance(value, float) and value.is_integer() and isinstance(
                TEMPLATES[name]["params"][key]["default"], int):
            params[key] = int(value)
    return _BUILDERS[name](**params)


def template_spec(template: str | dict, **params) -> dict:
    """The host-local spec of a template (a copy; JSON-serializable).

    Parameters
    ----------
    template : str or dict
        A built-in name (see :data:`TEMPLATES`) or a user template spec.
    **params
        Parameters of a built-in template.

    Raises
    ------
    InvalidTopology
        Unknown template, unknown or bad parameters, or a malformed user template.
    """
    return copy.deepcopy(resolved_spec(template, params))


def resolved_spec(template: str | dict, params: dict) -> dict:
    """:func:`template_spec` without the copy: shared with the cache of built-in specs, so
    read-only (the fabric generator instantiates it once per host)."""
    if isinstance(template, dict):
        if params:
            raise InvalidTopology("a user template takes no parameters",
                                  [Problem("params", "a user template takes no parameters")])
        _check_user_spec(template)
        return template
    if not isinstance(template, str) or template not in _BUILDERS:
        raise InvalidTopology(f"unknown template {template!r} (choose from {', '.join(_BUILDERS)})",
                              [Problem("template", f"unknown template {template!r}")])
    _check_params(template, params)
    return _builtin_spec(template, json.dumps(params, sort_keys=True))


def _check_user_spec(spec: dict) -> None:
    problems = []
    if spec.get("format") != TEMPLATE_FORMAT:
        problems.append(Problem("template.format", f'expected "{TEMPLATE_FORMAT}"'))
    nodes, links = spec.get("nodes"), spec.get("links")
    if not isinstance(nodes, list) or not isinstance(links, list) or not all(
            isinstance(x, dict) for x in nodes + links):
        problems.append(Problem("template", "nodes and links must be lists of objects"))
    else:
        fragment = instantiate(spec, "h", None)
        doc = {"format": FORMAT, "groups": fragment["groups"], "nodes": fragment["nodes"],
               "links": fragment["links"]}
        problems += [Problem(f"template.{p.path}", p.message.replace('"h/', '"'))
                     for p in validate(doc)]
    if problems:
        raise InvalidTopology("invalid host template", problems)


def build_host(template: str | dict, host_id: str, *, parent: str | None = None, **params) -> dict:
    """Document fragment of one host built from a template.

    Parameters
    ----------
    template : str or dict
        Built-in template name (``dgx-a100``, ``dgx-h100``, ``dgx-h200``, ``hgx-h200``,
        ``dgx-b200``, ``hgx-b300``, ``aws-p4d``, ``aws-p5``, ``aws-p5e``, ``aws-p5en``,
        ``amd-mi300x``, ``amd-mi325x``, ``pcie-commodity``, ``gb200-nvl72``, ``gh200``, ``hgx-h800``,
        ``hgx-h20``, ``gcp-a3-high``, ``gcp-a3-mega``, ``gcp-a3-ultra``, ``gcp-a4``,
        ``azure-nd-h100-v5``, ``azure-nd-h200-v5``, ``azure-nd-gb200-v6``) or a user template spec
        (:func:`template_from_host`).
    host_id : str
        Id of the host group; node ids become ``<host_id>/<local>``.
    parent : str, optional
        Parent group (e.g. a rack) of the host group.
    **params
        Template parameters (see ``TEMPLATES[name]["params"]``).

    Returns
    -------
    dict
        ``{"groups": [host group], "nodes": [...], "links": [...]}``.

    Raises
    ------
    InvalidTopology
        Unknown template or parameter, or a malformed user template.
    """
    return instantiate(resolved_spec(template, params), host_id, parent)


def host_document(template: str | dict, *, host_id: str = "h0", name: str | None = None,
                  **params) -> dict:
    """A whole ``fabricscope.topology/1`` document holding one host (not yet normalized)."""
    fragment = build_host(template, host_id, **params)
    label = template if isinstance(template, str) else template.get("name", "host")
    return {"format": FORMAT, "name": name or str(label), **fragment}


def compute_nics(spec: dict) -> list[dict]:
    """The spec's compute NIC nodes ordered by rail (``attrs.role == "compute"``)."""
    nics = [n for n in spec["nodes"] if n.get("kind") == "nic"
            and (n.get("attrs") or {}).get("role", "compute") == "compute"]
    return sorted(nics, key=lambda n: (n["attrs"].get("rail", 1 << 30), spec["nodes"].index(n)))


def template_from_host(doc, host_id: str, name: str, description: str = "") -> dict:
    """Save one host of a document as a user template spec.

    Parameters
    ----------
    doc : dict, str or path
        A topology document containing the host group ``host_id``.
    host_id : str
        The host to copy; its nodes (in that group or its subgroups) and the links between them.
    name, description : str
        Name and description of the new template.

    Returns
    -------
    dict
        A JSON-serializable ``fabricscope.host-template/1`` spec; instantiate it with
        ``build_host(spec, "h7")``.
    """
    doc = normalize(doc)
    groups = {g["id"]: g for g in doc["groups"]}
    if groups.get(host_id, {}).get("kind") != "host":
        raise InvalidTopology(f'no host group "{host_id}"', [Problem("host", f'no host group "{host_id}"')])
    inside = {n["id"] for n in doc["nodes"] if _within(n.get("group"), host_id, groups)}
    prefix = f"{host_id}/"
    local = (lambda x: x[len(prefix):] if x.startswith(prefix) else x)
    spec = {"format": TEMPLATE_FORMAT, "name": name, "description": description, "nodes": [], "links": []}
    for n in doc["nodes"]:
        if n["id"] in inside:
            node = {"local": local(n["id"]), "kind": n["kind"], "attrs": copy.deepcopy(n.get("attrs") or {})}
            if n.get("capacity_gbps") is not None:
                node["capacity_gbps"] = n["capacity_gbps"]
            spec["nodes"].append(node)
    for l in doc["links"]:
        if l["a"] in inside and l["b"] in inside:
            spec["links"].append(_local_link(l, local))
    return spec


def _local_link(l: dict, local) -> dict:
    link = {"local": local(l["id"]), "a": local(l["a"]), "b": local(l["b"])}
    tech = TECHS.get(l.get("tech")) if l.get("tech") else None
    if tech is not None:
        link["tech"] = tech.name
    if tech is None or l.get("capacity_basis") == "explicit":
        link["capacity_gbps"] = l["capacity_gbps"]
    elif l.get("capacity_basis") == "raw":
        link["capacity_basis"] = "raw"
    if tech is None or l.get("latency_ns") != tech.latency_ns:
        link["latency_ns"] = l.get("latency_ns", 0.0)
    return link


def _within(group: str | None, host_id: str, groups: dict) -> bool:
    seen = set()
    while group is not None and group not in seen:
        if group == host_id:
            return True
        seen.add(group)
        group = groups.get(group, {}).get("parent")
    return False
