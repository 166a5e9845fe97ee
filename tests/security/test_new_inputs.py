"""Hostile input to this session's new entry points: job workloads, SimAI files, AMD/NVIDIA text
and XML importers, the figure endpoint's throttle and stored results.

Each fault below was found by hand (docs/RELIABILITY.md, "New inputs: jobs, SimAI, importers")
and was a 500, minutes of CPU or gigabytes of memory before its fix:

- a reversed chain of 5,000 phases: ``RecursionError`` in the cycle check;
- ``microbatches: 10**6``: 231 s of CPU expanding 6 million phases, then refused for flows;
- template values ``"x"``, ``0``, ``true``, NaN or 300 digits: ``TypeError`` /
  ``ZeroDivisionError`` / ``OverflowError``;
- SimAI ``ga: 4000000000``: the builder looped for hours; ``model_parallel_NPU_group: 0``: a
  ``ZeroDivisionError``; 5,000-digit header values: ``ValueError``; a million bad lines:
  a million problems (1 GB, 20 s);
- ``NV`` + 5,000 digits (nvidia-smi) and ``Numa Node: <5,000 digits>`` (rocm-smi): ``ValueError``;
- an NCCL XML of 3,200 copies of one ``<pci>`` line (280 kB): 14 s of CPU.

The world (``tests/sharing/conftest.py``): alice's ``pod-2`` (2 DGX-H100 hosts = 16 GPUs,
rail-optimized), eve an editor, victor a viewer, bob a stranger with his own topology.
"""
from __future__ import annotations

import json
import time

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from designer.engine.errors import ImportFormatError, InvalidWorkload, LimitExceeded

pytestmark = pytest.mark.django_db

API = "/api/v1"
LAYOUT = {"tp": 8, "dp": 2}          # 16 GPUs of pod-2
SIMAI_LAYER = "l0 -1 100 ALLREDUCE 1000 100 ALLREDUCE 1000 100 ALLREDUCE 1000 10"


def simai(ga=1, gpus=16, layers=1, tp=8, body=None) -> str:
    head = (f"HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: {tp} ep: 1 pp: 1 ga: {ga} "
            f"all_gpus: {gpus}\n{layers}\n")
    return head + (body if body is not None else "\n".join([SIMAI_LAYER] * int(layers)))


@pytest.fixture(scope="module")
def topo():
    """2 DGX-H100 hosts, rail-optimized: the pod-2 of the world, for engine-level checks."""
    from designer.engine.model.fabrics import build_cluster
    from designer.engine.model.topology import Topology

    return Topology.from_document(build_cluster("dgx-h100", 2))


def normalize(topo, job: dict):
    from designer.engine.traffic.jobs.spec import normalize_job

    return normalize_job(topo, job)


def paths(exc) -> list[str]:
    return [p.path for p in exc.problems]


def cpu(fn):
    """(result or exception, CPU seconds of this process)."""
    t = time.process_time()
    try:
        out = fn()
    except Exception as exc:  # noqa: BLE001  (the test inspects it)
        out = exc
    return out, time.process_time() - t


# ------------------------------------------------------------------ 1. job workloads (engine)
def test_a_long_dependency_chain_is_checked_without_recursion(topo):
    """p0 after p1 after … p4999: 5,000 levels deep, past Python's recursion limit (1,000)."""
    phases = [{"id": f"p{i}", "after": [f"p{i + 1}"] if i < 4999 else []} for i in range(5000)]
    patterns, spec = normalize(topo, {"phases": phases})
    assert len(spec.phases) == 5000 and patterns == []


def test_a_long_cycle_is_located_and_named_briefly(topo):
    phases = [{"id": f"p{i}", "after": [f"p{(i + 1) % 20000}"]} for i in range(20000)]
    with pytest.raises(InvalidWorkload) as err:
        normalize(topo, {"phases": phases})
    (problem,) = err.value.problems
    assert problem.path.startswith("workload.job.phases[") and "dependency cycle" in problem.message
    assert "…" in problem.message and len(problem.message) < 300


def test_too_many_phases_are_refused_before_any_is_checked(topo):
    from designer.engine.traffic.jobs.spec import MAX_PHASES

    with pytest.raises(LimitExceeded) as err:
        normalize(topo, {"phases": [{"id": f"p{i}"} for i in range(MAX_PHASES + 1)]})
    assert paths(err.value) == ["workload.job.phases"]


