"""``POST /topologies/<id>/goodput/``: the goodput plan of the current revision (nothing saved);
with ``against`` (a topology id the requester may view), both designs side by side."""
from __future__ import annotations

from rest_framework.response import Response
from rest_framework.views import APIView

from api.permissions import IsAuthenticatedUser
from api.schema import goodput as doc
from api.serializers.goodput import GoodputRequestSerializer
from api.views.base import ApiMixin, body_ref, valid_data
from designer import selectors

__all__ = ["GoodputView", "COMPARE_FORMAT"]

#: Two designs under one plan (the CLI's ``goodput --against``; docs/FORMATS.md, "Goodput plan").
COMPARE_FORMAT = "fabricscope.goodput-compare/1"


class GoodputView(ApiMixin, APIView):
    """A read that takes a body, hence POST; anyone who may view the topology."""

    permission_classes = (IsAuthenticatedUser,)

    @doc.post
    def post(self, request, topology_pk):
        topology = selectors.topology_get_for(user=request.user, pk=topology_pk, action="view")
        plan = dict(valid_data(GoodputRequestSerializer, request.data))
        against = plan.pop("against", None)
        out = selectors.goodput_prediction(topology=topology, plan=plan)
        if against is None:
            return Response(out)
        other = body_ref(_viewable, request.user, against, "against")
        return Response({"format": COMPARE_FORMAT, "a": out, "b": selectors.goodput_prediction(topology=other, plan=plan)})


def _viewable(*, user, pk: int):
    return selectors.topology_get_for(user=user, pk=pk, action="view")
