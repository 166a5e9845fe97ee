"""Physical facts for a floor plan and a purchase: cables and optics, rack space, prices, power.

Every figure is a *default, editable*: a design's plan request overrides any of them
(``prices``/``power`` keyed as :func:`price_key` says; docs/FORMATS.md, "Physical plan").

Media (cables and optics)
-------------------------
One :class:`Medium` per kind and port rate (100G and 200G: DAC, AOC, SR, DR only; 400G and
800G: every kind). A cable run has two *ends*; an end's watts and list
price are the figures of one transceiver (optics) or half a cable assembly (DAC, ACC, AEC, AOC),
so a run costs ``end_a + end_b + usd_per_m × length``. At a breakout (a twin-port 800G cage
feeding two 400G NICs) the cage's end is shared by its legs: each leg carries half of it.

Power and reach (sources, per end):

- DAC, passive copper, "near zero power" (only an EEPROM): 0.1 W is charged so a DAC is not a
  free medium. Reach 3 m: NVIDIA MCP7Y00 twin-port 800G → 2 × 400G splitter, 1–3 m
  (https://docs.nvidia.com/networking/display/mcp7y00nxxx800pub).
- ACC (active copper, re-driver), 4–5 m: the same page ("Active Copper Cables (ACC) are also
  available for lengths of 4 and 5-meters", https://docs.nvidia.com/networking/display/
  mcp7y50nxxx800pub/use+cases). Watts per end: typical figure, not in the stored pages.
- AEC (active electrical cable, retimer), ~7 m: typical figure, not in the stored pages.
- AOC (active optical cable), 30 m at 400G/800G: typical figure, not in the stored pages.
- SR (multimode, 50 m): 400G MMA4Z00-NS400, 8 W typical (https://docs.nvidia.com/networking/
  display/MMA4Z00NS400T/Connectivity+Scenarios); 800G twin-port MMA4Z00-NS, 15 W
  (https://docs.nvidia.com/networking/display/800gmma4z00nst/overview).
- DR (single-mode, 500 m; 400GBASE-DR4, IEEE 802.3bs): 400G MMS4X00-NS400, 9 W
  (https://docs.nvidia.com/networking/display/mms4x00ns400/overview); 800G twin-port, 17 W
  (https://docs.nvidia.com/networking/display/800gmms4x00nst/overview).
- FR (single-mode, 2 km): 800G twin-port 2 × FR4 MMS4X50-NM (https://docs.nvidia.com/
  mms4x50-nm-800gbps-twin-port-osfp-2xfr4-2x400gb-s-single-mode-2km.pdf); watts assumed as DR.
- LPO (linear pluggable, no DSP, DR reach): about half a DSP module's power (LPO MSA,
  https://www.lpo-msa.org/); typical figure. Needs linear-drive capable hosts: opt-in.
- CPO (co-packaged optics, switch side): under 6 W per 800G port against 15–16 W for a
  pluggable (https://mapyourtech.com/co-packaged-optics-architecture-status-and-the-path-to-1-6t-switches);
  needs a CPO switch: opt-in.

Prices are **estimates** (no vendor publishes list prices for these parts; street prices vary
by a factor of two with volume): planning figures to be replaced by the user's own price list.

Devices
-------
Switch rack units and list-price estimates per :data:`designer.engine.catalog.SWITCH_MODELS`
id (their watts stay there); NIC prices and watts; servers (host templates) with rack units,
maximum power and a price estimate. A template without an entry gets :data:`GENERIC_SERVER`
scaled by its GPUs, and the plan says so.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

__all__ = ["Medium", "MEDIA", "MEDIUM_KINDS", "DEFAULT_MEDIA", "SwitchPhysical", "SWITCH_PHYSICAL",
           "NIC_PHYSICAL", "ServerPhysical", "SERVERS", "GENERIC_SERVER", "STORAGE_SERVER",
           "RACK_DEFAULTS", "ROW_DEFAULTS", "SPACING_DEFAULTS", "LIMITS", "price_key", "medium"]

_EST = "estimate (no published list price; replace with your quote)"
_TYPICAL = " (typical figure; not found in the stored pages, check the datasheet)"


@dataclass(frozen=True)
class Medium:
    """One cable or optic kind at one port rate.

    Attributes
    ----------
    kind : str
        ``dac``, ``acc``, ``aec``, ``aoc``, ``sr``, ``dr``, ``fr``, ``lpo`` or ``cpo``.
    rate_gbps : float
        Port rate of one end, Gb/s (400 or 800).
    reach_m : float
        Longest run, m.
    end_w : float
        Watts of one end (a transceiver, or half an active cable), W.
    end_usd : float
        Price of one end, US$ (estimate).
    usd_per_m : float
        Price of the fibre or copper per metre of run, US$/m (0 when an assembly's price holds it).
    netbox_type : str
        NetBox cable ``type`` (``dac-passive``, ``aoc``, ``mmf``, ``smf``, …).
    source : str
        Where reach and watts come from.
    default : str
        Always ``"editable"``: overridable per design.
    """

    kind: str
    rate_gbps: float
    reach_m: float
    end_w: float
    end_usd: float
    usd_per_m: float
    netbox_type: str
    source: str
    default: str = "editable"

    def as_dict(self) -> dict:
        return {**asdict(self), "price_source": _EST}


_DAC = "https://docs.nvidia.com/networking/display/mcp7y00nxxx800pub (near-zero power, 1-3 m)"
_ACC = "https://docs.nvidia.com/networking/display/mcp7y50nxxx800pub/use+cases (ACC 4-5 m)" + _TYPICAL
_SR4 = "https://docs.nvidia.com/networking/display/MMA4Z00NS400T/Connectivity+Scenarios (8 W typ., 50 m)"
_SR8 = "https://docs.nvidia.com/networking/display/800gmma4z00nst/overview (15 W, 50 m)"
_DR4 = "https://docs.nvidia.com/networking/display/mms4x00ns400/overview (9 W); 500 m: IEEE 802.3bs"
_DR8 = "https://docs.nvidia.com/networking/display/800gmms4x00nst/overview (17 W); 500 m: IEEE 802.3bs"
_FR = ("https://docs.nvidia.com/mms4x50-nm-800gbps-twin-port-osfp-2xfr4-2x400gb-s-single-mode-2km.pdf "
       "(2 km); watts as DR" + _TYPICAL)
_LPO = "https://www.lpo-msa.org/ (no DSP: about half a DSP module's power)" + _TYPICAL
_CPO = ("https://mapyourtech.com/co-packaged-optics-architecture-status-and-the-path-to-1-6t-switches "
        "(under 6 W per 800G port)")

_IEEE_100 = " reach: IEEE 802.3bj/bm (100GBASE-CR4 5 m, SR4 100 m OM4), 802.3cd (100GBASE-DR 500 m)"
_IEEE_200 = " reach: IEEE 802.3cd (200GBASE-CR4 3 m, SR4 100 m OM4), 802.3bs (200GBASE-DR4 500 m)"
MEDIA: dict[tuple[str, float], Medium] = {(m.kind, m.rate_gbps): m for m in (
    # 100G (QSFP28) and 200G (QSFP56): older NICs (ConnectX-6, EFA) and breakout legs.
    Medium("dac", 100.0, 5.0, 0.1, 50.0, 0.0, "dac-passive", "passive copper, near-zero power;" + _IEEE_100),
    Medium("aoc", 100.0, 30.0, 2.5, 150.0, 0.0, "aoc", "active optical cable" + _TYPICAL),
    Medium("sr", 100.0, 100.0, 2.5, 150.0, 3.0, "mmf-om4", "QSFP28 SR4 class" + _TYPICAL + ";" + _IEEE_100),
    Medium("dr", 100.0, 500.0, 3.5, 250.0, 2.0, "smf-os2", "QSFP28 DR class" + _TYPICAL + ";" + _IEEE_100),
    Medium("dac", 200.0, 3.0, 0.1, 80.0, 0.0, "dac-passive", "passive copper, near-zero power;" + _IEEE_200),
    Medium("aoc", 200.0, 30.0, 5.0, 300.0, 0.0, "aoc", "active optical cable" + _TYPICAL),
    Medium("sr", 200.0, 100.0, 5.0, 400.0, 3.0, "mmf-om4", "QSFP56 SR4 class" + _TYPICAL + ";" + _IEEE_200),
    Medium("dr", 200.0, 500.0, 6.0, 550.0, 2.0, "smf-os2", "QSFP56 DR4 class" + _TYPICAL + ";" + _IEEE_200),
    # 400G (OSFP / QSFP112) and 800G (twin-port OSFP).
    Medium("dac", 400.0, 3.0, 0.1, 100.0, 0.0, "dac-passive", _DAC),
    Medium("dac", 800.0, 3.0, 0.1, 200.0, 0.0, "dac-passive", _DAC),
    Medium("acc", 400.0, 5.0, 1.5, 200.0, 0.0, "dac-active", _ACC),
    Medium("acc", 800.0, 5.0, 2.5, 350.0, 0.0, "dac-active", _ACC),
    Medium("aec", 400.0, 7.0, 6.0, 300.0, 0.0, "dac-active", "active electrical cable, retimed" + _TYPICAL),
    Medium("aec", 800.0, 7.0, 10.0, 500.0, 0.0, "dac-active", "active electrical cable, retimed" + _TYPICAL),
    Medium("aoc", 400.0, 30.0, 8.0, 450.0, 0.0, "aoc", "active optical cable" + _TYPICAL),
    Medium("aoc", 800.0, 30.0, 15.0, 700.0, 0.0, "aoc", "active optical cable" + _TYPICAL),
    Medium("sr", 400.0, 50.0, 8.0, 700.0, 3.0, "mmf-om4", _SR4),
    Medium("sr", 800.0, 50.0, 15.0, 1100.0, 3.0, "mmf-om4", _SR8),
    Medium("dr", 400.0, 500.0, 9.0, 900.0, 2.0, "smf-os2", _DR4),
    Medium("dr", 800.0, 500.0, 17.0, 1300.0, 2.0, "smf-os2", _DR8),
    Medium("fr", 400.0, 2000.0, 9.0, 1100.0, 2.0, "smf-os2", _FR),
    Medium("fr", 800.0, 2000.0, 17.0, 1700.0, 2.0, "smf-os2", _FR),
    Medium("lpo", 400.0, 500.0, 5.0, 700.0, 2.0, "smf-os2", _LPO),
    Medium("lpo", 800.0, 500.0, 9.0, 1000.0, 2.0, "smf-os2", _LPO),
    Medium("cpo", 400.0, 500.0, 3.0, 400.0, 2.0, "smf-os2", _CPO),
    Medium("cpo", 800.0, 500.0, 6.0, 700.0, 2.0, "smf-os2", _CPO),
)}
MEDIUM_KINDS = ("dac", "acc", "aec", "aoc", "sr", "dr", "fr", "lpo", "cpo")
# LPO needs linear-drive capable ends and CPO a co-packaged switch: chosen only when asked for.
DEFAULT_MEDIA = ("dac", "acc", "aec", "aoc", "sr", "dr", "fr")


def medium(kind: str, rate_gbps: float) -> Medium | None:
    """The catalog medium of ``kind`` at ``rate_gbps``, or None."""
    return MEDIA.get((kind, float(rate_gbps)))


@dataclass(frozen=True)
class SwitchPhysical:
    """Rack units and a price estimate of a :data:`designer.engine.catalog.SWITCH_MODELS` id."""

    units: int
    usd: float
    source: str
    default: str = "editable"


SWITCH_PHYSICAL: dict[str, SwitchPhysical] = {
    # SN5600: 2U, 64 x 800G OSFP (https://docs.nvidia.com/networking/display/sn5000/specifications)
    "eth-51t2": SwitchPhysical(2, 60_000.0, "SN5600 class, 2U" + _TYPICAL + "; price " + _EST),
    # SN4700: 1U, 32 x 400G / 64 x 200G (https://www.nvidia.com/en-us/networking/ethernet-switching/spectrum-sn4000/)
    "eth-25t6": SwitchPhysical(1, 30_000.0, "SN4700 class, 1U" + _TYPICAL + "; price " + _EST),
    # QM9700: 1U, 32 OSFP cages (https://docs.nvidia.com/networking/display/QM97X0PUB/Specifications)
    "ib-ndr-64": SwitchPhysical(1, 35_000.0, "QM9700 class, 1U" + _TYPICAL + "; price " + _EST),
    # Q3400-RA: 4U, 144 x 800G (https://www.nvidia.com/en-us/networking/products/infiniband/quantum-x800/)
    "ib-xdr-144": SwitchPhysical(4, 120_000.0, "Q3400 class, 4U" + _TYPICAL + "; price " + _EST),
}

# NIC model -> (watts, US$): only charged for servers whose price does not include their NICs.
NIC_PHYSICAL: dict[str, dict] = {
    "ConnectX-6": {"power_w": 20.0, "usd": 1_000.0, "source": "ConnectX-6 class" + _TYPICAL + "; price " + _EST},
    "ConnectX-7": {"power_w": 25.0, "usd": 1_800.0, "source": "ConnectX-7 class" + _TYPICAL + "; price " + _EST},
    "ConnectX-8": {"power_w": 35.0, "usd": 2_500.0, "source": "ConnectX-8 class" + _TYPICAL + "; price " + _EST},
    "BlueField-3": {"power_w": 75.0, "usd": 3_000.0, "source": "BlueField-3 class" + _TYPICAL + "; price " + _EST},
}


@dataclass(frozen=True)
class ServerPhysical:
    """A server (host template) as racked: rack units, maximum power (W), price (US$), whether
    the price holds its NICs, and the source."""

    units: int
    power_w: float
    usd: float
    nics_included: bool
    source: str
    default: str = "editable"


_DGX_H100 = "DGX H100/H200 user guide: 8U, ~10.2 kW max (https://docs.nvidia.com/dgx/dgxh100-user-guide/)"
SERVERS: dict[str, ServerPhysical] = {
    "dgx-h100": ServerPhysical(8, 10_200.0, 350_000.0, True, _DGX_H100 + "; price " + _EST),
    "dgx-h200": ServerPhysical(8, 10_200.0, 400_000.0, True, _DGX_H100 + "; price " + _EST),
    "dgx-a100": ServerPhysical(6, 6_500.0, 200_000.0, True, "DGX A100 user guide: 6U, 6.5 kW max "
                               "(https://docs.nvidia.com/dgx/dgxa100-user-guide/); price " + _EST),
    "dgx-b200": ServerPhysical(10, 14_300.0, 500_000.0, True, "DGX B200 user guide: 10U, ~14.3 kW max "
                               "(https://docs.nvidia.com/dgx/dgxb200-user-guide/); price " + _EST),
    # A GB200 NVL72 is a rack of its own: 18 compute + 9 switch trays, ~120 kW
    # (https://www.nvidia.com/en-us/data-center/gb200-nvl72/, liquid cooled rack-scale system).
    "gb200-nvl72": ServerPhysical(48, 120_000.0, 3_000_000.0, True, "GB200 NVL72 rack, ~120 kW "
                                  "(https://www.nvidia.com/en-us/data-center/gb200-nvl72/)" + _TYPICAL
                                  + "; price " + _EST),
}
# A template without an entry: per GPU (an 8-GPU HGX-class server: 8U, ~10 kW, without NICs).
GENERIC_SERVER = {"units_per_8_gpus": 8, "power_w_per_gpu": 1_250.0, "usd_per_gpu": 40_000.0,
                  "source": "generic 8-GPU server class" + _TYPICAL + "; price " + _EST}
STORAGE_SERVER = ServerPhysical(2, 1_500.0, 40_000.0, True, "2U NVMe storage server" + _TYPICAL + "; price " + _EST)

# Rack, row and cable-run defaults (all editable per design). 42U, 40 kW: a common air-cooled
# AI rack budget (halls give 30-60 kW a rack); 600 mm wide racks; rows 2.4 m apart (1.2 m rack
# depth + 1.2 m aisle); 3 m of slack for the run up and down the two racks and the tray.
RACK_DEFAULTS = {"units": 42, "power_kw": 40.0}
ROW_DEFAULTS = {"racks": 10, "network": "end"}
SPACING_DEFAULTS = {"same_rack": 2.0, "rack_width": 0.6, "row_pitch": 2.4, "slack": 3.0}

# Plausibility bounds of an override: a value outside is a located error, never used.
LIMITS = {"usd": 50_000_000.0, "power_w": 250_000.0, "units": 60, "power_kw": 500.0,
          "row_racks": 200, "length_m": 1_000.0}


def price_key(kind: str, name: str) -> str:
    """The override key of a catalog item: ``switch:eth-51t2``, ``server:dgx-h100``,
    ``nic:ConnectX-7``, ``medium:dr:800``, ``storage``."""
    return f"{kind}:{name}" if name else kind