def test_a_template_of_a_million_micro_batches_is_refused_at_once(topo):
    out, seconds = cpu(lambda: normalize(topo, {"layout": LAYOUT, "template": {
        "model": "llama3-8b", "microbatches": 10 ** 6}}))
    assert isinstance(out, LimitExceeded), out
    assert paths(out) == ["workload.job.template.microbatches"] and "6,000,002 phases" in str(out.problems[0])
    assert seconds < 1.0          # was 231 s of CPU


@pytest.mark.parametrize("key, value", [
    ("experts", "x"), ("top_k", -1), ("expert_ffn", 1.5), ("dense_layers", True),
    ("peak_tflops", 0), ("peak_tflops", float("nan")), ("mfu", True), ("optimizer_s", "x"),
    ("optimizer_s", -1), ("kv_heads", 0), ("kv_heads", "x"), ("hidden", 10 ** 300),
    ("seq_len", 10 ** 300), ("dtype_bytes", float("inf")), ("grad_bytes", 10 ** 400),
    ("gpu", [1]), ("model", [1]),
])
def test_bad_template_values_are_located(topo, key, value):
    with pytest.raises(InvalidWorkload) as err:
        normalize(topo, {"layout": LAYOUT, "template": {"model": "llama3-8b", key: value}})
    assert f"workload.job.template.{key}" in paths(err.value)


INFERENCE = {"kind": "inference", "model": "llama3-8b", "prompt_tokens": 10, "request_rate": 1.0,
             "prefill": {"group": "h0", "kind": "gpu"}, "decode": {"group": "h1", "kind": "gpu"}}


@pytest.mark.parametrize("key, value", [
    ("prompt_tokens", 10 ** 400), ("dtype_bytes", 10 ** 400), ("request_rate", float("inf")),
    ("requests", 10 ** 9), ("prefill_tp", True), ("mfu", "x"), ("peak_tflops", 0),
])
def test_bad_inference_values_are_located(topo, key, value):
    template = {**INFERENCE, key: value}
    if key in ("mfu", "peak_tflops"):
        template.pop("model")
        template.update(layers=2, heads=8, hidden=1024, ffn=4096, vocab=1000)
    with pytest.raises(InvalidWorkload) as err:
        normalize(topo, {"template": template})
    assert f"workload.job.template.{key}" in paths(err.value)


def test_the_default_request_count_is_capped(topo, monkeypatch):
    """One-GPU instances: 8 prefill, 8 decode → the default 2 × 8 = 16 requests, capped at 5."""
    from designer.engine.traffic.jobs import inference

    monkeypatch.setattr(inference, "MAX_REQUESTS", 5)
    _, spec = normalize(topo, {"template": {**INFERENCE, "prefill_tp": 1, "decode_tp": 1}})
    assert spec.inference["requests"] == 5 and len(spec.phases) == 15


@pytest.mark.parametrize("key", ["compute_s", "wait_s"])
def test_seconds_of_400_digits_are_located(topo, key):
    with pytest.raises(InvalidWorkload) as err:
        normalize(topo, {"phases": [{"id": "a", key: 10 ** 400}]})
    assert paths(err.value) == [f"workload.job.phases[0].{key}"]


# ------------------------------------------------------------------ 1. job workloads (API)
def scenario_body(w, workload) -> dict:
    return {"topology": w.topology.pk, "name": "hostile", "workload": workload}


@pytest.mark.parametrize("workload, where", [
    ({"job": {"phases": [{"id": f"p{i}", "after": [f"p{(i + 1) % 3000}"]} for i in range(3000)]}},
     "workload.job.phases[2999].after"),
    ({"job": {"layout": LAYOUT, "template": {"model": "llama3-8b", "microbatches": 10 ** 6}}},
     "workload.job.template.microbatches"),
    ({"job": {"layout": LAYOUT, "template": {"model": "llama3-8b", "experts": "x"}}},
     "workload.job.template.experts"),
    ({"job": {"layout": {"tp": 8, "dp": 2, "pp": 10 ** 30}, "phases": [{"id": "a"}]}},
     "workload.job.layout"),
    ({"job": {"layout": {"tp": 1, "dp": 16, "ep": 16}, "template": {"model": "deepseek-v3",
                                                                     "peak_tflops": 0}}},
     "workload.job.template.peak_tflops"),
])
def test_hostile_jobs_are_located_400s_and_save_nothing(world, api_as, workload, where):
    from designer.models import Scenario

    client, before = api_as("owner"), Scenario.objects.count()
    response = client.post(f"{API}/scenarios/", scenario_body(world, workload), format="json")
    assert response.status_code == 400, response.content[:300]
    assert where in response.content.decode()
    update = client.patch(f"{API}/scenarios/{world.scenario.pk}/", {"workload": workload}, format="json")
    assert update.status_code == 400 and where in update.content.decode()
    assert Scenario.objects.count() == before
    world.scenario.refresh_from_db()
    assert isinstance(world.scenario.workload, list)       # the ring pattern, unchanged


