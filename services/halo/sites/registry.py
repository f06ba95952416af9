"""Every replica the sites server hosts. Later replicas register here."""

from __future__ import annotations

from halo.sites.playground import Playground
from halo.sites.replica import Replica

REPLICA_TYPES: list[type[Replica]] = [Playground]


def replica_task_ids() -> dict[str, frozenset[str]]:
    """site id -> task ids served by its replica (used by the env service's task registry)."""
    return {cls.site_id: cls.task_ids for cls in REPLICA_TYPES}
