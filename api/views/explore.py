"""``POST /topologies/<id>/explore/``: a grid of designs × a job mix → an explore job (202)."""
from __future__ import annotations

from api.schema import explore as doc
from api.serializers.explore import ExploreRequestSerializer
from api.views.base import valid_data
from api.views.job_submit import JobSubmitView
from designer import services

__all__ = ["ExploreView"]


class ExploreView(JobSubmitView):
    @doc.post
    def post(self, request, topology_pk):
        def submit(topology):
            data = dict(valid_data(ExploreRequestSerializer, request.data))
            chunks = data.pop("chunks", None)
            grid_request = {k: v for k, v in request.data.items()
                            if k in data or k in ("format", "options")}
            return services.job_submit_explore(topology=topology, user=request.user,
                                               request=grid_request, chunks=chunks)
        return self.accepted(request, topology_pk, submit)
