"""``POST /topologies/<id>/diagnose/``: measured nccl-tests runs → a diagnosis job (202)."""
from __future__ import annotations

from api.schema import diagnose as doc
from api.serializers.diagnose import DiagnoseRequestSerializer, upload_data
from api.views.base import valid_data
from api.views.job_submit import JobSubmitView
from designer import services

__all__ = ["DiagnoseView"]


class DiagnoseView(JobSubmitView):
    @doc.post
    def post(self, request, topology_pk):
        def submit(topology):
            body = upload_data(request.data, request.FILES) if request.FILES else request.data
            data = valid_data(DiagnoseRequestSerializer, body)
            return services.job_submit_diagnose(topology=topology, user=request.user,
                                                runs=data["runs"], op=data["op"],
                                                options=dict(data.get("options") or {}))
        return self.accepted(request, topology_pk, submit)
