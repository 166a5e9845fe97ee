"""URL patterns of the HTML pages (designer/views.py), included at the site root."""
from django.urls import path

from designer import views

urlpatterns = [
    path("", views.home, name="home"),
    path("topologies/", views.topology_list, name="topology_list"),
    path("topologies/new/", views.topology_new, name="topology_new"),
    path("topologies/<int:pk>/", views.topology_detail, name="topology_detail"),
    path("topologies/<int:pk>/diff/", views.revision_diff, name="revision_diff"),
    path("topologies/<int:pk>/editor/", views.editor, name="editor"),
    path("topologies/<int:pk>/hosts/", views.host_matrix, name="host_matrix"),
    path("topologies/<int:pk>/scenarios/new/", views.scenario_new, name="scenario_new"),
    path("scenarios/<int:pk>/", views.scenario_edit, name="scenario_edit"),
    path("jobs/<int:pk>/", views.job_detail, name="job_detail"),
    path("jobs/<int:pk>/status/", views.job_status, name="job_status"),
    path("jobs/<int:pk>/cancel/", views.job_cancel, name="job_cancel"),
    path("jobs/<int:job_id>/result/", views.result_view, name="job_result"),
    path("compare/", views.compare_view, name="compare"),
    path("profile/", views.profile, name="profile"),
    path("profile/token/", views.token_create, name="token_create"),
    path("profile/token/revoke/", views.token_revoke, name="token_revoke"),
    path("vendor/plotly.min.js", views.plotly_js, name="plotly_js"),
    # Fallback for runserver/WhiteNoise before settings list designer.staticfinders.PlotlyFinder
    # (WhiteNoise passes unknown /static/ files on to Django).
    path("static/vendor/plotly.min.js", views.plotly_js),
]