def test_an_expert_all_to_all_over_the_flow_limit_is_refused_at_save(world, api_as, settings):
    """DeepSeek-V3, ep 16 over the 16 GPUs: each all-to-all is 16 × 15 = 240 flows, over a limit
    of 200; at 4,096 GPUs and ep 512 the same check refuses 4.2 million flows before any is made."""
    settings.FABRICSCOPE_JOB_MAX_FLOWS = 200
    workload = {"job": {"layout": {"tp": 1, "dp": 16, "ep": 16}, "template": {"model": "deepseek-v3"}}}
    response = api_as("owner").post(f"{API}/scenarios/", scenario_body(world, workload), format="json")
    assert response.status_code == 400, response.content[:300]
    assert "limit_exceeded" in response.content.decode() and "FABRICSCOPE_JOB_MAX_FLOWS" in response.content.decode()


def test_a_deep_chain_saves_through_the_api(world, api_as):
    """Was a 500 (RecursionError) before the cycle check became iterative."""
    phases = [{"id": f"p{i}", "after": [f"p{i + 1}"] if i < 2999 else []} for i in range(3000)]
    response = api_as("owner").post(f"{API}/scenarios/", scenario_body(world, {"job": {"phases": phases}}),
                                    format="json")
    assert response.status_code == 201, response.content[:300]


# A stranger is told the topology does not exist (400 at ``topology`` on create, 404 on update).
@pytest.mark.parametrize("principal, create, update", [
    ("viewer", 403, 403), ("stranger", 400, 404), ("anon", 401, 401), ("editor", 201, 200)])
def test_only_editors_may_save_a_job(world, api_as, principal, create, update):
    job = {"job": {"layout": LAYOUT, "phases": [{"id": "a", "compute_s": 0.001}]}}
    client = api_as(principal)
    response = client.post(f"{API}/scenarios/", scenario_body(world, job), format="json")
    assert response.status_code == create, response.content[:200]
    if create == 400:
        assert "no topology with id" in response.content.decode()
    response = client.patch(f"{API}/scenarios/{world.scenario.pk}/", {"workload": job}, format="json")
    assert response.status_code == update, response.content[:200]


# ------------------------------------------------------------------ 2. SimAI files (engine)
def simai_job(text):
    from designer.engine.io.simai import simai_job as convert

    return convert(text)


@pytest.mark.parametrize("text, error, where, words", [
    (simai(ga=4_000_000_000), LimitExceeded, "line 2", "24,000,000,001 phases"),
    (simai(ga="9" * 5000), ImportFormatError, "line 1", "'ga' needs an integer"),
    (simai(gpus=8_000_000_000), ImportFormatError, "line 1", "'all_gpus' needs an integer"),
    (simai(layers="9" * 5000, body=SIMAI_LAYER), ImportFormatError, "line 2", "expected the layer count"),
    (simai(layers=20_000, body=SIMAI_LAYER), LimitExceeded, "line 2", "20,000 layers"),
    (simai(tp=0), ImportFormatError, "line 1", "must be >= 1"),
    (simai(ga="²"), ImportFormatError, "line 1", "'ga' needs an integer"),
    (simai(body=SIMAI_LAYER.replace(" 100 ", " " + "9" * 400 + " ", 1)), ImportFormatError, "line 3",
     "finite number"),
    ("HYBRID_TRANSFORMER ep: 1\n1\n" + SIMAI_LAYER, ImportFormatError, "line 1", "missing header field"),
    ("\x00\x01\xff" * 1000, ImportFormatError, "line 1", "expected a header line"),
])
def test_hostile_simai_files_are_located(text, error, where, words):
    out, seconds = cpu(lambda: simai_job(text))
    assert isinstance(out, error), out
    assert any(p.path == where and words in p.message for p in out.problems), out.problems
    assert seconds < 1.0


