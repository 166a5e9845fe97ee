"""``POST /topologies/build-job/``: a cluster built on a worker as a job of kind ``build`` (202).

The inline path (``POST /topologies/`` with ``build``) builds in the request up to
``MAX_BUILD_HOSTS`` hosts; this one takes the same body up to ``FABRICSCOPE_BUILD_JOB_MAX_HOSTS``
(100,000 GPUs) and answers at once with the job to poll (``/jobs/{id}/``, progress 0-100); its
``result_url`` is the topology once the job succeeded.
"""
from __future__ import annotations

from api.schema import topologies as doc
from api.serializers.topologies import TopologyBuildJobSerializer
from api.views.job_submit import JobSubmitView
from designer import services

__all__ = ["TopologyBuildJobView"]


class TopologyBuildJobView(JobSubmitView):
    """Anyone signed in may build a topology of their own (as inline); a share-link visitor may
    not (403). The spec is checked whole before the topology and the job are written
    (``services.topology_build_submit``): a bad spec is a located 400 and nothing is saved."""

    @doc.build_job
    def post(self, request):
        spec = TopologyBuildJobSerializer(data=request.data)
        spec.is_valid(raise_exception=True)
        data, build = spec.validated_data, spec.validated_data["build"]
        job = services.topology_build_submit(
            owner=request.user, name=data["name"], description=data["description"],
            template=build["template"], hosts=build["hosts"], fabric=build["fabric"],
            options=spec.options())
        return self.queued(job)
