"""deploy/k8s/ (issue 21 item 3): rendered from deploy/services.yaml (drift fails CI, as for compose),
built by the real `kubectl kustomize` for both overlays, and every object validated against the
OpenAPI schemas of a pinned Kubernetes version (kubernetes-validate, strict: unknown fields fail).
KEDA's ScaledObject is a CRD those schemas do not know: it is checked against the schema in
tests/deploy/schemas/ (the fields we use, from KEDA's CRD), not skipped. KEDA is optional: the
overlays scale the env fleet with a CPU HPA, and the `keda` component (built here into an overlay
of its own, as a user would) swaps it for the ScaledObject. The containment components
(chromium-sandbox, gvisor) are built the same way; the env account's admission policy is evaluated
in test_k8s_admission.py."""

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
CONTAINMENT = ("chromium-sandbox", "gvisor")
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
    """Both overlays, the cpu overlay with the KEDA component ("cpu+keda"), the gpu overlay with the
    trainer on a GPU ("gpu+trainer-gpu"), the gpu overlay with three vLLM engines ("gpu+engines",
    as the Kubernetes guide says to write it) and the cpu overlay with each containment component
    ("cpu+chromium-sandbox", "cpu+gvisor")."""
    out = {overlay: kustomize(overlay) for overlay in OVERLAYS}
    out["cpu+keda"] = kustomize(user_overlay(tmp_path_factory.mktemp("keda"), "cpu", components=["components/keda"]))
    out["gpu+trainer-gpu"] = kustomize(user_overlay(tmp_path_factory.mktemp("trainer-gpu"), "gpu",
                                                    components=["components/trainer-gpu"]))
    out["gpu+engines"] = kustomize(user_overlay(tmp_path_factory.mktemp("engines"), "gpu",
                                                replicas=[{"name": "vllm", "count": 3}]))
    for component in CONTAINMENT:   # what contains the browser instead of the base's RuntimeDefault alone
        out[f"cpu+{component}"] = kustomize(user_overlay(tmp_path_factory.mktemp(component), "cpu",
                                                         components=[f"components/{component}"]))
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
    env = {e["name"]: e.get("value") for e in container(deployments["trainer"])["env"]}
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


def test_the_api_token_is_only_where_it_is_used(built):
    """No pod mounts a service-account token automatically; the env pod's `env` container (not its
    sites sidecar) and Prometheus mount one, with the CA and the namespace, at the path Kubernetes'
    clients read (halo.env.podcost); their Roles grant what they use and nothing else."""
    from halo.env import podcost

    for overlay, objects in built.items():
        for workload in by_kind(objects, "Deployment").values():
            pod = workload["spec"]["template"]["spec"]
            assert pod["automountServiceAccountToken"] is False, (overlay, workload["metadata"]["name"])
    deployments = by_kind(built["gpu"], "Deployment")
    mounted = {}
    for name, workload in deployments.items():
        pod = workload["spec"]["template"]["spec"]
        volumes = {v["name"]: v for v in pod.get("volumes", [])}
        for c in [*pod["containers"], *pod.get("initContainers", [])]:
            for m in c.get("volumeMounts", []):
                if "projected" in volumes[m["name"]]:
                    mounted[c["name"]] = (m, volumes[m["name"]]["projected"]["sources"])
    assert set(mounted) == {"env", "prometheus"}                 # not sites, trainer, gateway, ...
    for mount, sources in mounted.values():
        assert mount["mountPath"] == str(podcost.SERVICE_ACCOUNT_DIR) and mount["readOnly"] is True
        assert sources == [
            {"serviceAccountToken": {"path": "token", "expirationSeconds": 3607}},
            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
        ]
    assert {n for n, d in deployments.items() if "serviceAccountName" in d["spec"]["template"]["spec"]} == {"env", "prometheus"}
    roles = by_kind(built["gpu"], "Role")
    assert roles["prometheus"]["rules"] == [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}]
    assert roles["env"]["rules"] == [{"apiGroups": [""], "resources": ["pods"], "verbs": ["patch"]}]
    # what narrows the env's patch to its own deletion cost (evaluated in test_k8s_admission.py)
    (policy,) = by_kind(built["cpu"], "ValidatingAdmissionPolicy").values()
    (binding,) = by_kind(built["cpu"], "ValidatingAdmissionPolicyBinding").values()
    assert binding["spec"]["policyName"] == policy["metadata"]["name"]
    selector = binding["spec"]["matchResources"]["namespaceSelector"]["matchLabels"]
    namespace = by_kind(built["cpu"], "Namespace")["halo"]["metadata"]["labels"]
    assert selector.items() <= namespace.items()                  # it selects the namespace the tree creates


