"""The editor page: its configuration script reads back as the config the view built,
its revision's document comes beside the page (``?document=<revision id>``, gzip, cached per
revision), and its Generate dialog is the New page's cluster form (``_build_form.html``)."""
from __future__ import annotations

import gzip
import json
import re

import pytest
from django.urls import reverse

from designer.pages.forms.topologies import TopologyNewForm

pytestmark = pytest.mark.django_db


def _script(html: str, element_id: str) -> str:
    match = re.search(rf'<script id="{element_id}" type="application/json">(.*?)</script>', html, re.S)
    assert match, element_id
    return match.group(1)


def test_editor_config_script_reads_back_and_escapes_markup(client, user, small_topology):
    from designer.pages.selectors import editor_config, editor_config_script

    client.force_login(user)
    html = client.get(reverse("editor", args=[small_topology.pk])).content.decode()
    config = json.loads(_script(html, "editor-config"))
    assert config["document"] is None and config["revision"] == 1  # the document is beside it
    tricky = editor_config_script({"name": "</script><b>&"})
    assert "</script><b>" not in tricky[:-len("</script>")]
    assert json.loads(_script(tricky, "editor-config")) == {"name": "</script><b>&"}
    assert editor_config(topology=small_topology, user=user, csrf_token="t")["topology_id"] == \
        config["topology_id"]


def test_generate_dialog_is_the_new_pages_form(client, user, small_topology):
    client.force_login(user)
    editor = client.get(reverse("editor", args=[small_topology.pk])).content.decode()
    new = client.get(reverse("topology_new")).content.decode()
    template = editor[editor.index('<template id="fs-build-form">'):]
    template = template[:template.index("</template>")]
    marked = lambda html: re.findall(r'data-build-param="(\w+)"', html)  # noqa: E731
    assert marked(template) == marked(new) == list(TopologyNewForm.BUILD_FIELDS)
    assert 'id="build-preview"' in template


def test_readonly_editor_has_no_generate_form(client, user, small_topology, django_user_model):
    from designer import services

    viewer = django_user_model.objects.create_user("bob", password="bob-password-1")
    services.share_grant(topology=small_topology, actor=user, user=viewer, role="viewer")
    client.force_login(viewer)
    html = client.get(reverse("editor", args=[small_topology.pk])).content.decode()
    assert json.loads(_script(html, "editor-config"))["readonly"] is True
    assert 'id="fs-build-form"' not in html


def test_document_comes_beside_the_page_as_the_stored_revision(client, user, small_topology):
    """The page names ``?document=<revision id>`` (and preloads it); the answer is the stored
    document, gzip-encoded when accepted, cacheable for good (a revision never changes)."""
    from designer import editor_document

    client.force_login(user)
    revision = small_topology.current_revision
    html = client.get(reverse("editor", args=[small_topology.pk])).content.decode()
    url = json.loads(_script(html, "editor-config"))["document_url"]
    assert url == f"{reverse('editor', args=[small_topology.pk])}?document={revision.pk}"
    assert f'<link rel="preload" href="{url}" as="fetch" crossorigin>' in html
    editor_document.cache_clear()
    for _ in range(2):  # read and compressed, then from the cache: the same bytes
        response = client.get(url, HTTP_ACCEPT_ENCODING="gzip, deflate, br")
        assert response.status_code == 200 and response["Content-Encoding"] == "gzip"
        assert response["Content-Type"] == "application/json"
        assert "immutable" in response["Cache-Control"] and "private" in response["Cache-Control"]
        assert json.loads(gzip.decompress(response.content)) == revision.document
    plain = client.get(url)
    assert not plain.has_header("Content-Encoding")
    assert json.loads(plain.content) == revision.document


def test_document_of_another_topology_or_user_is_not_found(client, user, small_topology,
                                                            django_user_model):
    from designer import services

    other = services.topology_build(owner=user, name="pod-1", template="dgx-h100", hosts=1)
    client.force_login(user)
    editor = reverse("editor", args=[small_topology.pk])
    # Another topology's revision, asked through this one: 404 (the visibility check is per URL).
    assert client.get(f"{editor}?document={other.current_revision_id}").status_code == 404
    assert client.get(f"{editor}?document=").status_code == 404
    assert client.get(f"{editor}?document=x1").status_code == 400
    stranger = django_user_model.objects.create_user("eve", password="eve-password-1")
    client.force_login(stranger)
    url = f"{editor}?document={small_topology.current_revision_id}"
    assert client.get(url, HTTP_ACCEPT_ENCODING="gzip").status_code == 404


def test_blank_topology_carries_its_document_inline(client, user):
    from designer import services

    blank = services.topology_create(owner=user, name="blank")  # no revision yet
    client.force_login(user)
    html = client.get(reverse("editor", args=[blank.pk])).content.decode()
    config = json.loads(_script(html, "editor-config"))
    assert config["document_url"] is None and config["document"]["nodes"] == []
    assert 'rel="preload"' not in html
