"""deploy/k8s/ (issue 21 item 3): rendered from deploy/services.yaml (drift fails CI, as for compose),
built by the real `kubectl kustomize` for both overlays, and every object validated against the
OpenAPI schemas of a pinned Kubernetes version (kubernetes-validate, strict: unknown fields fail).
KEDA's ScaledObject is a CRD those schemas do not know: it is checked against the schema in
tests/deploy/schemas/ (the fields we use, from KEDA's CRD), not skipped."""

from __future__ import annotations

import json
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


def kustomize(overlay: str) -> list[dict]:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.fail("kubectl is missing (it renders kustomize trees offline)")
    done = subprocess.run([kubectl, "kustomize", str(REPO / "deploy" / "k8s" / "overlays" / overlay)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return [o for o in yaml.safe_load_all(done.stdout) if o]


@pytest.fixture(scope="module")
def built() -> dict[str, list[dict]]:
    return {overlay: kustomize(overlay) for overlay in OVERLAYS}


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
    drifted.write_text(env.read_text().replace("replicas: 3", "replicas: 4"))
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
    scaled = next(o for o in built["cpu"] if o["kind"] == "ScaledObject")
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
    assert deployments["env"]["spec"]["replicas"] == 3
    env = {e["name"]: e["value"] for e in container(deployments["trainer"])["env"]}
    assert env["HALO_TRAINER_ENV_TARGET"] == "fleet://env:50051"
    probe = container(deployments["env"])["readinessProbe"]
    assert probe["grpc"] == {"port": 50051, "service": "halo.v1.EnvService"}    # NOT_SERVING (draining) = not ready
    assert "grpc" in container(deployments["env"])["livenessProbe"]
    requests = container(deployments["env"])["resources"]["requests"]
    assert requests == {"cpu": "2", "memory": "1400Mi"}
    assert "halo bench env" in deployments["env"]["spec"]["template"]["metadata"]["annotations"]["halo/sizing"]
    sites = by_kind(objects, "StatefulSet")["sites"]
    assert sites["spec"]["volumeClaimTemplates"][0]["metadata"]["name"] == "sites-state"
    assert services["sites"]["spec"]["sessionAffinity"] == "ClientIP"
    assert services["sites-pods"]["spec"]["clusterIP"] == "None"
    assert set(by_kind(objects, "PodDisruptionBudget")) == {"env", "sites"}
    assert by_kind(objects, "PersistentVolumeClaim")["runs"]["spec"]["accessModes"] == ["ReadWriteMany"]
    assert all(o["metadata"].get("namespace") == "halo" for o in objects if o["kind"] != "Namespace")


def test_env_autoscaling_is_on_sessions_in_use_and_prometheus_finds_every_replica(built):
    scaled = by_kind(built["cpu"], "ScaledObject")["env"]
    trigger = scaled["spec"]["triggers"][0]
    assert trigger["type"] == "prometheus" and "halo_env_sessions_active" in trigger["metadata"]["query"]
    assert "memory" not in json.dumps(scaled)
    config = yaml.safe_load(by_kind(built["cpu"], "ConfigMap")["prometheus-config"]["data"]["prometheus.yml"])
    job = config["scrape_configs"][0]
    assert job["kubernetes_sd_configs"] == [{"role": "pod", "namespaces": {"names": ["halo"]}}]   # a target per pod
    env_pod = by_kind(built["cpu"], "Deployment")["env"]["spec"]["template"]["metadata"]["annotations"]
    assert env_pod["prometheus.io/scrape"] == "true" and env_pod["prometheus.io/port"] == "9101"
    role = by_kind(built["cpu"], "Role")["prometheus"]
    assert {"pods"} <= set(role["rules"][0]["resources"])


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
