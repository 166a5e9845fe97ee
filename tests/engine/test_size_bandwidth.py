"""Size-dependent bandwidth (``traffic/collectives/sizing.py``): hand-derived figures of each part,
monotonic effective bandwidth, and today's model at large sizes."""
import pytest

from designer.engine.traffic.collectives import sizing

MiB = 1 << 20
KiB = 1 << 10


def test_constants_from_nccl():
    assert sizing.NCCL_STEPS == 8
    # LL: 8 lines × 512 threads × 8 steps × 16 B; LL128: 120 × 640 × 8 × 8 B; Simple 4 MiB.
    assert sizing.BUFFSIZE == {"LL": 524288, "LL128": 4915200, "Simple": 4194304}
    assert sizing.BUFFSIZE["Simple"] // sizing.NCCL_STEPS == 512 * KiB   # NVIDIA/nccl#391


def test_channels_in_use_hand_figures():
    # Ring LL on 8 ranks: 512 threads × 8 B × 8 ranks = 32 KiB a channel: 64 KiB → 2 channels.
    assert sizing.channels_in_use(32, 64 * KiB, "ring", "LL", 8) == 2
    # Simple: 512 × 64 B = 32 KiB a channel: 256 KiB → 8, 1 MiB → all 32.
    assert sizing.channels_in_use(32, 256 * KiB, "ring", "Simple", 8) == 8
    assert sizing.channels_in_use(32, 1 * MiB, "ring", "Simple", 8) == 32
    # Tree LL128: 640 × 8 B = 5 KiB a channel: 40 KiB → 8; the tree's LL threshold is not × ranks.
    assert sizing.channels_in_use(32, 40 * KiB, "tree", "LL128", 8) == 8
    assert sizing.channels_in_use(32, 64 * KiB, "tree", "LL", 8) == 16
    # Never below one, never above the full count; NVLS keeps its channels.
    assert sizing.channels_in_use(24, 8, "ring", "LL", 8) == 1
    assert sizing.channels_in_use(16, 8, "nvls", "Simple", 8) == 16


def test_pipeline_factor_hand_figures():
    # Ring of 8, a few chunks per channel (3 MiB over 1 channel = 3 × 1 MiB chunks): every rank
    # sends on every one of the 2(n−1) steps, so no fill: factor 1.
    assert sizing.pipeline_factor("ring", "Simple", 3 * MiB, 1, 8, 1) == 1.0
    # Tree, 8 GPUs on one host: d = 2·(8 − 1) = 14 stages; 4 channels × 512 KiB chunks, 6 MiB →
    # k = 3 chunks a channel: 3 / (3 + 13) = 3/16.
    assert sizing.pipeline_factor("tree", "Simple", 6 * MiB, 4, 8, 1) == pytest.approx(3 / 16)
    # Tree across 4 hosts of 8: d = 2·(7 + 2) = 18.
    assert sizing.pipeline_factor("tree", "Simple", 6 * MiB, 4, 8, 4) == pytest.approx(3 / 20)
    # NVLS, 16 channels × 8 heads = 128 concurrent ops at 16 MiB: 16 MiB < 64 MiB (8 × 128 × 64 KiB)
    # → 32 KiB chunks, not below 8 MiB (2 × 128 × 32 KiB); k = 16 MiB / (128 × 32 KiB) = 4,
    # d = 3: 4/6. (Just under 16 MiB nothing better: fill never falls with size.)
    assert sizing.nvls_chunk(16 * MiB, 128) == 32 * KiB
    assert sizing.pipeline_factor("nvls", "Simple", 16 * MiB, 16, 8, 1) == pytest.approx(4 / 6)
    # LL / LL128 forward line by line: no fill.
    assert sizing.pipeline_factor("tree", "LL128", 6 * MiB, 4, 8, 1) == 1.0


def test_size_factor_combines_both():
    # Ring LL at 64 KiB on 8 ranks with 32 channels at full size: 2/32, no fill.
    assert sizing.size_factor("ring", "LL", 64 * KiB, 32, 8, 8, 1) == pytest.approx(2 / 32)


@pytest.mark.parametrize("algorithm,protocols", [("ring", ("LL", "LL128", "Simple")),
                                                 ("tree", ("LL", "LL128", "Simple")),
                                                 ("nvls", ("Simple",)), ("nvlstree", ("Simple",))])
@pytest.mark.parametrize("nodes", [1, 2, 4])
def test_effective_bandwidth_never_falls_with_size(algorithm, protocols, nodes):
    # Effective bandwidth = solved rate × size factor: the factor must not fall as size grows.
    for p in protocols:
        last = 0.0
        size = 8
        while size <= 16 << 30:
            for s in (size, size * 3 // 2):
                f = sizing.size_factor(algorithm, p, s, 32 if algorithm in ("ring", "tree") else 16,
                                       8 * nodes, 8, nodes)
                assert 0 < f <= 1
                assert f >= last - 1e-12, (algorithm, p, s, f, last)
                last = f
            size *= 2


def test_large_sizes_keep_todays_model():
    # Ring (every protocol) and LL / LL128 trees: full channels, no fill from 256 MiB up.
    for s in (256 * MiB, 1 << 30, 8 << 30):
        for p in ("LL", "LL128", "Simple"):
            assert sizing.size_factor("ring", p, s, 32, 8, 8, 1) == pytest.approx(1.0, rel=0.01)
        assert sizing.size_factor("tree", "LL128", s, 32, 16, 8, 2) == pytest.approx(1.0, rel=0.01)
    # NVLS (Simple, 3 stages) is still filling at 256 MiB: 64 KiB chunks, k = 32, 32/34 = 0.941;
    # within 1 % of today's model from 4 GiB (128 KiB chunks, k = 256: 256/258).
    assert sizing.size_factor("nvls", "Simple", 256 * MiB, 16, 8, 8, 1) == pytest.approx(32 / 34)
    for s in (4 << 30, 8 << 30, 16 << 30):
        assert sizing.size_factor("nvls", "Simple", s, 16, 8, 8, 1) == pytest.approx(1.0, rel=0.01)


def test_channels_full_from_topology():
    from designer.engine.benchmarks import fidelity
    from designer.engine.traffic.collectives.common import group_of

    def full(template, hosts, algorithm):
        spec = {"template": template, "hosts": hosts}
        if hosts > 1:
            spec["fabric"] = "rail-optimized"
        topo = fidelity.build_topology(spec)
        gpus = [i for i, k in enumerate(topo.node_kind) if k == "gpu"]
        group = group_of(topo, {"kind": "allreduce", "participants": gpus, "bytes": 1 << 20})
        return sizing.channels_full(topo, group, algorithm), sizing.runs_rccl(topo, group)

    assert full("dgx-h100", 1, "ring") == (32, False)   # 18 NVLinks: 36, MAXCHANNELS 32
    assert full("dgx-a100", 1, "ring") == (24, False)   # 12 NVLinks
    assert full("dgx-h100", 1, "nvls") == (16, False)   # catalog NVLS_CHANNELS
    assert full("dgx-h100", 2, "ring") == (16, False)   # 8 compute NICs a host: 2 × 8
    assert full("amd-mi300x", 1, "ring")[1] is True     # RCCL: not NCCL's rules