def test_chromiums_sandbox_is_off_in_the_base_and_the_components_contain_the_browser(built):
    """The base: RuntimeDefault seccomp (Pod Security "restricted"), which refuses user namespaces,
    so Chromium runs without its sandbox and the pod says why. chromium-sandbox: the env container
    under the Localhost profile that allows them, the sandbox on (`on`, not `auto`: it fails rather
    than run unsandboxed). gvisor: the pod in gVisor, the sandbox off. Nothing else changes."""
    from halo.env.config import EnvSettings

    assert "chromium_sandbox" in EnvSettings.model_fields

    def env_pod(overlay: str) -> dict:
        return by_kind(built[overlay], "Deployment")["env"]["spec"]["template"]

    def setting(template: dict, container_name: str = "env") -> str | None:
        containers = {c["name"]: c for c in [*template["spec"]["containers"], *template["spec"].get("initContainers", [])]}
        return {e["name"]: e.get("value") for e in containers[container_name].get("env", [])}.get("HALO_ENV_CHROMIUM_SANDBOX")

    base = env_pod("cpu")
    assert setting(base) == "off" and setting(base, "sites") is None
    assert base["spec"]["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert "runtimeClassName" not in base["spec"]
    assert base["metadata"]["annotations"][k8s.SANDBOX_ANNOTATION].startswith("off: the RuntimeDefault seccomp profile refuses")

    sandboxed = env_pod("cpu+chromium-sandbox")
    assert setting(sandboxed) == "on"
    env = next(c for c in sandboxed["spec"]["containers"] if c["name"] == "env")
    assert env["securityContext"]["seccompProfile"] == {"type": "Localhost", "localhostProfile": k8s.SECCOMP_PROFILE}
    assert env["securityContext"]["capabilities"] == {"drop": ["ALL"]} and env["securityContext"]["allowPrivilegeEscalation"] is False
    (sites,) = sandboxed["spec"]["initContainers"]
    assert "seccompProfile" not in sites["securityContext"]               # the pod's RuntimeDefault
    assert sandboxed["metadata"]["annotations"][k8s.SANDBOX_ANNOTATION].startswith("on: ")
    assert (REPO / "deploy" / "seccomp" / Path(k8s.SECCOMP_PROFILE).name).is_file()   # the profile to install

    gvisor = env_pod("cpu+gvisor")
    assert gvisor["spec"]["runtimeClassName"] == k8s.GVISOR_RUNTIME_CLASS and setting(gvisor) == "off"
    assert gvisor["metadata"]["annotations"][k8s.SANDBOX_ANNOTATION].startswith("off: the pod runs in gVisor")

    for overlay in ("cpu+chromium-sandbox", "cpu+gvisor"):   # only the env Deployment differs from cpu
        plain = {(o["kind"], o["metadata"]["name"]): o for o in built["cpu"]}
        changed = {key for key, o in ((k, o) for o in built[overlay] for k in [(o["kind"], o["metadata"]["name"])]) if plain.get(key) != o}
        assert changed == {("Deployment", "env")}, (overlay, changed)


def test_the_overlays_differ_where_they_should(built):
    cpu, gpu = built["cpu"], built["gpu"]
    assert "vllm" not in by_kind(cpu, "Deployment")
    vllm = by_kind(gpu, "Deployment")["vllm"]
    pod = vllm["spec"]["template"]["spec"]
    assert pod["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == 1
    # any node of the GPU products listed (one required term, its values ORed), not one exact label
    (term,) = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert term == {"matchExpressions": [{"key": "nvidia.com/gpu.product", "operator": "In",
                                          "values": deployspec.load().kubernetes.gpu_nodes["nvidia.com/gpu.product"]}]}
    assert {"NVIDIA-H100-80GB-HBM3", "NVIDIA-H200", "NVIDIA-A100-SXM4-80GB"} <= set(term["matchExpressions"][0]["values"])
    assert "nodeSelector" not in pod
    assert "--served-model-name=qwen3-vl" in pod["containers"][0]["args"]
    assert not any("${" in a for a in pod["containers"][0]["args"])                 # compose's defaults, resolved
    assert "--gpu-memory-utilization=0.9" in pod["containers"][0]["args"]          # a GPU of its own here
    gateway_cpu = {e["name"]: e.get("value") for e in container(by_kind(cpu, "Deployment")["gateway"])["env"]}
    gateway_gpu = {e["name"]: e.get("value") for e in container(by_kind(gpu, "Deployment")["gateway"])["env"]}
    assert gateway_cpu["HALO_GATEWAY_ONLY_ROUTES"] == '["embedded"]' and "HALO_GATEWAY_ONLY_ROUTES" not in gateway_gpu
    routes = by_kind(gpu, "ConfigMap")["gateway-config"]["data"]["gateway.yaml"]
    assert "base_url: http://vllm:8000/v1" in routes


def test_vllm_engines_are_replicas_behind_a_headless_service_the_gateway_route_discovers(built):
    """More engines = the Deployment's replicas: one GPU each, the name vllm resolving to every ready
    pod (headless, not-ready pods left out), a PodDisruptionBudget that lets one go at a time, a
    rollout that needs no spare GPU, and adapters read from the RWX runs claim at the trainer's path."""
    objects = built["gpu+engines"]
    vllm = by_kind(objects, "Deployment")["vllm"]
    assert vllm["spec"]["replicas"] == 3
    assert vllm["spec"]["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}}
    engine = container(vllm)
    assert engine["resources"]["requests"]["nvidia.com/gpu"] == engine["resources"]["limits"]["nvidia.com/gpu"] == 1
    assert engine["readinessProbe"]["httpGet"]["path"] == "/health"
    service = by_kind(objects, "Service")["vllm"]["spec"]
    assert service["clusterIP"] == "None" and service["publishNotReadyAddresses"] is False
    assert by_kind(objects, "PodDisruptionBudget")["vllm"]["spec"] == {
        "maxUnavailable": 1, "selector": {"matchLabels": {"app.kubernetes.io/name": "vllm"}}}
    args = dict(a.split("=", 1) if "=" in a else (a, "") for a in engine["args"])
    assert args["--served-model-name"] == "qwen3-vl" and "--enable-lora" in args and int(args["--max-loras"]) >= 3
    env = {e["name"]: e.get("value") for e in engine["env"]}
    assert env["VLLM_ALLOW_RUNTIME_LORA_UPDATING"] == "True"
    runs = next(m for m in engine["volumeMounts"] if m["name"] == "runs")
    trainer = {m["name"]: m["mountPath"] for m in container(by_kind(objects, "Deployment")["trainer"])["volumeMounts"]}
    assert runs["mountPath"] == trainer["runs"]
    assert by_kind(objects, "PersistentVolumeClaim")["runs"]["spec"]["accessModes"] == ["ReadWriteMany"]
    routes = by_kind(objects, "ConfigMap")["gateway-config"]["data"]["gateway.yaml"]
    route = next(r for r in yaml.safe_load(routes.split("\n", 1)[1])["routes"] if r["name"] == "qwen3vl")
    assert route["base_url"] == "http://vllm:8000/v1" and route["discover_engines"] is True
    # everything but the replica count is the gpu overlay's
    plain = by_kind(built["gpu"], "Deployment")["vllm"]
    assert {**vllm, "spec": {**vllm["spec"], "replicas": 1}} == plain


# --- policy: a maintained checker (checkov, PyPI; its own venv: scripts/setup_checkov.sh) ----------

#: checkov's checks that Pod Security "restricted" asks for (and the baseline under it): each must
#: have run on our manifests and passed, so a renamed or dropped check fails here too
PSS_RESTRICTED = {
    "CKV_K8S_16": "no privileged container", "CKV_K8S_17": "no hostPID", "CKV_K8S_18": "no hostIPC",
    "CKV_K8S_19": "no hostNetwork", "CKV_K8S_20": "allowPrivilegeEscalation false", "CKV_K8S_23": "runAsNonRoot",
    "CKV_K8S_25": "no added capabilities", "CKV_K8S_26": "no hostPort", "CKV_K8S_27": "no docker socket",
    "CKV_K8S_28": "NET_RAW dropped", "CKV_K8S_37": "every capability dropped", "CKV_K8S_31": "seccomp RuntimeDefault",
}
#: the other checks we hold the manifests to: NetworkPolicies for every pod, API tokens only where used
ALSO_REQUIRED = {"CKV2_K8S_6": "a NetworkPolicy selects every pod", "CKV_K8S_38": "no service-account token unless used",
                 "CKV_K8S_21": "not in the default namespace"}
#: checks deliberately not met, and why (everything else checkov runs must pass)
NOT_MET = {
    "CKV_K8S_11": "CPU limits: requests only; a limit throttles Chromium and the learner below what the node has free",
    "CKV_K8S_15": "imagePullPolicy Always: images are named by a tag of their own (`halo deploy images`), not a moving one",
    "CKV_K8S_22": "read-only root filesystem: Chromium, Playwright and Python write to /tmp and HOME; not in 'restricted'",
    "CKV_K8S_35": "secrets as files: the services read their tokens from environment variables (their flags)",
    "CKV_K8S_40": "uid >= 10000: the images' own users (halo 1000, grafana 472) own their files; not in 'restricted'",
    "CKV_K8S_43": "image digests: unknown until `halo deploy images` pushes; the tag it pushes is unique per build",
}


def checkov() -> str:
    for path in (REPO / ".venv-checkov" / "bin" / "checkov", shutil.which("checkov")):
        if path and Path(path).exists():
            return str(path)
    pytest.fail("checkov is missing: run scripts/setup_checkov.sh (`make checkov`)")


def broken_pod(built) -> dict:
    """The reward Deployment as root, privileged and escalating: what 'restricted' refuses."""
    broken = json.loads(json.dumps(by_kind(built["cpu"], "Deployment")["reward"]))
    broken["metadata"]["name"] = "broken"
    pod = broken["spec"]["template"]["spec"]
    pod["securityContext"] = {"runAsUser": 0}
    pod["containers"][0]["securityContext"] = {"privileged": True, "allowPrivilegeEscalation": True}
    return broken


@pytest.fixture(scope="module")
def policy(built, tmp_path_factory) -> dict[str, dict]:
    """checkov's verdict on each rendered overlay and on `broken_pod` (all its Kubernetes checks, our
    exceptions skipped), from one run over a folder of them (checkov takes seconds to start)."""
    folder = tmp_path_factory.mktemp("rendered")
    files = {f"{name.replace('+', '-')}.yaml": name for name in built}
    for file, name in files.items():
        (folder / file).write_text(yaml.safe_dump_all(built[name], sort_keys=False))
    (folder / "broken.yaml").write_text(yaml.safe_dump(broken_pod(built), sort_keys=False))
    files["broken.yaml"] = "broken"
    done = subprocess.run([checkov(), "-d", str(folder), "--framework", "kubernetes", "--compact", "-o", "json",
                           "--skip-check", ",".join(NOT_MET)], capture_output=True, text=True, timeout=600)
    assert done.stdout.strip(), done.stderr[-2000:]
    report = json.loads(done.stdout)
    results = (report[0] if isinstance(report, list) else report)["results"]
    out: dict[str, dict] = {name: {"passed_checks": [], "failed_checks": [], "skipped_checks": []} for name in files.values()}
    for verdict, checks in results.items():
        for check in checks:
            out[files[Path(check["file_path"]).name]][verdict].append(check)
    return out


def test_every_pod_passes_pod_security_restricted_and_our_other_policies_by_checkov(policy):
    for overlay, results in policy.items():
        if overlay == "broken":
            continue
        failed = [f"{r['check_id']} {r['check_name']}: {r['resource']}" for r in results["failed_checks"]]
        assert not failed, f"{overlay}: " + "\n".join(failed)
        passed = {r["check_id"] for r in results["passed_checks"]}
        missing = {c: why for c, why in {**PSS_RESTRICTED, **ALSO_REQUIRED}.items() if c not in passed}
        assert not missing, f"{overlay}: these checks did not run and pass: {missing}"
        # no per-resource exception: no pod mounts the API token automatically (CKV_K8S_38); the
        # two that call the API mount it into one container (test_the_api_token_is_only_where_it_is_used)
        assert not results["skipped_checks"], results["skipped_checks"]


def test_the_namespace_enforces_restricted(built):
    for objects in built.values():
        labels = by_kind(objects, "Namespace")["halo"]["metadata"]["labels"]
        assert labels["pod-security.kubernetes.io/enforce"] == "restricted"
        assert labels["pod-security.kubernetes.io/enforce-version"] == "v1.32"


def test_checkov_fails_a_pod_that_breaks_restricted(policy):
    """The checker is live: a root, privileged, escalating container is caught."""
    failed = {r["check_id"] for r in policy["broken"]["failed_checks"]}
    assert {"CKV_K8S_16", "CKV_K8S_20", "CKV_K8S_23", "CKV_K8S_37"} <= failed, failed


def test_tokens_and_the_grafana_password_come_from_secrets_the_pods_require(built):
    deployments = by_kind(built["cpu"], "Deployment")
    required = {}
    for name, workload in deployments.items():
        for env in container(workload).get("env", []):
            ref = env.get("valueFrom", {}).get("secretKeyRef")
            if ref:
                assert ref["optional"] is False, f"{name}: {env['name']} must not start without its Secret"
                required[(name, env["name"])] = (ref["name"], ref["key"])
            else:
                assert "TOKEN" not in env["name"] and "PASSWORD" not in env["name"], f"{name}: {env['name']} in plain text"
    services = (k8s.TOKENS_SECRET, "services")
    assert required == {
        ("env", "HALO_ENV_AUTH_TOKEN"): services, ("reward", "HALO_REWARD_AUTH_TOKEN"): services,
        ("gateway", "HALO_GATEWAY_AUTH_TOKEN"): services, ("reward", "HALO_REWARD_JUDGE_TOKEN"): services,
        ("trainer", "HALO_TRAINER_SERVICE_TOKEN"): services,          # what the trainer sends: what they require
        ("trainer", "HALO_TRAINER_AUTH_TOKEN"): (k8s.TOKENS_SECRET, "trainer"),   # its users' token
        ("grafana", "GF_SECURITY_ADMIN_PASSWORD"): (k8s.GRAFANA_SECRET, "password"),
    }
    # the names are the services' own settings (a renamed flag fails here)
    from halo.env.config import EnvSettings
    from halo.reward.config import RewardSettings
    from halo.trainer.config import TrainerSettings
    for settings, prefix, names in ((EnvSettings, "HALO_ENV_", ["AUTH_TOKEN"]),
                                    (RewardSettings, "HALO_REWARD_", ["AUTH_TOKEN", "JUDGE_TOKEN"]),
                                    (TrainerSettings, "HALO_TRAINER_", ["AUTH_TOKEN", "SERVICE_TOKEN"])):
        for n in names:
            assert n.lower() in settings.model_fields, (prefix, n)
    assert not by_kind(built["cpu"], "Secret")          # never in the repository: the user creates them
    grafana = {e["name"]: e.get("value") for e in container(deployments["grafana"])["env"]}
    assert grafana["GF_AUTH_ANONYMOUS_ENABLED"] == "false"   # no anonymous access, no admin/admin
    assert not any(k.startswith("GF_AUTH_ANONYMOUS") and k != "GF_AUTH_ANONYMOUS_ENABLED" for k in grafana)


def test_network_policies_admit_only_the_calls_of_the_architecture(built):
    policies = by_kind(built["gpu"], "NetworkPolicy")
    assert policies["default-deny"]["spec"] == {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}

    def admitted(name: str) -> dict[str, set[str]]:
        """port -> who may reach it ('*' = anyone)"""
        out: dict[str, set[str]] = {}
        for rule in policies[name]["spec"].get("ingress", []):
            for port in rule["ports"]:
                who = {f["podSelector"]["matchLabels"]["app.kubernetes.io/name"] if "podSelector" in f
                       else "ns:" + f["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"]
                       for f in rule.get("from", [])} or {"*"}
                out.setdefault(port["port"], set()).update(who)
        return out

    assert admitted("env") == {"grpc": {"trainer"}, "metrics": {"prometheus"}}      # not the sites port
    assert admitted("reward") == {"grpc": {"trainer"}, "metrics": {"prometheus"}}
    assert admitted("gateway") == {"grpc": {"trainer", "reward"}, "metrics": {"prometheus"}}
    assert admitted("trainer") == {"grpc": {"*"}, "metrics": {"prometheus"}}        # the API: bearer token required
    assert admitted("vllm") == {"http": {"gateway", "prometheus"}}
    assert admitted("prometheus") == {"http": {"grafana", "ns:keda"}}
    assert admitted("grafana") == {"http": {"*", "prometheus"}}
    # every named port exists on the pods the policy selects
    deployments = {**by_kind(built["gpu"], "Deployment")}
    for name, policy in policies.items():
        if name == "default-deny":
            continue
        assert policy["spec"]["policyTypes"] == ["Ingress", "Egress"], name
        ports = {p["name"] for p in container(deployments[name])["ports"]}
        assert set(admitted(name)) <= ports, (name, ports)


def test_network_policies_let_each_pod_reach_only_what_it_calls(built):
    """Egress: the peers a service calls (on their main port), DNS, the API server for the pods with
    a service account, HTTPS anywhere only where deploy/services.yaml says why. The env pod (the
    browser) reaches no internet and none of its peers: it is no open proxy."""
    policies = by_kind(built["gpu"], "NetworkPolicy")
    desc = deployspec.load()
    api = desc.kubernetes.api_server

    def reaches(name: str) -> set[str]:
        out = set()
        for rule in policies[name]["spec"]["egress"]:
            ports = ",".join(f"{p.get('protocol', 'TCP')}/{p['port']}" for p in rule["ports"])
            if "to" not in rule:
                out.add(f"internet:{ports}")
                continue
            for peer in rule["to"]:
                if "ipBlock" in peer:
                    out.add(f"api-server:{ports}")
                elif "namespaceSelector" in peer:
                    assert peer == {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
                                    "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}}}
                    out.add(f"dns:{ports}")
                else:
                    out.add(f"{peer['podSelector'].get('matchLabels', {}).get('app.kubernetes.io/name', 'any pod')}:{ports}")
        return out

    dns, https = "dns:UDP/53,TCP/53", "internet:TCP/443"
    api_server = "api-server:" + ",".join(f"TCP/{p}" for p in api.ports)
    assert reaches("env") == {dns, api_server}                   # its sites: localhost, in the pod
    assert reaches("reward") == {"gateway:TCP/grpc", dns}       # the LLM judge
    assert reaches("gateway") == {"vllm:TCP/http", dns, https}
    assert reaches("trainer") == {"env:TCP/grpc", "reward:TCP/grpc", "gateway:TCP/grpc", dns, https}
    assert reaches("vllm") == {dns, https}
    assert reaches("prometheus") == {"any pod:TCP/metrics,TCP/http", dns, api_server}
    assert reaches("grafana") == {"prometheus:TCP/http", dns}
    # the API server: its endpoint addresses (no label selects it), the env's only way out
    (rule,) = [r for r in policies["env"]["spec"]["egress"] if any("ipBlock" in t for t in r.get("to", []))]
    assert [t["ipBlock"] for t in rule["to"]] == [{"cidr": c} for c in api.cidrs]
    assert not any("except" in t["ipBlock"] for t in rule["to"])
    # HTTPS anywhere is the services' own stated need, carried on their policies
    for name, policy in policies.items():
        internet = desc.services[name].kubernetes.internet if name in desc.services else ""
        assert policy["metadata"].get("annotations", {}).get("halo/internet", "") == " ".join(internet.split()), name
    # the components change no policy
    for overlay in ("cpu+chromium-sandbox", "cpu+gvisor"):
        assert by_kind(built[overlay], "NetworkPolicy") == by_kind(built["cpu"], "NetworkPolicy")


# --- images and storage ---------------------------------------------------------------------------


def test_project_images_carry_a_fixed_tag_and_halo_deploy_images_names_the_pushed_ones(built, tmp_path):
    desc = deployspec.load()
    images = {c["image"] for o in built["gpu"] if o["kind"] == "Deployment"
              for c in [*o["spec"]["template"]["spec"]["containers"], *o["spec"]["template"]["spec"].get("initContainers", [])]}
    assert not any(i.endswith(":latest") or ":" not in i for i in images), images
    assert {f"halo-base:{k8s.default_tag()}", f"halo-env:{k8s.default_tag()}", f"halo-services:{k8s.default_tag()}"} <= images
    assert k8s.image_commands(desc, "registry.example:5000/team/", "abc123") == [
        ["docker", "build", "-f", "deploy/Dockerfile", "--target", "services", "-t", "registry.example:5000/team/halo-services:abc123", "."],
        ["docker", "push", "registry.example:5000/team/halo-services:abc123"],
        ["docker", "build", "-f", "deploy/Dockerfile", "--target", "env", "-t", "registry.example:5000/team/halo-env:abc123", "."],
        ["docker", "push", "registry.example:5000/team/halo-env:abc123"],
        ["docker", "build", "-f", "deploy/Dockerfile", "--target", "base", "-t", "registry.example:5000/team/halo-base:abc123", "."],
        ["docker", "push", "registry.example:5000/team/halo-base:abc123"],
    ]
    # the overlay it writes, built by the real kustomize: every project image is the pushed one
    overlay = tmp_path / "my-cluster"
    k8s.write_overlay(overlay, "gpu", k8s.kustomize_images(desc, "registry.example:5000/team", "abc123"))
    rendered = {c["image"] for o in kustomize(overlay) if o["kind"] == "Deployment"
                for c in [*o["spec"]["template"]["spec"]["containers"], *o["spec"]["template"]["spec"].get("initContainers", [])]}
    assert {"registry.example:5000/team/halo-base:abc123", "registry.example:5000/team/halo-env:abc123"} <= rendered
    assert not any(i.startswith("halo-") for i in rendered), rendered
    assert any(i.startswith("vllm/") for i in rendered)                       # third-party images untouched


def test_gpu_images_adds_the_cuda_trainer_image_built_as_compose_builds_it(tmp_path):
    """--gpu-images: trainer-gpu's own image (halo-base-cuda) too, with compose's build arguments (the
    CUDA lock), and the overlay points the trainer-gpu component's image at it."""
    desc = deployspec.load()
    build = desc.services["trainer-gpu"].compose["build"]
    commands = k8s.image_commands(desc, "ghcr.io/me", "v1", push=False, gpu=True)
    cuda = [c for c in commands if "ghcr.io/me/halo-base-cuda:v1" in c]
    assert cuda == [["docker", "build", "-f", "deploy/Dockerfile", "--target", build["target"],
                     *[part for k, v in sorted(build["args"].items()) for part in ("--build-arg", f"{k}={v}")],
                     "-t", "ghcr.io/me/halo-base-cuda:v1", "."]]
    assert "--build-arg" in cuda[0] and "ALL_LOCK=all-cuda.lock" in cuda[0]
    assert commands[:-1] == k8s.image_commands(desc, "ghcr.io/me", "v1", push=False)   # the CPU images as before
    overlay = tmp_path / "gpu-cluster"
    path = k8s.write_overlay(overlay, "gpu", k8s.kustomize_images(desc, "ghcr.io/me", "v1", gpu=True))
    body = yaml.safe_load(path.read_text())
    body["components"] = [os.path.relpath(REPO / "deploy/k8s/components/trainer-gpu", overlay)]
    path.write_text(yaml.safe_dump(body))
    images = {c["image"] for o in kustomize(overlay) if o["kind"] == "Deployment"
              for c in o["spec"]["template"]["spec"]["containers"]}
    assert "ghcr.io/me/halo-base-cuda:v1" in images, images


def fake_docker(bin_dir: Path, log: Path, fail_on: str = "") -> dict[str, str]:
    """A `docker` on PATH that records its arguments (a fake: no Docker engine builds images here)."""
    bin_dir.mkdir()
    script = bin_dir / "docker"
    script.write_text(f"#!/bin/sh\necho \"$@\" >> {log}\n" + (f"case \"$*\" in *\"{fail_on}\"*) exit 7;; esac\n" if fail_on else "")
                      + "exit 0\n")
    script.chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}


def test_halo_deploy_images_runs_docker_then_keeps_the_users_overlay_and_updates_its_images(tmp_path):
    log = tmp_path / "docker.log"
    env = fake_docker(tmp_path / "bin", log)
    overlay = tmp_path / "prod"
    overlay.mkdir()
    (overlay / "kustomization.yaml").write_text(yaml.safe_dump({
        "apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization",
        "resources": [os.path.relpath(REPO / "deploy/k8s/overlays/cpu", overlay)],
        "components": [os.path.relpath(REPO / "deploy/k8s/components/keda", overlay)],
        "images": [{"name": "halo-env", "newName": "old/halo-env", "newTag": "v0"}, {"name": "mine", "newTag": "1"}],
    }))
    done = halo("deploy", "images", "--registry", "ghcr.io/me", "--tag", "v1", "--write", str(overlay), env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert log.read_text().splitlines() == [
        "build -f deploy/Dockerfile --target services -t ghcr.io/me/halo-services:v1 .", "push ghcr.io/me/halo-services:v1",
        "build -f deploy/Dockerfile --target env -t ghcr.io/me/halo-env:v1 .", "push ghcr.io/me/halo-env:v1",
        "build -f deploy/Dockerfile --target base -t ghcr.io/me/halo-base:v1 .", "push ghcr.io/me/halo-base:v1"]
    body = yaml.safe_load((overlay / "kustomization.yaml").read_text())
    assert body["components"] and {i["name"]: i.get("newName") for i in body["images"]} == {
        "mine": None, "halo-services": "ghcr.io/me/halo-services", "halo-base": "ghcr.io/me/halo-base",
        "halo-env": "ghcr.io/me/halo-env"}
    # a failed push stops there, says which command, and writes nothing
    log.unlink()
    env = fake_docker(tmp_path / "bin2", log, fail_on="push ghcr.io/me/halo-base")
    done = halo("deploy", "images", "--registry", "ghcr.io/me", "--tag", "v2", "--write", str(overlay), env=env)
    assert done.returncode == 7 and "docker push ghcr.io/me/halo-base:v2` failed" in done.stdout
    assert len(log.read_text().splitlines()) == 6 and "v2" not in (overlay / "kustomization.yaml").read_text()
    bad = halo("deploy", "images", "--registry", "ghcr.io/me", "--tag", "latest", "--dry-run", env=env)
    assert bad.returncode == 2 and "fixed tag" in bad.stdout


def test_claims_take_the_clusters_default_class_or_the_one_an_overlay_patches_in(tmp_path):
    patch = {"patch": json.dumps([{"op": "add", "path": "/spec/storageClassName", "value": "nfs-client"}]),
             "target": {"kind": "PersistentVolumeClaim"}}
    claims = by_kind(kustomize(user_overlay(tmp_path / "nfs", "cpu", patches=[patch])), "PersistentVolumeClaim")
    assert claims and all(c["spec"]["storageClassName"] == "nfs-client" for c in claims.values())
    built = by_kind(kustomize("cpu"), "PersistentVolumeClaim")
    assert all("storageClassName" not in c["spec"] for c in built.values())     # the cluster's default
    desc = deployspec.load()
    storage = {**desc.kubernetes.storage, "runs": {**desc.kubernetes.storage["runs"], "class": "efs"}}
    desc = desc.model_copy(update={"kubernetes": desc.kubernetes.model_copy(update={"storage": storage})})
    volumes = yaml.safe_load_all(k8s.rendered_k8s(desc)[k8s.K8S_ROOT / "base" / "volumes.yaml"])
    classes = {v["metadata"]["name"]: v["spec"].get("storageClassName") for v in volumes if v}
    assert classes["runs"] == "efs" and classes["hf-cache"] is None


def test_every_variable_the_manifests_set_is_a_setting_of_the_service_that_reads_it(built, monkeypatch):
    """The containers' environments, as the kubelet would give them (Secrets and the downward API
    filled in), parsed by the services' own settings classes: every variable names a field (the
    settings would ignore one that does not), and the values that matter arrive as meant."""
    from halo.env.config import EnvSettings
    from halo.policy.config import GatewaySettings
    from halo.reward.config import RewardSettings
    from halo.sites.server import SitesSettings
    from halo.trainer.config import TrainerSettings

    classes = {"env": EnvSettings, "sites": SitesSettings, "reward": RewardSettings, "gateway": GatewaySettings,
               "trainer": TrainerSettings}
    parsed = {}
    for workload in by_kind(built["cpu"], "Deployment").values():
        pod = workload["spec"]["template"]["spec"]
        for c in [*pod["containers"], *pod.get("initContainers", [])]:
            if c["name"] not in classes:
                continue
            env = {}
            for e in c["env"]:
                source = e.get("valueFrom", {})
                env[e["name"]] = (e["value"] if "value" in e else f"secret:{source['secretKeyRef']['key']}"
                                  if "secretKeyRef" in source else "env-5d8c7-x2x9q" if source["fieldRef"]["fieldPath"]
                                  == "metadata.name" else "halo")
            prefix = classes[c["name"]].model_config["env_prefix"]
            unknown = [n for n in env if n.removeprefix(prefix).lower() not in classes[c["name"]].model_fields]
            assert not unknown, f"{c['name']}: {unknown} are no settings of {classes[c['name']].__name__}"
            with monkeypatch.context() as m:
                for name in [n for n in os.environ if n.startswith("HALO_")]:
                    m.delenv(name)
                for name, value in env.items():
                    m.setenv(name, value)
                parsed[c["name"]] = classes[c["name"]]()
    env, sites = parsed["env"], parsed["sites"]
    assert env.sites_url == f"http://127.0.0.1:{sites.port}" and sites.host == "0.0.0.0"
    assert env.drain_timeout_s == 600 and env.pod_name == "env-5d8c7-x2x9q" and env.pod_namespace == "halo"
    assert env.auth_token == parsed["reward"].auth_token == parsed["trainer"].service_token == "secret:services"
    assert parsed["trainer"].auth_token == "secret:trainer"


def gpu_placement(pod: dict) -> tuple:
    return pod["affinity"], pod["tolerations"]


def test_the_trainer_gpu_component_gives_the_trainer_a_gpu_as_vllm_has_and_vllms_checkpoint(built):
    objects = built["gpu+trainer-gpu"]
    deployments = by_kind(objects, "Deployment")
    trainer, vllm = deployments["trainer"], deployments["vllm"]
    pod, vllm_pod = trainer["spec"]["template"]["spec"], vllm["spec"]["template"]["spec"]
    resources = container(trainer)["resources"]
    assert resources["requests"]["nvidia.com/gpu"] == resources["limits"]["nvidia.com/gpu"] == 1
    assert gpu_placement(pod) == gpu_placement(vllm_pod)                          # the same GPU nodes, the same taint
    assert container(trainer)["image"] == f"halo-base-cuda:{k8s.default_tag()}"   # a CUDA torch
    env = {e["name"]: e.get("value") for e in container(trainer)["env"]}
    args = dict(a.split("=", 1) for a in container(vllm)["args"] if "=" in a)
    assert env["HALO_TRAINER_LOCAL_LORA_BASE_MODEL"] == args["--model"]          # what vLLM serves ...
    mounts = {m["name"]: m["mountPath"] for m in container(trainer)["volumeMounts"]}
    vllm_mounts = {m["name"]: m["mountPath"] for m in container(vllm)["volumeMounts"]}
    vllm_env = {e["name"]: e.get("value") for e in container(vllm)["env"]}
    assert mounts["hf-cache"] == vllm_mounts["hf-cache"] == vllm_env["HF_HOME"]   # ... from the same cache, same path
    assert mounts["runs"] == vllm_mounts["runs"] == env["HALO_TRAINER_RUNS_DIR"]  # adapters load by the learner's path
    routes = by_kind(objects, "ConfigMap")["gateway-config"]["data"]["gateway.yaml"]
    route = next(r for r in yaml.safe_load(routes.split("\n", 1)[1])["routes"] if r["name"] == env["HALO_TRAINER_LOCAL_LORA_ROUTE"])
    assert route["backend"] == "vllm" and route["base_url"] == "http://vllm:8000/v1"
    assert env["HALO_TRAINER_LOCAL_LORA_DEVICE"] == "cuda"
    from halo.trainer.config import TrainerSettings
    for name in env:
        assert name.removeprefix("HALO_TRAINER_").lower() in TrainerSettings.model_fields, name
    # the component changes only the trainer: everything else is the gpu overlay's
    plain = by_kind(built["gpu"], "Deployment")
    assert {n: d for n, d in deployments.items() if n != "trainer"} == {n: d for n, d in plain.items() if n != "trainer"}
    assert "nvidia.com/gpu" not in json.dumps(container(plain["trainer"])["resources"])


def test_the_hf_token_comes_from_an_optional_secret_and_is_never_set_empty(built):
    for overlay, objects in built.items():
        for obj in objects:
            if obj["kind"] != "Deployment":
                continue
            for c in obj["spec"]["template"]["spec"]["containers"]:
                for e in c.get("env", []):
                    if e["name"] == "HF_TOKEN":
                        assert "value" not in e, (overlay, obj["metadata"]["name"])
                        assert e["valueFrom"]["secretKeyRef"] == {"name": "hf-token", "key": "token", "optional": True}
    vllm = by_kind(built["gpu"], "Deployment")["vllm"]
    assert "HF_TOKEN" in {e["name"] for e in container(vllm)["env"]}
