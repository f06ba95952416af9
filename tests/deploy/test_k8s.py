"""deploy/k8s/ (issue 21 item 3): rendered from deploy/services.yaml (drift fails CI, as for compose),
built by the real `kubectl kustomize` for both overlays, and every object validated against the
OpenAPI schemas of a pinned Kubernetes version (kubernetes-validate, strict: unknown fields fail).
KEDA's ScaledObject is a CRD those schemas do not know: it is checked against the schema in
tests/deploy/schemas/ (the fields we use, from KEDA's CRD), not skipped. KEDA is optional: the
overlays scale the env fleet with a CPU HPA, and the `keda` component (built here into an overlay
of its own, as a user would) swaps it for the ScaledObject."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import jsonschema
import kubernetes_validate
import pytest
import yaml

from halo.cli import deployspec, k8s

from .conftest import REPO, halo

OVERLAYS = ("cpu", "gpu")
CRD_SCHEMAS = {("keda.sh/v1alpha1", "ScaledObject"): Path(__file__).parent / "schemas" / "keda-scaledobject.json"}


def kustomize(overlay: str | Path) -> list[dict]:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.fail("kubectl is missing (it renders kustomize trees offline)")
    path = overlay if isinstance(overlay, Path) else REPO / "deploy" / "k8s" / "overlays" / overlay
    done = subprocess.run([kubectl, "kustomize", str(path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return [o for o in yaml.safe_load_all(done.stdout) if o]


def user_overlay(where: Path, overlay: str, **extra: object) -> Path:
    """An overlay of a user's own, outside the repository, on top of one of ours (as the docs say)."""
    where.mkdir(parents=True, exist_ok=True)
    rel = lambda p: os.path.relpath(p, where)   # noqa: E731
    body = {"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization",
            "resources": [rel(REPO / "deploy" / "k8s" / "overlays" / overlay)]}
    for key, value in extra.items():
        body[key] = [rel(REPO / "deploy" / "k8s" / v) if key == "components" else v for v in value] \
            if isinstance(value, list) else value
    (where / "kustomization.yaml").write_text(yaml.safe_dump(body))
    return where


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, list[dict]]:
    """Both overlays, and the cpu overlay with the KEDA component ("cpu+keda")."""
    out = {overlay: kustomize(overlay) for overlay in OVERLAYS}
    out["cpu+keda"] = kustomize(user_overlay(tmp_path_factory.mktemp("keda"), "cpu", components=["components/keda"]))
    return out


def test_committed_tree_is_what_the_description_generates():
    done = halo("deploy", "render", "--check")
    assert done.returncode == 0, done.stdout + done.stderr
    for path, text in k8s.rendered_k8s(deployspec.load()).items():
        assert path.exists(), f"{path} is missing: run `halo deploy render`"
        assert path.read_text() == text, f"{path} drifted from deploy/services.yaml"


def test_check_fails_when_a_manifest_drifts(tmp_path, monkeypatch):
    files = k8s.deployment_files()
    env = k8s.K8S_ROOT / "base" / "env.yaml"
    drifted = tmp_path / "env.yaml"
    drifted.write_text(env.read_text().replace("pool_size", "pool-size"))
    files[drifted] = files.pop(env)
    assert deployspec.render(check=True, files=files) == 1


def test_every_object_validates_against_the_pinned_kubernetes_version(built):
    version = deployspec.load().kubernetes.version
    checked = 0
    for overlay, objects in built.items():
        for obj in objects:
            where = f"{overlay}: {obj['kind']}/{obj['metadata']['name']}"
            crd = CRD_SCHEMAS.get((obj["apiVersion"], obj["kind"]))
            if crd is not None:
                jsonschema.validate(obj, json.loads(crd.read_text()))
            else:
                try:
                    kubernetes_validate.validate(obj, version, strict=True)
                except kubernetes_validate.ValidationError as exc:
                    raise AssertionError(f"{where}: {exc.message} at {'.'.join(map(str, exc.path))}") from None
            checked += 1
    assert checked > 40


