"""The pod's deletion cost: scale-down removes the env pod holding the fewest sessions.

Kubernetes' ReplicaSet controller deletes pods with the lowest `controller.kubernetes.io/pod-deletion-cost`
first when a Deployment scales down. An env pod that runs with `--pod-name`/`--pod-namespace` (the
downward API; deploy/k8s sets them) and a service account allowed to patch pods (the `env` Role in
deploy/k8s) keeps that annotation at its number of open sessions, so an autoscaler's scale-down
takes the emptiest pods and the drain (SIGTERM) has the least to wait for.

One JSON merge patch of the pod's own annotation, over the API server's REST interface, with the
pod's service-account token: a call the Kubernetes client library would wrap in a dependency far
larger than this module. The annotation is written only when the count changed, and at most every
`interval_s` (Kubernetes asks that it not be updated often: each patch is a write to etcd). A patch
refused for want of RBAC (401/403) or for a pod that is not there (404) stops the patching with one
warning: the pod runs on, and scale-down falls back to Kubernetes' own order.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import httpx

from halo.runtime.logging import get_logger

log = get_logger("halo.env.podcost")

ANNOTATION = "controller.kubernetes.io/pod-deletion-cost"
#: where every pod finds its service account's token and the cluster's CA (Kubernetes' fixed path)
SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")
DEFAULT_INTERVAL_S = 10.0
_GIVE_UP = {401, 403, 404}


@dataclass
class ApiServer:
    """Where the API server is and how this pod authenticates to it."""

    url: str                 # https://host:port
    token: str
    ca_file: str | None      # None: plain HTTP (a fake API server in tests)

    @classmethod
    def in_cluster(cls, environ: Mapping[str, str] = os.environ,
                   account_dir: Path = SERVICE_ACCOUNT_DIR) -> "ApiServer | None":
        """The API server as a pod sees it (KUBERNETES_SERVICE_HOST/PORT, the mounted token), or None
        outside a cluster or without a mounted service-account token."""
        host, port = environ.get("KUBERNETES_SERVICE_HOST"), environ.get("KUBERNETES_SERVICE_PORT", "443")
        token_file = account_dir / "token"
        if not host or not token_file.is_file():
            return None
        host = f"[{host}]" if ":" in host else host
        return cls(f"https://{host}:{port}", token_file.read_text().strip(), str(account_dir / "ca.crt"))


class PodDeletionCost:
    """Keeps one pod's deletion-cost annotation at `count()` (see the module's docstring)."""

    def __init__(self, api: ApiServer, namespace: str, pod: str, count: Callable[[], int],
                 interval_s: float = DEFAULT_INTERVAL_S) -> None:
        self.api, self.namespace, self.pod, self.count, self.interval_s = api, namespace, pod, count, interval_s
        self.written: int | None = None    # the value the pod carries, as far as this object knows
        self.stopped_because = ""          # why patching stopped ("" while it goes on)
        self._task: asyncio.Task | None = None
        self._http = httpx.AsyncClient(
            base_url=api.url, verify=api.ca_file if api.ca_file else False, timeout=5.0,
            headers={"Authorization": f"Bearer {api.token}"},
        )

    @property
    def path(self) -> str:
        return f"/api/v1/namespaces/{self.namespace}/pods/{self.pod}"

    async def sync(self) -> bool:
        """Patch the annotation when the count changed since the last patch; True when it wrote."""
        if self.stopped_because:
            return False
        value = self.count()
        if value == self.written:
            return False
        body = {"metadata": {"annotations": {ANNOTATION: str(value)}}}
        try:
            response = await self._http.patch(self.path, json=body,
                                              headers={"Content-Type": "application/merge-patch+json"})
        except httpx.HTTPError as exc:   # the API server away for a moment: the next round tries again
            log.warning("pod deletion cost not written", pod=self.pod, error=repr(exc))
            return False
        if response.status_code in _GIVE_UP:
            self.stopped_because = f"HTTP {response.status_code}: {response.text[:200]}"
            log.warning("pod deletion cost: patching stops (grant the pod's service account `patch` on pods)",
                        pod=self.pod, reason=self.stopped_because)
            return False
        if response.status_code >= 300:
            log.warning("pod deletion cost not written", pod=self.pod, status=response.status_code,
                        body=response.text[:200])
            return False
        self.written = value
        return True

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._forever())

    async def _forever(self) -> None:
        while not self.stopped_because:
            await self.sync()
            await asyncio.sleep(self.interval_s)

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await self._http.aclose()


def for_pod(namespace: str, pod: str, count: Callable[[], int], environ: Mapping[str, str] = os.environ,
            account_dir: Path = SERVICE_ACCOUNT_DIR, interval_s: float = DEFAULT_INTERVAL_S) -> PodDeletionCost | None:
    """A PodDeletionCost when this process knows its pod and runs in a cluster, else None (with one log
    line saying why, when a pod name was given)."""
    if not pod:
        return None
    api = ApiServer.in_cluster(environ, account_dir)
    if api is None:
        log.warning("pod deletion cost off: no API server or service-account token in this pod", pod=pod)
        return None
    return PodDeletionCost(api, namespace or "default", pod, count, interval_s)
