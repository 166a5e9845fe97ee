"""URL patterns of the HTML pages (designer/views.py), included at the site root."""
from django.contrib.auth import views as auth_views
from django.urls import path

from designer import views, views_figures, views_nccl, views_sharing
from designer.accounts import SignInForm

urlpatterns = [
    path("", views.home, name="home"),
    path("topologies/", views.topology_list, name="topology_list"),
    path("topologies/new/", views.topology_new, name="topology_new"),
    path("topologies/<int:pk>/", views.topology_detail, name="topology_detail"),
    path("topologies/<int:pk>/diff/", views.revision_diff, name="revision_diff"),
    path("topologies/<int:pk>/editor/", views.editor, name="editor"),
    path("topologies/<int:pk>/hosts/", views.host_matrix, name="host_matrix"),
    path("topologies/<int:pk>/scenarios/new/", views.scenario_new, name="scenario_new"),
    path("topologies/<int:pk>/nccl-tests/", views_nccl.nccl_tests, name="nccl_tests"),
    path("scenarios/<int:pk>/", views.scenario_edit, name="scenario_edit"),
    path("jobs/<int:pk>/", views.job_detail, name="job_detail"),
    path("jobs/<int:pk>/status/", views.job_status, name="job_status"),
    path("jobs/<int:pk>/cancel/", views.job_cancel, name="job_cancel"),
    path("jobs/<int:job_id>/result/", views.result_view, name="job_result"),
    path("compare/", views.compare_view, name="compare"),
    # Result page interactions: the figure of a picked flow / clicked host, built from posted data.
    path("figures/<str:kind>/", views_figures.figure_render, name="figure_render"),
    path("profile/", views.profile, name="profile"),
    path("profile/token/", views.token_create, name="token_create"),
    path("profile/token/revoke/", views.token_revoke, name="token_revoke"),
    # Sharing (issue 9): the owner's page and actions, fork, and read-only share-link pages.
    path("topologies/<int:pk>/sharing/", views_sharing.sharing, name="sharing"),
    path("topologies/<int:pk>/sharing/grant/", views_sharing.share_grant, name="share_grant"),
    path("topologies/<int:pk>/sharing/<int:share_id>/role/", views_sharing.share_role,
         name="share_role"),
    path("topologies/<int:pk>/sharing/<int:share_id>/revoke/", views_sharing.share_revoke,
         name="share_revoke"),
    path("topologies/<int:pk>/links/new/", views_sharing.link_create, name="link_create"),
    path("topologies/<int:pk>/links/<int:link_id>/revoke/", views_sharing.link_revoke,
         name="link_revoke"),
    path("topologies/<int:pk>/transfer/", views_sharing.transfer, name="topology_transfer"),
    path("topologies/<int:pk>/delete/", views_sharing.delete, name="topology_delete"),
    path("topologies/<int:pk>/fork/", views_sharing.fork, name="topology_fork"),
    path("s/<str:token>/", views_sharing.link_home, name="link_home"),
    path("s/<str:token>/editor/", views_sharing.link_editor, name="link_editor"),
    path("s/<str:token>/hosts/", views_sharing.link_hosts, name="link_hosts"),
    path("s/<str:token>/results/<int:job_id>/", views_sharing.link_result, name="link_result"),
    # Sign-in with lockout (designer/accounts.py); ahead of django.contrib.auth.urls' login.
    path("accounts/login/", auth_views.LoginView.as_view(authentication_form=SignInForm),
         name="login"),
]
