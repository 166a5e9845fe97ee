"""Root URL configuration: probes, the HTML pages (:mod:`designer.pages`), sign-in, the admin and
the REST API (``api/urls.py``, under ``/api/v1/``)."""
from django.contrib import admin
from django.urls import include, path

from designer.accounts import SignInView, sign_in_throttled
from designer.pages import (diagnose, explore, goodput, jobs, nccl, plan, profile, results, scenarios, sharing,
                            topologies)

pages = [
    path("", topologies.home, name="home"),
    path("topologies/", topologies.topology_list, name="topology_list"),
    path("topologies/new/", topologies.topology_new, name="topology_new"),
    path("topologies/<int:pk>/", topologies.topology_detail, name="topology_detail"),
    path("topologies/<int:pk>/diff/", topologies.revision_diff, name="revision_diff"),
    path("topologies/<int:pk>/editor/", topologies.editor, name="editor"),
    path("topologies/<int:pk>/hosts/", topologies.host_matrix, name="host_matrix"),
    path("topologies/<int:pk>/scenarios/new/", scenarios.scenario_new, name="scenario_new"),
    path("topologies/<int:pk>/scenarios/targets/", scenarios.scenario_targets,
         name="scenario_targets"),
    path("topologies/<int:pk>/nccl-tests/", nccl.nccl_tests, name="nccl_tests"),
    path("topologies/<int:pk>/diagnose/", diagnose.diagnose_form, name="diagnose"),
    path("topologies/<int:pk>/goodput/", goodput.goodput, name="goodput"),
    path("topologies/<int:pk>/plan/", plan.plan_page, name="plan"),
    path("topologies/<int:pk>/explore/", explore.explore_form, name="explore"),
    path("topologies/<int:pk>/plan/cables.csv", plan.plan_cables_csv, name="plan_cables_csv"),
    path("topologies/<int:pk>/plan/move/", plan.plan_move, name="plan_move"),
    path("topologies/<int:pk>/plan/reset/", plan.plan_reset, name="plan_reset"),
    path("scenarios/<int:pk>/", scenarios.scenario_edit, name="scenario_edit"),
    path("jobs/<int:pk>/", jobs.job_detail, name="job_detail"),
    path("jobs/<int:pk>/status/", jobs.job_status, name="job_status"),
    path("jobs/<int:pk>/cancel/", jobs.job_cancel, name="job_cancel"),
    path("jobs/<int:job_id>/result/", results.result_view, name="job_result"),
    path("compare/", results.compare_view, name="compare"),
    # Result page interactions: the figure of a picked flow / clicked host, built from posted data.
    path("figures/<str:kind>/", results.figure_render, name="figure_render"),
    path("profile/", profile.profile, name="profile"),
    path("profile/token/", profile.token_create, name="token_create"),
    path("profile/token/revoke/", profile.token_revoke, name="token_revoke"),
    # Sharing: the owner's page and actions, fork, and read-only share-link pages.
    path("topologies/<int:pk>/sharing/", sharing.sharing, name="sharing"),
    path("topologies/<int:pk>/sharing/grant/", sharing.share_grant, name="share_grant"),
    path("topologies/<int:pk>/sharing/<int:share_id>/role/", sharing.share_role,
         name="share_role"),
    path("topologies/<int:pk>/sharing/<int:share_id>/revoke/", sharing.share_revoke,
         name="share_revoke"),
    path("topologies/<int:pk>/links/new/", sharing.link_create, name="link_create"),
    path("topologies/<int:pk>/links/<int:link_id>/revoke/", sharing.link_revoke,
         name="link_revoke"),
    path("topologies/<int:pk>/transfer/", sharing.transfer, name="topology_transfer"),
    path("topologies/<int:pk>/delete/", sharing.delete, name="topology_delete"),
    path("topologies/<int:pk>/fork/", sharing.fork, name="topology_fork"),
    path("s/<str:token>/", sharing.link_home, name="link_home"),
    path("s/<str:token>/editor/", sharing.link_editor, name="link_editor"),
    path("s/<str:token>/hosts/", sharing.link_hosts, name="link_hosts"),
    path("s/<str:token>/results/<int:job_id>/", sharing.link_result, name="link_result"),
    # Sign-in with lockout and rate limits (designer/accounts.py); ahead of django.contrib.auth.urls.
    path("accounts/login/", SignInView.as_view(), name="login"),
]

urlpatterns = [
    path("", include("designer.ops.urls")),  # /healthz, /readyz, /metrics
    *pages,
    path("accounts/", include("django.contrib.auth.urls")),
    # The admin's sign-in behind the sign-in rates (matched before the admin's own URL).
    path("admin/login/", sign_in_throttled(admin.site.login)),
    path("admin/", admin.site.urls),
    path("api/v1/", include("api.urls")),
]

# JSON errors under /api/, Django's normal error pages elsewhere.
handler404 = "api.exception_handlers.handler404"
handler500 = "api.exception_handlers.handler500"
