"""Routes of ``/api/v1/`` (included by the root URLconf)."""
from __future__ import annotations

from django.urls import path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.routers import DefaultRouter

from api import views
from api.exception_handlers import not_found_view
from api.schema import OfflineRedocView
from api.views.bom import TopologyBomView
from api.views.builds import TopologyBuildJobView
from api.views.chakra import ChakraImportView
from api.views.diagnose import DiagnoseView
from api.views.explore import ExploreView
from api.views.goodput import GoodputView
from api.views.nccl_log import NcclLogView
from api.views.nccl_tests import NcclTestsView
from api.views.plan import PlanView

router = DefaultRouter()
router.include_format_suffixes = False
router.register("topologies", views.TopologyViewSet, basename="topology")
router.register("scenarios", views.ScenarioViewSet, basename="scenario")
router.register("jobs", views.JobViewSet, basename="job")
router.register("templates", views.TemplateViewSet, basename="template")

revisions = views.RevisionViewSet

urlpatterns = [
    path("topologies/build-job/", TopologyBuildJobView.as_view(), name="topology-build-job"),
    path("topologies/<int:topology_pk>/revisions/",
         revisions.as_view({"get": "list", "post": "create"}), name="revision-list"),
    path("topologies/<int:topology_pk>/revisions/<int:number>/",
         revisions.as_view({"get": "retrieve"}), name="revision-detail"),
    path("topologies/<int:topology_pk>/export/", views.TopologyExportView.as_view(),
         name="topology-export"),
    path("topologies/<int:topology_pk>/nccl-tests/", NcclTestsView.as_view(), name="topology-nccl-tests"),
    path("topologies/<int:topology_pk>/nccl-log/", NcclLogView.as_view(), name="topology-nccl-log"),
    path("topologies/<int:topology_pk>/chakra-import/", ChakraImportView.as_view(), name="topology-chakra-import"),
    path("topologies/<int:topology_pk>/bom/", TopologyBomView.as_view(), name="topology-bom"),
    path("topologies/<int:topology_pk>/goodput/", GoodputView.as_view(), name="topology-goodput"),
    path("topologies/<int:topology_pk>/plan/", PlanView.as_view(), name="topology-plan"),
    path("topologies/<int:topology_pk>/diagnose/", DiagnoseView.as_view(), name="topology-diagnose"),
    path("topologies/<int:topology_pk>/explore/", ExploreView.as_view(), name="topology-explore"),
    path("topologies/<int:topology_pk>/shares/",
         views.ShareViewSet.as_view({"get": "list", "post": "create"}), name="share-list"),
    path("topologies/<int:topology_pk>/shares/<int:pk>/",
         views.ShareViewSet.as_view({"patch": "partial_update", "delete": "destroy"}),
         name="share-detail"),
    path("topologies/<int:topology_pk>/links/",
         views.ShareLinkViewSet.as_view({"get": "list", "post": "create"}), name="link-list"),
    path("topologies/<int:topology_pk>/links/<int:pk>/",
         views.ShareLinkViewSet.as_view({"delete": "destroy"}), name="link-detail"),
    path("catalog/", views.CatalogView.as_view(), name="catalog"),
    path("validate/", views.ValidateView.as_view(), name="validate"),
    path("auth/token/", views.AuthTokenView.as_view(), name="auth-token"),
    path("auth/token/<int:pk>/", views.AuthTokenDetailView.as_view(), name="auth-token-detail"),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="swagger-ui"),
    path("redoc/", OfflineRedocView.as_view(url_name="schema"), name="redoc"),
    *router.urls,
    # Last: any other path under /api/v1/ is a JSON 404, not Django's HTML page.
    re_path(r"^[\s\S]*$", not_found_view, name="not-found"),  # [\s\S]: a newline in a path too (reversible, unlike (?s))
]
