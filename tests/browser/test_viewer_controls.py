"""A viewer's scenario page in a real browser: no control looks live and does nothing.

alice owns pod-2 (2 DGX-H100 hosts) with scenario "ring" (saved failures: ``h1/nic3`` down) and
shares it with bob as a *viewer*. On bob's page every button, link and form control is either

- live and working: the run buttons (a what-if simulation, sweep, policy comparison), "Fork to
  edit", the failure picker (filter, list, the chips' "×"), the sweep/compare options, links;
- or disabled, *looking* disabled (dimmed) and saying why in its tooltip ("viewer: fork to edit").

"Run what-if" with bob's own failures queues a job owned by bob with those failures, and leaves
alice's scenario as saved. Screenshots: ``$ARTIFACTS_DIR/screenshots/viewer-*.png``.
"""
from __future__ import annotations

import pytest
from django.urls import reverse

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

REASON = "viewer: fork to edit"
#: Enabled controls a viewer may meet, by what they do (anything else fails the test).
LIVE_ACTIONS = {"simulate", "sweep", "compare"}
LIVE_NAMES = {"failures_down", "failures_degrade", "sweep_over", "policies", "csrfmiddlewaretoken",
              "what_if"}

CONTROLS_JS = """() => {
  const out = [];
  const scope = document.querySelectorAll('main button, main a[href], main input, main select, main textarea');
  for (const el of scope) {
    const r = el.getBoundingClientRect();
    const cs = getComputedStyle(el);
    const shown = el.type === 'hidden' ? false : (r.width > 0 && r.height > 0 && cs.visibility !== 'hidden');
    if (!shown) continue;
    // What the user sees: the control's opacity times its ancestors' (a dimmed fieldset counts).
    let opacity = 1;
    for (let e = el; e && e.nodeType === 1; e = e.parentElement) opacity *= Number(getComputedStyle(e).opacity);
    const label = el.tagName === 'A' || el.tagName === 'BUTTON' ? el.textContent.trim() : (el.name || el.id);
    out.push({tag: el.tagName.toLowerCase(), type: el.type || '', name: el.name || '', value: el.value || '',
              id: el.id || '', label, disabled: el.matches(':disabled'), title: el.title || '',
              href: el.tagName === 'A' ? el.href : '', opacity,
              filter: getComputedStyle(el).filter, cursor: cs.cursor,
              chip: !!el.closest('.chip')});
  }
  return out;
}"""


@pytest.fixture
def viewer_pod(user, other_user, published):
    """alice's pod-2 with scenario "ring" (h1/nic3 down), shared with bob as a viewer."""
    from designer import services
    from tests.conftest import RING_ALLREDUCE

    topology = services.topology_build(owner=user, name="pod-2", template="dgx-h100", hosts=2,
                                       options={"storage": 1}, description="two DGX H100")
    scenario = services.scenario_create(topology=topology, user=user, name="ring",
                                        workload=RING_ALLREDUCE,
                                        failures=[{"target": "h1/nic3", "mode": "down"}])
    services.share_grant(topology=topology, actor=user, role="viewer", user=other_user)
    return topology, scenario


def controls(page):
    return page.evaluate(CONTROLS_JS)


