"""``sharp`` in the API build spec (``BuildSpecSerializer``): a JSON boolean, passed to
``build_cluster``, whose refusal of an Ethernet fabric comes back located on ``sharp``.

Design: 4 DGX H100, rail-optimized::

    [h0..3/nic r]--400G--[leaf r (sharp)]     r = 0..7
"""
from __future__ import annotations

import pytest

from tests.api.conftest import API, assert_error, paths_of

pytestmark = pytest.mark.django_db


def test_api_build_preview_takes_sharp_and_locates_ethernet(api):
    ok = api.post(f"{API}/topologies/build-preview/", {"template": "dgx-h100", "hosts": 4, "sharp": True},
                  format="json")
    assert ok.status_code == 200, ok.content
    error = assert_error(api.post(f"{API}/topologies/build-preview/",
                                  {"template": "dgx-h100", "hosts": 4, "sharp": True, "switch": "eth-51t2"},
                                  format="json"), 400)
    assert paths_of(error) == {"sharp"}
    error = assert_error(api.post(f"{API}/topologies/build-preview/",
                                  {"template": "dgx-h100", "hosts": 4, "sharp": "yes"}, format="json"), 400)
    assert paths_of(error) == {"sharp"}
