"""Django admin for every model: list columns are plain fields (never JSON), joins selected.

JSON columns are deferred in every queryset; a change page loads the one it shows lazily.
"""
from django.contrib import admin

from designer.models import (
    Scenario, SimulationJob, SimulationResult, SweepChunk, Topology, TopologyRevision)


@admin.register(Topology)
class TopologyAdmin(admin.ModelAdmin):
    list_display = ("name", "owner", "revision_number", "host_count", "gpu_count", "node_count",
                    "link_count", "updated_at")
    list_select_related = ("owner",)
    search_fields = ("name", "description", "owner__username")
    raw_id_fields = ("owner", "current_revision")
    readonly_fields = ("revision_number", "host_count", "gpu_count", "node_count", "link_count",
                       "created_at", "updated_at")


@admin.register(TopologyRevision)
class TopologyRevisionAdmin(admin.ModelAdmin):
    list_display = ("topology", "number", "author", "message", "checksum", "created_at")
    list_select_related = ("topology", "author")
    search_fields = ("topology__name", "message", "checksum")
    raw_id_fields = ("topology", "author")

    def get_queryset(self, request):
        return super().get_queryset(request).defer("stored_document", "patch")

    def has_change_permission(self, request, obj=None):  # revisions are immutable
        return False


@admin.register(Scenario)
class ScenarioAdmin(admin.ModelAdmin):
    list_display = ("name", "topology", "revision_number", "mode", "created_by", "updated_at")
    list_select_related = ("topology", "revision", "created_by")
    list_filter = ("mode",)
    search_fields = ("name", "topology__name")
    raw_id_fields = ("topology", "revision", "created_by")

    @admin.display(description="revision", ordering="revision__number")
    def revision_number(self, obj):
        return obj.revision.number

    def get_queryset(self, request):
        return super().get_queryset(request).defer("revision__stored_document", "revision__patch")


class SweepChunkInline(admin.TabularInline):
    model = SweepChunk
    fields = ("index", "state", "progress", "message", "attempts", "worker_hostname", "heartbeat_at",
              "error")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = True

    def get_queryset(self, request):
        return super().get_queryset(request).defer("result", "failures")


@admin.register(SimulationJob)
class SimulationJobAdmin(admin.ModelAdmin):
    list_display = ("pk", "kind", "state", "progress", "message", "topology", "scenario",
                    "attempts", "worker_hostname", "created_at", "finished_at")
    list_select_related = ("topology", "scenario")
    list_filter = ("kind", "state")
    search_fields = ("topology__name", "scenario__name", "celery_task_id", "worker_hostname")
    raw_id_fields = ("topology", "revision", "scenario", "submitted_by")
    readonly_fields = ("created_at", "started_at", "finished_at", "heartbeat_at")
    inlines = [SweepChunkInline]

    def get_queryset(self, request):
        return super().get_queryset(request).defer("inputs", "parameters")


@admin.register(SimulationResult)
class SimulationResultAdmin(admin.ModelAdmin):
    list_display = ("job", "created_at")
    list_select_related = ("job",)
    raw_id_fields = ("job",)

    def get_queryset(self, request):
        return super().get_queryset(request).defer("data")


@admin.register(SweepChunk)
class SweepChunkAdmin(admin.ModelAdmin):
    list_display = ("job", "index", "state", "progress", "attempts", "worker_hostname",
                    "heartbeat_at")
    list_select_related = ("job",)
    list_filter = ("state",)
    raw_id_fields = ("job",)

    def get_queryset(self, request):
        return super().get_queryset(request).defer("result", "failures")