def test_a_file_of_garbage_lines_stops_after_a_few_problems():
    """10,000 layers announced, a million two-column lines: was 1,000,000 problems (1 GB, 20 s)."""
    from designer.engine.io.simai import MAX_PROBLEMS

    text = simai(layers=10_000, body="x y\n" * 1_000_000)
    out, seconds = cpu(lambda: simai_job(text))
    assert isinstance(out, ImportFormatError)
    assert len(out.problems) == MAX_PROBLEMS + 1 and out.problems[-1].message.startswith("stopped after")
    assert seconds < 10.0


def test_crlf_and_header_separators_import():
    job = simai_job(simai().replace("\n", "\r\n"))["job"]
    assert job["layout"] == {"tp": 8, "pp": 1, "dp": 2, "ep": 1} and len(job["phases"]) == 7


# ------------------------------------------------------------------ 2. SimAI files (page)
def page_post(**overrides) -> dict:
    from tests.designer.test_pages import scenario_post

    return scenario_post(**{"name": "step", "workload_type": "job", "workload_format": "simai",
                            "action": "import", **overrides})


@pytest.mark.parametrize("content", [
    simai(ga=4_000_000_000).encode(), b"\xff\xfe\x00garbage" * 100, simai(tp=0).encode(),
    simai(layers=10_000, body="x y\n" * 100_000).encode(),
])
def test_page_import_of_hostile_files_is_a_form_error(world, page_as, content):
    from designer.models import Scenario

    before = Scenario.objects.count()
    upload = SimpleUploadedFile("w.txt", content, content_type="text/plain")
    response = page_as("owner").post(reverse("scenario_new", args=[world.topology.pk]),
                                     page_post(workload_file=upload))
    assert response.status_code == 400, response.status_code
    assert "w.txt" in response.content.decode() or "UTF-8" in response.content.decode()
    assert Scenario.objects.count() == before


def test_page_import_of_an_oversized_file_is_refused_unread(world, page_as, monkeypatch):
    from designer.pages.forms.scenarios import JobWorkloadForm

    monkeypatch.setattr(JobWorkloadForm, "MAX_FILE_BYTES", 1000)
    upload = SimpleUploadedFile("big.txt", simai().encode() + b" " * 2000)
    response = page_as("owner").post(reverse("scenario_new", args=[world.topology.pk]),
                                     page_post(workload_file=upload))
    assert response.status_code == 400 and "the limit is 1,000" in response.content.decode()


@pytest.mark.parametrize("principal, status", [("viewer", 403), ("stranger", 404), ("anon", 302)])
def test_page_import_needs_edit_rights(world, page_as, principal, status):
    from designer.models import Scenario

    before = Scenario.objects.count()
    for url in (reverse("scenario_new", args=[world.topology.pk]),
                reverse("scenario_edit", args=[world.scenario.pk])):
        upload = SimpleUploadedFile("w.txt", simai().encode())
        response = page_as(principal).post(url, page_post(workload_file=upload, action="save"))
        assert response.status_code == status, (url, response.status_code)
        if status == 302:
            assert "/login" in response["Location"] or "login" in response["Location"]
    assert Scenario.objects.count() == before


# ------------------------------------------------------------------ 3. importers
def import_text(text, **kw):
    from designer.engine.io import import_text as run

    return run(text, **kw)


def nvidia_matrix(n: int, cell: str = "NV18") -> str:
    head = "\t" + "\t".join(f"GPU{j}" for j in range(n)) + "\tCPU Affinity\tNUMA Affinity"
    rows = [f"GPU{i}\t" + "\t".join("X" if i == j else cell for j in range(n)) + "\t0-1\t0" for i in range(n)]
    return head + "\n" + "\n".join(rows) + "\n\nLegend:\n  X    = Self\n"


def rocm_tables(n: int, extra: str = "") -> str:
    header = "       " + "".join(f"GPU{j:<9}" for j in range(n))

    def table(title, value):
        rows = [f"GPU{i:<4} " + " ".join("0" if i == j else value for j in range(n)) for i in range(n)]
        return f"==== {title} ====\n{header}\n" + "\n".join(rows)
    return "\n".join([table("Weight between two GPUs", "15"), table("Hops between two GPUs", "1"),
                      table("Link Type between two GPUs", "XGMI")]) + extra