def test_the_crd_schema_rejects_what_keda_would(built):
    scaled = next(o for o in built["cpu+keda"] if o["kind"] == "ScaledObject")
    schema = json.loads(CRD_SCHEMAS[("keda.sh/v1alpha1", "ScaledObject")].read_text())
    broken = json.loads(json.dumps(scaled))
    del broken["spec"]["scaleTargetRef"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)
    broken = json.loads(json.dumps(scaled))
    broken["spec"]["triggers"][0]["metadata"]["threshold"] = 6      # KEDA's metadata values are strings
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)


def by_kind(objects: list[dict], kind: str) -> dict[str, dict]:
    return {o["metadata"]["name"]: o for o in objects if o["kind"] == kind}


def container(workload: dict) -> dict:
    return workload["spec"]["template"]["spec"]["containers"][0]


def test_the_env_fleet_is_a_headless_scalable_set_the_trainer_reaches_by_name(built):
    objects = built["cpu"]
    services, deployments = by_kind(objects, "Service"), by_kind(objects, "Deployment")
    assert services["env"]["spec"]["clusterIP"] == "None"                       # every ready pod in DNS
    assert "replicas" not in deployments["env"]["spec"]                          # the autoscaler's to set
    env = {e["name"]: e["value"] for e in container(deployments["trainer"])["env"]}
    assert env["HALO_TRAINER_ENV_TARGET"] == "fleet://env:50051"
    probe = container(deployments["env"])["readinessProbe"]
    assert probe["grpc"] == {"port": 50051, "service": "halo.v1.EnvService"}    # NOT_SERVING (draining) = not ready
    # liveness asks a name that stays SERVING through a drain: a draining pod is not restarted
    assert container(deployments["env"])["livenessProbe"]["grpc"] == {"port": 50051, "service": "liveness"}
    requests = container(deployments["env"])["resources"]["requests"]
    assert requests == {"cpu": "2", "memory": "1400Mi"}
    assert "halo bench env" in deployments["env"]["spec"]["template"]["metadata"]["annotations"]["halo/sizing"]
    assert set(by_kind(objects, "PodDisruptionBudget")) == {"env"}
    assert by_kind(objects, "PersistentVolumeClaim")["runs"]["spec"]["accessModes"] == ["ReadWriteMany"]
    assert all(o["metadata"].get("namespace") == "halo" for o in objects if o["kind"] != "Namespace")


