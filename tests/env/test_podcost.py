"""The env pod's deletion cost (halo.env.podcost, issue 36 item 2) against a fake API server: a real
HTTP server on loopback standing in for Kubernetes' at the protocol boundary (no cluster runs here).
It records each request and answers as the API server does: 200 with the pod, or 403 for a service
account without RBAC to patch pods."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from halo.env import podcost


class FakeApiServer:
    """Records PATCH requests; answers `status` (200 echoes the patch as the pod's metadata)."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.status = 200
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_PATCH(self) -> None:   # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers["Content-Length"]))
                fake.requests.append({"path": self.path, "headers": dict(self.headers), "body": json.loads(body)})
                reply = json.dumps({"kind": "Pod", "metadata": json.loads(body)["metadata"]} if fake.status == 200 else
                                   {"kind": "Status", "code": fake.status, "reason": "Forbidden",
                                    "message": 'pods "env-0" is forbidden: User cannot patch resource "pods"'}).encode()
                self.send_response(fake.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def api():
    server = FakeApiServer()
    yield server
    server.close()


async def test_the_annotation_follows_the_open_sessions_and_is_written_only_when_it_changes(api):
    sessions = [3]
    cost = podcost.PodDeletionCost(podcost.ApiServer(api.url, "t0ken", None), "halo", "env-7d9f-abc",
                                   lambda: sessions[0])
    try:
        assert await cost.sync()
        (first,) = api.requests
        assert first["path"] == "/api/v1/namespaces/halo/pods/env-7d9f-abc"
        assert first["headers"]["Content-Type"] == "application/merge-patch+json"
        assert first["headers"]["Authorization"] == "Bearer t0ken"
        assert first["body"] == {"metadata": {"annotations": {"controller.kubernetes.io/pod-deletion-cost": "3"}}}
        assert not await cost.sync() and len(api.requests) == 1     # unchanged: no write to etcd
        sessions[0] = 0
        assert await cost.sync()
        assert api.requests[-1]["body"]["metadata"]["annotations"][podcost.ANNOTATION] == "0"
        assert cost.written == 0
    finally:
        await cost.close()


async def test_a_service_account_without_rbac_stops_the_patching_and_the_pod_runs_on(api):
    api.status = 403
    sessions = [1]
    cost = podcost.PodDeletionCost(podcost.ApiServer(api.url, "t", None), "halo", "env-0", lambda: sessions[0])
    try:
        assert not await cost.sync()
        assert "HTTP 403" in cost.stopped_because and "forbidden" in cost.stopped_because
        sessions[0] = 2
        assert not await cost.sync() and len(api.requests) == 1    # no more calls once refused
    finally:
        await cost.close()


async def test_a_transient_server_error_is_tried_again(api):
    api.status = 500
    cost = podcost.PodDeletionCost(podcost.ApiServer(api.url, "t", None), "halo", "env-0", lambda: 4)
    try:
        assert not await cost.sync() and not cost.stopped_because
        api.status = 200
        assert await cost.sync() and cost.written == 4
    finally:
        await cost.close()


async def test_the_loop_patches_on_its_own(api):
    sessions = [2]
    cost = podcost.PodDeletionCost(podcost.ApiServer(api.url, "t", None), "halo", "env-0", lambda: sessions[0],
                                   interval_s=0.05)
    cost.start()
    try:
        import asyncio
        for _ in range(200):
            if cost.written == 2:
                break
            await asyncio.sleep(0.05)
        sessions[0] = 5
        for _ in range(200):
            if cost.written == 5:
                break
            await asyncio.sleep(0.05)
        assert [r["body"]["metadata"]["annotations"][podcost.ANNOTATION] for r in api.requests] == ["2", "5"]
    finally:
        await cost.close()


def test_in_cluster_settings_come_from_the_pods_environment_and_token(tmp_path):
    assert podcost.ApiServer.in_cluster({}, tmp_path) is None                                     # not in a cluster
    env = {"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443"}
    assert podcost.ApiServer.in_cluster(env, tmp_path) is None                                    # no token mounted
    (tmp_path / "token").write_text("abc\n")
    api = podcost.ApiServer.in_cluster(env, tmp_path)
    assert api == podcost.ApiServer("https://10.96.0.1:443", "abc", str(tmp_path / "ca.crt"))
    assert podcost.ApiServer.in_cluster({"KUBERNETES_SERVICE_HOST": "fd00::1"}, tmp_path).url == "https://[fd00::1]:443"
    assert podcost.for_pod("halo", "", lambda: 0, env, tmp_path) is None                         # no pod name: off
    assert podcost.for_pod("halo", "env-0", lambda: 0, {}, tmp_path) is None
