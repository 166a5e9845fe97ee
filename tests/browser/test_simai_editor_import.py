"""A SimAI topology file imported in the editor of the real app (headless Chromium, live server).

alice opens the editor of her 1-host design and imports aliyun/SimAI's Spectrum-X example
(``tests/engine/data/simai_topo/Spectrum-X_16g_8gps_100Gbps_A100``, first line ``90 8 2 72 544
A100``: 90 nodes, 8 GPUs a server, 2 NVSwitches a server, 72 switches, 544 links): the file is
recognised as a SimAI topology (not a server description),
converted by the server's import preview and replaces the canvas as one undoable step; its
device and link counts are the document the API's import makes of the same file.

Screenshot: ``$ARTIFACTS_DIR/screenshots/editor-simai-import.png``.
"""
from __future__ import annotations

import pathlib

import pytest
from django.urls import reverse

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SIMAI = pathlib.Path(__file__).parents[1] / "engine" / "data" / "simai_topo" / "Spectrum-X_16g_8gps_100Gbps_A100"


@pytest.fixture
def host(user):
    from designer import services

    return services.topology_build(owner=user, name="one", template="dgx-h100", hosts=1, options={})


def test_editor_imports_a_simai_topology_as_a_whole_design(app_page, live_server, sign_in, shot, host):
    from designer import bridge

    expected = bridge.import_host(content=SIMAI.read_text(), format="simai-topo", host_id="h0",
                                  name="simai", field="file").document
    page = sign_in(app_page, "alice", "alice-password-1")
    page.goto(live_server.url + reverse("editor", args=[host.pk]))
    page.wait_for_function("() => window.fabricscopeEditor && window.fabricscopeEditor.stats().nodes > 0")
    assert "SimAI topology" in page.get_attribute('button[data-action="import"]', "title")
    page.set_input_files(".fs-editor input[type=file]", str(SIMAI))
    nodes = len(expected["nodes"])
    page.wait_for_function(f"() => window.fabricscopeEditor.stats().nodes === {nodes}")
    assert page.evaluate("() => window.fabricscopeEditor.stats().links") == len(expected["links"])
    page.wait_for_selector("text=Imported SimAI topology")
    assert page.evaluate("() => window.fabricscopeEditor.getDocument().name") == SIMAI.name
    shot(page, "editor-simai-import")
    page.keyboard.press("Control+z")                    # one undoable step: the DGX host is back
    page.wait_for_function(f"() => window.fabricscopeEditor.stats().nodes === {host.node_count}")
    assert not page.js_errors, page.js_errors