@pytest.mark.parametrize("text, words", [
    (nvidia_matrix(4, "NV" + "9" * 5000), "unknown relation"),
    (nvidia_matrix(300), "300 GPUs"),
    (nvidia_matrix(2).replace("GPU1", "GPU" + "1" * 5000), "bad GPU column"),
])
def test_nvidia_smi_hostile_matrices_are_refused(text, words):
    out, seconds = cpu(lambda: import_text(text, format="nvidia-smi"))
    assert isinstance(out, ImportFormatError), out
    assert words in str(out) and seconds < 1.0


def test_rocm_smi_lines_with_5000_digits_are_ignored_not_a_500():
    numa = "\n==== Numa Nodes ====\n" + "\n".join(
        f"GPU[{i}] : (Topology) Numa Node: {'9' * 5000}" for i in range(8))
    result = import_text(rocm_tables(8, numa), format="rocm-smi")
    assert sum(n["kind"] == "gpu" for n in result.document["nodes"]) == 8


def test_rocm_smi_more_than_64_gpus_is_refused():
    with pytest.raises(ImportFormatError, match="more than 64 GPUs"):
        import_text(rocm_tables(65), format="rocm-smi")


def _nccl_xml(inner: str, gpu_children: str = "") -> str:
    return ('<system version="1"><cpu numaid="0" affinity="f" arch="x86_64" vendor="AuthenticAMD" '
            'familyid="25" modelid="17"><pci busid="0000:01:00.0" class="0x030000" link_speed="32.0 GT/s PCIe" '
            f'link_width="16"><gpu dev="0" sm="94" rank="0" gdr="1">{gpu_children}</gpu></pci>{inner}'
            "</cpu></system>")


def test_an_nccl_xml_of_thousands_of_devices_is_refused_quickly():
    """3,200 copies of one NIC <pci> line (280 kB) took 14 s of CPU to import."""
    nic = '<pci busid="0000:20:1b.0" class="0x020000" link_speed="8 GT/s" link_width="16"/>'
    out, seconds = cpu(lambda: import_text(_nccl_xml(nic * 3200)))
    assert isinstance(out, ImportFormatError) and "nodes" in str(out), out
    assert seconds < 1.0


def test_an_nccl_xml_of_thousands_of_links_is_refused():
    xgmi = "".join(f'<xgmi target="0000:{k // 256:02x}:{k % 256:02x}.0" count="1" tclass="0x030000"/>'
                   for k in range(2, 4200))
    with pytest.raises(ImportFormatError, match="GPU links"):
        import_text(_nccl_xml("", xgmi))


def test_an_xgmi_link_to_itself_is_skipped_with_a_warning():
    result = import_text(_nccl_xml("", '<xgmi target="0000:01:00.0" count="1" tclass="0x030000"/>'))
    assert any("xgmi to itself skipped" in w for w in result.warnings)
    assert not [l for l in result.document["links"] if l["a"] == l["b"]]


def test_api_import_of_hostile_text_is_a_400(world, api_as):
    for text in (nvidia_matrix(4, "NV" + "9" * 5000), _nccl_xml(
            '<pci busid="0000:20:1b.0" class="0x020000" link_speed="8 GT/s" link_width="16"/>' * 3200)):
        response = api_as("owner").post(f"{API}/topologies/import/", {"name": "x", "text": text}, format="json")
        assert response.status_code == 400, response.content[:300]


# ------------------------------------------------------------------ 4. builds and the BOM
def test_rack_and_three_tier_estimates_bound_the_build():
    """The build limit counts hosts × one host's elements; fabric switches add up to ~10 %."""
    from designer.engine.model.fabrics import build_cluster
    from designer.ops.limits import build_elements

    for template, hosts, kw in (("gb200-nvl72", 4, {}), ("dgx-h100", 64, {"fabric": "fat-tree"}),
                                ("dgx-h100", 32, {"tiers": 3})):
        doc = build_cluster(template, hosts, **kw)
        actual = len(doc["nodes"]) + len(doc["links"])
        estimate = build_elements(template=template, hosts=hosts)
        assert estimate <= actual <= 1.15 * estimate, (template, estimate, actual)


def test_a_too_large_rack_build_is_refused_before_building(world, api_as, settings):
    settings.FABRICSCOPE_BUILD_MAX_ELEMENTS = 10_000
    response = api_as("owner").post(f"{API}/topologies/build-preview/", {
        "name": "racks", "template": "gb200-nvl72", "hosts": 8}, format="json")
    assert response.status_code == 400, response.content[:300]
    assert "build_too_large" in response.content.decode()