def test_env_autoscaling_is_on_session_demand_with_keda_and_on_cpu_without(built):
    for overlay in OVERLAYS:   # without KEDA installed: no CRD in the overlays, a CPU HPA owns the count
        assert not by_kind(built[overlay], "ScaledObject")
        hpa = by_kind(built[overlay], "HorizontalPodAutoscaler")["env"]["spec"]
        assert hpa["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "env"}
        (cpu,) = hpa["metrics"]
        assert cpu["containerResource"]["container"] == "env" and cpu["containerResource"]["name"] == "cpu"
    keda = built["cpu+keda"]
    assert not by_kind(keda, "HorizontalPodAutoscaler")     # KEDA makes its own: two would fight over the count
    scaled = by_kind(keda, "ScaledObject")["env"]
    trigger = scaled["spec"]["triggers"][0]
    query = trigger["metadata"]["query"]
    # demand, not only what is open: open sessions stop at the pools' capacity
    assert trigger["type"] == "prometheus"
    assert {"halo_env_sessions_active", "halo_env_creates_waiting", "halo_env_pool_rejections_total"} <= set(
        w.split("{")[0] for w in query.replace("(", " ").split())
    assert "memory" not in json.dumps(scaled)
    behavior = scaled["spec"]["advanced"]["horizontalPodAutoscalerConfig"]["behavior"]
    assert behavior["scaleUp"]["policies"][0] == {"type": "Percent", "value": 100, "periodSeconds": 30}
    config = yaml.safe_load(by_kind(built["cpu"], "ConfigMap")["prometheus-config"]["data"]["prometheus.yml"])
    job = config["scrape_configs"][0]
    assert job["kubernetes_sd_configs"] == [{"role": "pod", "namespaces": {"names": ["halo"]}}]   # a target per pod
    env_pod = by_kind(built["cpu"], "Deployment")["env"]["spec"]["template"]["metadata"]["annotations"]
    assert env_pod["prometheus.io/scrape"] == "true" and env_pod["prometheus.io/port"] == "9101"
    role = by_kind(built["cpu"], "Role")["prometheus"]
    assert {"pods"} <= set(role["rules"][0]["resources"])


def test_each_env_pod_carries_its_sites_server_on_localhost_with_its_state_on_the_pods_volume(built):
    objects = built["cpu"]
    pod = by_kind(objects, "Deployment")["env"]["spec"]["template"]["spec"]
    (sites,) = pod["initContainers"]
    # a native sidecar: up (startup probe passed) before the env container, stopped after it, so a
    # draining env pod keeps its sites server until its last session ends
    assert sites["name"] == "sites" and sites["restartPolicy"] == "Always"
    assert sites["command"] == ["halo", "serve", "sites"] and "startupProbe" in sites
    env = {e["name"]: e.get("value") for e in pod["containers"][0]["env"]}
    side = {e["name"]: e.get("value") for e in sites["env"]}
    assert env["HALO_ENV_SITES_URL"] == f"http://127.0.0.1:{side['HALO_SITES_PORT']}"
    (mount,) = [m for m in sites["volumeMounts"] if m["mountPath"] == side["HALO_SITES_DATA_DIR"]]
    volume = {v["name"]: v for v in pod["volumes"]}[mount["name"]]
    assert "emptyDir" in volume                 # the pod's own: survives a sites restart, leaves with the pod
    # no sites workload or Service of its own: nothing routes one pod's sessions to another pod's state
    assert not by_kind(objects, "StatefulSet")
    assert "sites" not in by_kind(objects, "Service") and "sites" not in by_kind(objects, "Deployment")
    assert all("sessionAffinity" not in o["spec"] for o in by_kind(objects, "Service").values())
    assert "sites-state" not in by_kind(objects, "PersistentVolumeClaim")


def test_env_pods_drain_and_may_patch_their_own_deletion_cost(built):
    objects = built["cpu"]
    pod = by_kind(objects, "Deployment")["env"]["spec"]["template"]["spec"]
    env = {e["name"]: e for e in pod["containers"][0]["env"]}
    drain = int(env["HALO_ENV_DRAIN_TIMEOUT_S"]["value"])
    assert drain >= 300 and pod["terminationGracePeriodSeconds"] >= drain + 30     # the drain, then closing
    assert env["HALO_ENV_POD_NAME"]["valueFrom"] == {"fieldRef": {"fieldPath": "metadata.name"}}
    assert env["HALO_ENV_POD_NAMESPACE"]["valueFrom"] == {"fieldRef": {"fieldPath": "metadata.namespace"}}
    assert pod["serviceAccountName"] == "env"
    assert by_kind(objects, "Role")["env"]["rules"] == [{"apiGroups": [""], "resources": ["pods"], "verbs": ["patch"]}]
    binding = by_kind(objects, "RoleBinding")["env"]
    assert binding["roleRef"]["name"] == "env"
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "env", "namespace": "halo"}]
    # the settings the manifests set are the env service's own (a renamed flag fails here)
    from halo.env.config import EnvSettings
    for name in ("HALO_ENV_DRAIN_TIMEOUT_S", "HALO_ENV_POD_NAME", "HALO_ENV_POD_NAMESPACE"):
        assert name.removeprefix("HALO_ENV_").lower() in EnvSettings.model_fields


def test_the_overlays_differ_where_they_should(built):
    cpu, gpu = built["cpu"], built["gpu"]
    assert "vllm" not in by_kind(cpu, "Deployment")
    vllm = by_kind(gpu, "Deployment")["vllm"]
    pod = vllm["spec"]["template"]["spec"]
    assert pod["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == 1
    assert pod["nodeSelector"] == {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}
    assert "--served-model-name=qwen3-vl" in pod["containers"][0]["args"]
    assert not any("${" in a for a in pod["containers"][0]["args"])                 # compose's defaults, resolved
    gateway_cpu = {e["name"]: e["value"] for e in container(by_kind(cpu, "Deployment")["gateway"])["env"]}
    gateway_gpu = {e["name"]: e["value"] for e in container(by_kind(gpu, "Deployment")["gateway"])["env"]}
    assert gateway_cpu["HALO_GATEWAY_ONLY_ROUTES"] == '["embedded"]' and "HALO_GATEWAY_ONLY_ROUTES" not in gateway_gpu
    routes = by_kind(gpu, "ConfigMap")["gateway-config"]["data"]["gateway.yaml"]
    assert "base_url: http://vllm:8000/v1" in routes