def test_every_control_a_viewer_sees_works_or_says_why(app_page, live_server, sign_in, shot,
                                                       viewer_pod):
    _, scenario = viewer_pod
    bob = sign_in(app_page, "bob", "bob-password-1")
    url = live_server.url + reverse("scenario_edit", args=[scenario.pk])
    bob.goto(url)
    assert REASON in bob.locator("#viewer-note").inner_text()
    shot(bob, "viewer-01-scenario-page")
    bob.locator("#workload").scroll_into_view_if_needed()
    bob.hover('[data-add-pattern]', force=True)
    shot(bob, "viewer-01b-workload", full_page=False)
    seen = controls(bob)
    assert len(seen) > 20
    disabled = [c for c in seen if c["disabled"]]
    live = [c for c in seen if not c["disabled"]]
    # Disabled: dimmed (opacity <= 0.6 or greyed) and a tooltip that says why.
    assert {c["label"] for c in disabled} >= {"+ Add pattern", "Save", "name"}
    for c in disabled:
        assert REASON in c["title"], c
        assert c["opacity"] <= 0.6 or "grayscale" in c["filter"], c
        assert c["cursor"] == "not-allowed", c
    # Live: only controls whose effect this test checks below.
    kinds = {"run": [], "fork": [], "chip": [], "picker": [], "option": [], "link": []}
    for c in live:
        if c["tag"] == "a":
            kinds["link"].append(c)
        elif c["tag"] == "button" and c["name"] == "action" and c["value"] in LIVE_ACTIONS:
            kinds["run"].append(c)
        elif c["id"] == "fork-button":
            kinds["fork"].append(c)
        elif c["chip"]:
            kinds["chip"].append(c)
        elif c["type"] == "search" or c["name"] in ("failures_down", "failures_degrade"):
            kinds["picker"].append(c)
        elif c["name"] in LIVE_NAMES:
            kinds["option"].append(c)
        else:
            pytest.fail(f"a live control with no known effect on a viewer's page: {c}")
    assert {c["value"] for c in kinds["run"]} == LIVE_ACTIONS
    assert [c["label"] for c in kinds["chip"]] == ["×"]          # the saved failure h1/nic3
    # Links lead somewhere this viewer may go.
    for c in kinds["link"]:
        assert bob.request.get(c["href"]).status == 200, c
    # The chip's ×: removes the failure from the picked list and unselects it.
    bob.click('.chip button[aria-label="Remove h1/nic3"]')
    assert bob.locator(".picked .chip").count() == 0
    assert bob.evaluate("[...document.querySelector('#id_failures_down').selectedOptions].length") == 0
    # The filter: Enter picks the exact id.
    bob.fill(".picker-filter", "h0/nic0")
    bob.press(".picker-filter", "Enter")   # searched on the server: the chip comes with its answer
    bob.locator(".picked .chip").first.wait_for(timeout=10_000)
    assert [t.replace("\n", "") for t in bob.locator(".picked .chip").all_inner_texts()] == ["h0/nic0×"]
    shot(bob, "viewer-02-what-if-picked")


def test_viewer_what_if_runs_as_their_job_and_leaves_the_scenario(app_page, live_server, sign_in,
                                                                  shot, viewer_pod, other_user):
    from designer.models import Scenario, SimulationJob

    _, scenario = viewer_pod
    bob = sign_in(app_page, "bob", "bob-password-1")
    bob.goto(live_server.url + reverse("scenario_edit", args=[scenario.pk]))
    bob.fill(".picker-filter", "h0/nic0")
    bob.press(".picker-filter", "Enter")
    bob.locator('.picked .chip button[aria-label="Remove h0/nic0"]').wait_for(timeout=10_000)
    bob.fill("#id_failures_degrade", "h0/gpu0-pcie0 0.5")
    bob.click('button[value="simulate"]')
    bob.wait_for_url("**/jobs/*/")
    job = SimulationJob.objects.latest("pk")
    assert job.submitted_by == other_user and job.scenario_id == scenario.pk
    assert sorted(f["target"] for f in job.inputs["failures"]) == ["h0/gpu0-pcie0", "h0/nic0", "h1/nic3"]
    assert job.parameters.get("failures_override") is True
    saved = Scenario.objects.get(pk=scenario.pk)
    assert saved.failures == [{"target": "h1/nic3", "mode": "down"}] and saved.name == "ring"
    shot(bob, "viewer-03-what-if-job")
    assert not bob.js_errors


def test_viewer_run_rules_on_the_server(client, viewer_pod, other_user, django_user_model):
    """The what-if is the viewer's run only: unknown targets are refused with a message, an
    unchanged failure list runs the saved scenario, and a stranger cannot run at all."""
    from designer.models import SimulationJob

    _, scenario = viewer_pod
    url = reverse("scenario_edit", args=[scenario.pk])
    client.force_login(other_user)
    before = SimulationJob.objects.count()
    response = client.post(url, {"action": "simulate", "what_if": "1", "failures_down": ["nope/x"]},
                           follow=True)
    assert SimulationJob.objects.count() == before
    assert "nope/x" in response.content.decode()                     # located, shown to the user
    client.post(url, {"action": "simulate", "what_if": "1", "failures_down": ["h1/nic3"]})
    job = SimulationJob.objects.latest("pk")
    assert job.inputs["failures"] == [{"target": "h1/nic3", "mode": "down"}]
    assert "failures_override" not in job.parameters                 # same as saved: no what-if
    stranger = django_user_model.objects.create_user("zed", password="zed-password-1")
    client.force_login(stranger)
    assert client.post(url, {"action": "simulate", "what_if": "1"}).status_code == 404
    assert SimulationJob.objects.count() == before + 1
