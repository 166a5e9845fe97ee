"""``manage.py seed_demo``: a demo account, a 16-host DGX-H100 cluster and two scenarios.

Idempotent: an existing demo topology is left as it is. The demo password is
``fabricscope-demo`` unless ``--password`` or DEMO_PASSWORD says otherwise; with DEBUG off a
password must be given explicitly (a documented password has no place on a real server).
"""
from __future__ import annotations

import os

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from designer import services
from designer.models import Topology

DEMO_USERNAME = "demo"
DEMO_PASSWORD = "fabricscope-demo"
DEMO_TOPOLOGY = "demo-16x-dgx-h100"

WORKLOAD = [
    {"id": "ar", "kind": "allreduce", "algorithm": "ring", "participants": {"kind": "gpu"},
     "bytes": 1e9},
    {"id": "load", "kind": "storage_read", "source": {"ids": ["storage0"]},
     "participants": {"group": "h0", "kind": "gpu"}, "bytes": 4e9, "via": "gpudirect"},
]
NIC_FAILURE = [{"target": "h0/nic0", "mode": "down"}]


class Command(BaseCommand):
    help = "Create the demo user, a 16-host DGX-H100 rail-optimized cluster and demo scenarios."

    def add_arguments(self, parser):
        parser.add_argument("--password", help=f"demo password (default {DEMO_PASSWORD!r} "
                                               "when DEBUG is on, or DEMO_PASSWORD)")

    def handle(self, *args, password=None, **options):
        password = password or os.environ.get("DEMO_PASSWORD")
        if not password:
            if not settings.DEBUG:
                raise CommandError("DEBUG is off: give the demo password with --password "
                                   "or DEMO_PASSWORD")
            password = DEMO_PASSWORD
        user = self._user(password)
        if Topology.objects.filter(owner=user, name=DEMO_TOPOLOGY).exists():
            self.stdout.write(f"demo data already present (topology {DEMO_TOPOLOGY!r})")
        else:
            self._topology(user)
        self.stdout.write(self.style.SUCCESS(
            f"demo login: username {DEMO_USERNAME!r}, password {password!r}"))

    def _user(self, password: str):
        User = get_user_model()
        user, created = User.objects.get_or_create(
            username=DEMO_USERNAME, defaults={"is_staff": True, "is_superuser": True,
                                              "email": "demo@example.com"})
        if created or not user.check_password(password):
            user.set_password(password)
            user.save(update_fields=["password"])
        return user

    @transaction.atomic
    def _topology(self, user) -> None:
        topology = services.topology_build(
            owner=user, name=DEMO_TOPOLOGY, template="dgx-h100", hosts=16,
            fabric="rail-optimized", options={"storage": 1},
            description="16 DGX H100 hosts, 8 rails of 400G, one storage server.")
        services.scenario_create(
            topology=topology, user=user, name="ring all-reduce + storage read",
            workload=WORKLOAD, routing={"nic_policy": "affinity", "multipath": "hash"})
        services.scenario_create(
            topology=topology, user=user, name="what-if: h0/nic0 down",
            description="The same traffic with GPU 0's NIC on host 0 failed.",
            workload=WORKLOAD, routing={"nic_policy": "affinity", "multipath": "hash"},
            failures=NIC_FAILURE)
        self.stdout.write(f"created topology {DEMO_TOPOLOGY!r} ({topology.gpu_count} GPUs, "
                          f"{topology.node_count} nodes, {topology.link_count} links) "
                          "with 2 scenarios")
