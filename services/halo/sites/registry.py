"""Every replica the sites server hosts. Later replicas register here."""

from __future__ import annotations

from halo.sites.dashdish import DashDish
from halo.sites.gocalendar import GoCalendar
from halo.sites.gomail import GoMail
from halo.sites.marrisuite import MarriSuite
from halo.sites.networkin import NetworkIn
from halo.sites.omnizon import Omnizon
from halo.sites.opendining import OpenDining
from halo.sites.oracle import OracleStep, WrongAttempts
from halo.sites.playground import Playground
from halo.sites.replica import Replica
from halo.sites.staynb import StayNB
from halo.sites.topwork import TopWork
from halo.sites.udriver import UDriver
from halo.sites.zilloft import Zilloft

REPLICA_TYPES: list[type[Replica]] = [
    Playground, Omnizon, GoMail, GoCalendar, Zilloft,
    MarriSuite, OpenDining, StayNB, NetworkIn, TopWork, DashDish, UDriver,
]


def replica_task_ids() -> dict[str, frozenset[str]]:
    """site id -> task ids served by its replica (used by the env service's task registry)."""
    return {cls.site_id: cls.task_ids for cls in REPLICA_TYPES}


def attempts_for(site: str, task_id: str) -> tuple[list[OracleStep] | None, WrongAttempts]:
    """(oracle, plausible wrong attempts by label) of a replica task; None / {} where the replica has none."""
    for cls in REPLICA_TYPES:
        if cls.site_id == site:
            return cls.oracles.get(task_id), cls.wrong_attempts.get(task_id, {})
    return None, {}
