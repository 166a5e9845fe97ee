"""Hardware facts of host-memory copies: link payload rates by engine and direction, shared host ports.

A GPU copy to or from host memory moves its data in packets whose size is set by *who* does the
copy, and pays a fixed framing and header cost per packet:

- **Engine.** A copy engine (``cudaMemcpyAsync``, nvbandwidth's ``*_memcpy_ce`` testcases) writes
  with 256-byte payloads; a copy kernel on the SMs (nvbandwidth's ``*_memcpy_sm``) with 128-byte
  payloads — "SMs are limited to 128B payload size, when Copy Engines can use 256B"
  (NVIDIA/nccl-tests#149, sjeaugey; nvbandwidth README, "Test Details": CE copies use memcpy
  APIs, SM copies use kernels).
- **Direction.** A copy *to* host memory is posted writes (memory-write TLPs, a 4-DW header); a
  copy *from* host memory is read requests answered by completions with data (a 3-DW header), cut
  by the root complex at its read completion boundary (RCB, 64 bytes for a root port: PCI Express
  Base Specification, Link Control register "Read Completion Boundary"; a CPU returns whole cache
  lines). The SM read of pinned host memory is bound by its outstanding non-posted reads, not by
  the payload: the catalog's measured figure stays (``catalog.PCIE_MEASURED_GBYTES[tech]["h2d"]``).
- **PCIe framing** (Gen3-Gen5, PCI Express Base Specification 4.0 §4.2.2-4.2.3 and §2.2): 128b/130b
  encoding; per TLP a 4-byte STP framing token (with the sequence number) and a 4-byte LCRC, plus
  the header (16 bytes for a 64-bit memory write, 12 for a completion). So a Gen5 x16 link carries
  63.0 GB/s of symbols a direction and 63.0 × 128 / (128 + 24) = 53.1 GB/s of SM-written payload.
- **NVLink packets.** NVLink's per-packet overhead is read from NVIDIA's own figure: a 25 GB/s
  NVLink 3 link carries "~20GB/s effective bandwidth with a 128B payload size" (nccl-tests#149),
  i.e. 32 bytes of header and flow control per 128-byte packet; NVLink-C2C is NVLink-based and is
  taken to pay the same.
- **Shared host ports.** A Grace CPU's NVLink-C2C interface is one port shared by the GPUs of its
  superchip: "900 GB/s of bidirectional bandwidth between the Grace CPU and Blackwell GPUs" for
  the GB200 superchip (one Grace, two B200: NVIDIA GB200 NVL72 page,
  https://www.nvidia.com/en-us/data-center/gb200-nvl72/), 450 GB/s a direction for the Grace,
  not for each GPU. Host memory behind it (LPDDR5X, the topology's cpu–memory link) is shared
  by everything that reaches it.
"""
from __future__ import annotations

__all__ = ["COPY_ENGINES", "ENGINE_WRITE_PAYLOAD_BYTES", "READ_COMPLETION_BYTES", "PCIE_GT_PER_LANE",
           "PCIE_ENCODING", "TLP_WRITE_OVERHEAD_BYTES", "TLP_COMPLETION_OVERHEAD_BYTES",
           "NVLINK_PACKET_OVERHEAD_BYTES", "HOST_PORTS", "pcie_symbol_gbytes", "copy_payload_gbytes"]

#: Who moves the bytes: the GPU's copy engines or a kernel on its SMs (nvbandwidth README).
COPY_ENGINES = ("sm", "ce")
#: Write payload per packet, bytes (NVIDIA/nccl-tests#149: SMs 128 B, copy engines 256 B).
ENGINE_WRITE_PAYLOAD_BYTES = {"sm": 128, "ce": 256}
#: Completion payload a root port returns per read, bytes (RCB 64 B, PCIe Base Specification).
READ_COMPLETION_BYTES = 64
#: Transfer rate per lane, GT/s (PCIe Base Specification 3.0, 4.0, 5.0); Gen6 (FLIT mode) is not modelled.
PCIE_GT_PER_LANE = {3: 8.0, 4: 16.0, 5: 32.0}
#: 128b/130b line code of Gen3-Gen5.
PCIE_ENCODING = 128.0 / 130.0
#: STP token 4 + 4-DW memory-write header 16 + LCRC 4 bytes per TLP.
TLP_WRITE_OVERHEAD_BYTES = 24
#: STP token 4 + 3-DW completion header 12 + LCRC 4 bytes per completion.
TLP_COMPLETION_OVERHEAD_BYTES = 20
#: NVLink header and flow control per 128-byte packet: 25 GB/s line → ~20 GB/s (nccl-tests#149).
NVLINK_PACKET_OVERHEAD_BYTES = 32
#: Host ports shared by every GPU copying through them, by CPU model: per-direction GB/s and the
#: link technology that reaches them (GB200 superchip: one Grace's C2C, 900 GB/s bidirectional).
HOST_PORTS = {
    "NVIDIA Grace": {"tech": "nvlink-c2c", "port_gbytes": 450.0,
                     "source": "NVIDIA GB200 NVL72 page: NVLink-C2C 900 GB/s bidirectional between the Grace "
                               "CPU and its Blackwell GPUs (https://www.nvidia.com/en-us/data-center/gb200-nvl72/)"},
}


def pcie_symbol_gbytes(tech: str) -> float | None:
    """Data rate of one direction of a PCIe link after line coding, GB/s (``pcie5x16`` → 63.0);
    ``None`` for a name that is not PCIe Gen3-Gen5."""
    if not tech.startswith("pcie") or "x" not in tech:
        return None
    gen, _, width = tech[4:].partition("x")
    if not (gen.isdigit() and width.isdigit()) or int(gen) not in PCIE_GT_PER_LANE:
        return None
    return PCIE_GT_PER_LANE[int(gen)] * int(width) / 8.0 * PCIE_ENCODING


def copy_payload_gbytes(tech: str | None, direction: str, engine: str, nvlink_raw_gbytes: float | None = None
                        ) -> float | None:
    """Payload rate (GB/s) a copy gets from one direction of the GPU's host link.

    Parameters
    ----------
    tech : str or None
        Link technology (``pcie5x16``, ``nvlink-c2c``).
    direction : str
        ``"write"`` (GPU → host memory, posted writes) or ``"read"`` (host memory → GPU, completions).
    engine : str
        ``"sm"`` or ``"ce"`` (:data:`COPY_ENGINES`).
    nvlink_raw_gbytes : float, optional
        Raw per-direction rate of an NVLink-family link (``nvlink-c2c``: 450).

    Returns
    -------
    float or None
        GB/s, or ``None`` when the link is neither PCIe Gen3-5 nor NVLink-C2C (no cap).
    """
    payload = ENGINE_WRITE_PAYLOAD_BYTES[engine]
    symbols = pcie_symbol_gbytes(tech or "")
    if symbols is not None:
        if direction == "write":
            return symbols * payload / (payload + TLP_WRITE_OVERHEAD_BYTES)
        return symbols * READ_COMPLETION_BYTES / (READ_COMPLETION_BYTES + TLP_COMPLETION_OVERHEAD_BYTES)
    if tech == "nvlink-c2c" and nvlink_raw_gbytes:
        return nvlink_raw_gbytes * payload / (payload + NVLINK_PACKET_OVERHEAD_BYTES)
    return None
