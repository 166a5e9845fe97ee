"""``POST /topologies/<id>/chakra-import/``: uploaded Chakra traces (``tests/engine/data/chakra/``,
``tools/chakra_fixture.py``) mapped onto the ``small_topology`` fixture (2 DGX-H100 hosts): rank r
is ``h0/gpu<r>``. Only uploads are read; nothing is saved."""
from __future__ import annotations

import pathlib

from tests.api.conftest import API, assert_error

DATA = pathlib.Path(__file__).parent.parent / "engine" / "data" / "chakra"


def _post(api, pk, names, groups=True):
    files = [open(DATA / n, "rb") for n in names]
    body = {"traces": files}
    if groups:
        body["groups"] = open(DATA / "groups.json", "rb")
    try:
        return api.post(f"{API}/topologies/{pk}/chakra-import/", body, format="multipart")
    finally:
        for f in files + ([body["groups"]] if groups else []):
            f.close()


def test_uploaded_traces_become_a_job_with_a_summary(api, small_topology):
    response = _post(api, small_topology.pk, [f"trace.{r}.et" for r in range(4)])
    assert response.status_code == 200, response.content[:500]
    body = response.json()
    assert body["summary"]["ranks"] == 4 and body["summary"]["nodes"]["COMM_COLL_NODE"] == 24
    phases = {p["id"]: p for p in body["workload"]["job"]["phases"]}
    assert phases["n4"]["patterns"][0]["groups"] == [["h0/gpu0", "h0/gpu1"], ["h0/gpu2", "h0/gpu3"]]


def test_missing_ranks_and_bad_bytes_are_located_under_traces(api, small_topology):
    error = assert_error(_post(api, small_topology.pk, ["trace.0.et", "trace.1.et"]), 400)
    assert any("rank 3 has no trace" in d["message"] for d in error["details"]), error
    error = assert_error(_post(api, small_topology.pk, ["groups.json"], groups=False), 400)
    assert any("byte" in d["path"] for d in error["details"]), error


def test_another_users_topology_is_not_found(client_for, other_user, small_topology):
    response = _post(client_for(other_user), small_topology.pk, ["trace.0.et"])
    assert response.status_code == 404


def test_more_files_than_django_reads_is_a_400_not_a_500(api, small_topology, settings):
    """Found by schemathesis: 101 uploaded traces made Django raise TooManyFilesSent, which the
    API answered with a 500."""
    import io

    settings.DATA_UPLOAD_MAX_NUMBER_FILES = 3
    files = [io.BytesIO(b"\x00") for _ in range(5)]
    for k, f in enumerate(files):
        f.name = f"trace.{k}.et"
    response = api.post(f"{API}/topologies/{small_topology.pk}/chakra-import/", {"traces": files},
                        format="multipart")
    error = assert_error(response, 400)
    assert error["code"] == "too_many_files" and "at most 3 files" in error["details"][0]["message"]