@pytest.mark.parametrize("principal, status", [("owner", 200), ("viewer", 200), ("team_viewer", 200),
                                               ("stranger", 404), ("link", 200)])
def test_the_bom_endpoint_follows_read_permission(world, api_as, principal, status):
    response = api_as(principal).get(f"{API}/topologies/{world.topology.pk}/bom/")
    assert response.status_code == status, response.content[:200]


def test_the_bom_of_a_stranger_topology_is_404(world, api_as):
    assert api_as("owner").get(f"{API}/topologies/{world.secret.pk}/bom/").status_code == 404


# ------------------------------------------------------------------ 5. the figure endpoint
def test_an_anonymous_visitor_may_draw_figures(world, page_as):
    response = page_as("anon").post("/figures/path/", data="{}", content_type="application/json")
    assert response.status_code in (200, 400)          # a malformed slice, not a refusal


def test_x_forwarded_for_does_not_dodge_the_figure_throttle(world, page_as, settings):
    settings.FABRICSCOPE_API_THROTTLE_RATES = {"figures": "3/min"}
    client = page_as("anon")
    codes = [client.post("/figures/path/", data="{}", content_type="application/json",
                         HTTP_X_FORWARDED_FOR=f"10.0.0.{k}").status_code for k in range(5)]
    assert codes[:3] != [429] * 3 and codes[3:] == [429, 429], codes


def test_an_oversized_figure_slice_is_413_without_parsing(world, page_as):
    from designer.pages.results import FIGURE_SLICE_MAX_BYTES

    body = "[" + " " * FIGURE_SLICE_MAX_BYTES + "]"
    response = page_as("anon").post("/figures/path/", data=body, content_type="application/json")
    assert response.status_code == 413


# ------------------------------------------------------------------ 6. stored results
@pytest.mark.parametrize("principal, status", [("owner", 200), ("viewer", 200), ("stranger", 404),
                                               ("result_link", 200)])
def test_the_result_summary_follows_read_permission(world, api_as, principal, status):
    response = api_as(principal).get(f"{API}/jobs/{world.job.pk}/result/?view=summary")
    assert response.status_code == status, response.content[:200]


def test_another_users_result_is_404(world, api_as):
    for view in ("summary", "full"):
        assert api_as("owner").get(f"{API}/jobs/{world.secret_job.pk}/result/?view={view}").status_code == 404


def test_a_damaged_body_is_a_clear_error_and_the_summary_still_reads(world, api_as):
    from designer.engine.analysis import result_columns
    from designer.models import SimulationResult

    SimulationResult.objects.filter(job=world.job).update(
        body=b"not zlib", encoding=result_columns.ENCODING)
    row = SimulationResult.objects.get(job=world.job)
    with pytest.raises(result_columns.DamagedResult, match="damaged"):
        row.document()
    summary = api_as("owner").get(f"{API}/jobs/{world.job.pk}/result/?view=summary")
    assert summary.status_code == 200 and summary.json()["format"] == "fabricscope.result/1"
    full = api_as("owner").get(f"{API}/jobs/{world.job.pk}/result/")
    assert full.status_code == 409 and full.json()["error"]["code"] == "result_damaged"
    assert "damaged" in full.json()["error"]["message"]


@pytest.mark.parametrize("body", [b"", b"x" * 100, __import__("zlib").compress(b"[1, 2]"),
                                  __import__("zlib").compress(b'{"order": ["flows"], "strings": [], '
                                                              b'"parts": {"flows": {"table": {}}}}'),
                                  __import__("zlib").compress(b"\xff" * 10)])
def test_unpack_of_any_damaged_body_is_one_error_class(body):
    from designer.engine.analysis import result_columns

    with pytest.raises(result_columns.DamagedResult):
        result_columns.unpack({"format": "fabricscope.result/1"}, body)


def test_damaged_stored_figures_are_rebuilt_not_a_500(world):
    from designer.models import ResultFigures, SimulationResult
    from designer.services.results import result_figures

    row = SimulationResult.objects.get(job=world.job)
    ResultFigures.objects.create(result=row, key="v1:result", keys=["a"], figures=b"not zlib", path_index=None)
    got = result_figures(job_id=world.job.pk, key="v1:result", build=lambda r: {"a": {"data": [1]}})
    assert list(got) == ["a"]
    stored = ResultFigures.objects.get(result=row, key="v1:result")
    assert bytes(stored.figures) != b"not zlib"
