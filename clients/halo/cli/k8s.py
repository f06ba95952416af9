"""The kustomize tree deploy/k8s/, rendered from deploy/services.yaml (`halo deploy render`).

    deploy/k8s/base/           every service of the default compose profile: a Deployment (or a
                               StatefulSet) + Service each, the sites server inside each env pod
                               (a native sidecar), PVCs, ConfigMaps, RBAC (Prometheus' discovery,
                               the env pods' deletion cost), PodDisruptionBudgets, the env fleet's
                               CPU HorizontalPodAutoscaler
    deploy/k8s/components/keda optional (KEDA installed): the env fleet scales on session demand
    deploy/k8s/components/chromium-sandbox, gvisor
                               optional: what contains the env pod's browser beyond the base's
                               RuntimeDefault seccomp profile (SANDBOX_REASONS)
    deploy/k8s/overlays/cpu/   base, gateway serving only the embedded policy
    deploy/k8s/overlays/gpu/   base + vLLM engines (one nvidia.com/gpu each) behind a headless
                               Service, which the gateway's vLLM route resolves to every ready engine

The env service is a fleet: a Deployment behind a headless Service, so `fleet://env:50051`
resolves to every ready pod and halo.client.fleet places and pins sessions (no load balancer). A
pod that drains (SIGTERM: health NOT_SERVING, readiness fails) leaves the DNS answer, refuses new
sessions (a fleet client places them elsewhere) and serves those it holds until they end or its
drain timeout passes; its sites sidecar stops only after it. The fleet scales on session demand
(KEDA) or its CPU (the fallback), not memory: Chromium's memory only grows while a context lives,
so a memory target keeps a memory-based autoscaler at its maximum. Scale-down removes the pods
with the fewest sessions first (pod-deletion-cost, halo.env.podcost).

The env pods run a browser on pages a policy chooses, so the tree assumes a renderer may be
compromised: no pod mounts an API token but the two containers that call the API (env, Prometheus);
an admission policy holds the env's account to its own pod's deletion cost; NetworkPolicies deny
ingress and egress by default and admit the calls of deploy/services.yaml, DNS, the API server, and
HTTPS only for the services whose `internet` says why (never the env pods).
"""

from __future__ import annotations

import copy
import dataclasses
import importlib.metadata
import json
import os
import re
import shlex
import subprocess
from pathlib import Path
from typing import Any

import yaml

from halo.cli.deployspec import (
    REPO_ROOT, AutoscaleSpec, Description, Placement, ServiceSpec, compose_placement, load, render_file, rendered_files, service_args, service_environment,
)

K8S_ROOT = REPO_ROOT / "deploy" / "k8s"
_HEADER = "# GENERATED from deploy/services.yaml by `halo deploy render` (halo.cli.k8s): edit that file, not this one.\n"
_APP = "app.kubernetes.io/name"
_PART_OF = "app.kubernetes.io/part-of"
_PART = {_APP: "", _PART_OF: "halo"}
#: the uid (and gid) each image runs as: deploy/Dockerfile's `halo` user, the prom/prometheus and
#: grafana images' own; vLLM's image runs as root, so it runs as an unprivileged uid with a HOME of
#: its own (an emptyDir) for its caches. Pod Security "restricted" wants a numeric non-root uid.
_HALO_UID = 1000
_IMAGE_USERS = {"prometheus": 65534, "grafana": 472, "vllm": 1000}
#: Pod Security "restricted" for every container (checked by checkov in tests/deploy/test_k8s.py)
_CONTAINER_SECURITY = {"allowPrivilegeEscalation": False, "privileged": False, "capabilities": {"drop": ["ALL"]}}
#: the bearer tokens: Secret halo-tokens, key "services" (what env, reward and gateway require and
#: the trainer and the reward's judge calls send) and key "trainer" (what the trainer's API requires
#: of its users). A missing Secret keeps the pods from starting: the cluster never runs open.
TOKENS_SECRET = "halo-tokens"
_TOKENS = {
    "env": {"AUTH_TOKEN": "services"},
    "reward": {"AUTH_TOKEN": "services", "JUDGE_TOKEN": "services"},
    "gateway": {"AUTH_TOKEN": "services"},
    "trainer": {"AUTH_TOKEN": "trainer", "SERVICE_TOKEN": "services"},
}
#: Grafana's admin password: Secret grafana-admin, key "password"
GRAFANA_SECRET = "grafana-admin"
#: compose variables passed from the host only when set there (`VAR: null` in deploy/services.yaml):
#: on Kubernetes, a key of an optional Secret (absent: the variable is unset, never set empty)
OPTIONAL_SECRETS = {"HF_TOKEN": ("hf-token", "token")}
#: where a pod reads its service-account token, the cluster's CA and its namespace (Kubernetes'
#: fixed path, halo.env.podcost); mounted only into the containers that call the API server
TOKEN_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
#: the annotation that patch is allowed to change (halo.env.podcost)
DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"

#: Chromium's sandbox in the env container. Its renderers need user namespaces, which the
#: RuntimeDefault seccomp profile (what Pod Security "restricted" asks for) refuses, so the base runs
#: it off and says why on the pod; a component gives the browser a boundary of another kind:
#:   chromium-sandbox  the env container under a Localhost seccomp profile that allows them
#:                     (deploy/seccomp/chromium.json, installed on every node), the sandbox on
#:   gvisor            the env pod in gVisor's user-space kernel (RuntimeClass gvisor), the sandbox off
SANDBOX_ANNOTATION = "halo/chromium-sandbox"
SANDBOX_REASONS = {
    "base": "off: the RuntimeDefault seccomp profile refuses the user namespaces Chromium's sandbox needs; the "
            "chromium-sandbox or the gvisor component contains the browser (docs/guides/deployment-kubernetes.md, Containment)",
    "chromium-sandbox": "on: the env container runs under the Localhost seccomp profile halo/chromium.json "
                        "(deploy/seccomp/chromium.json on every node), which allows user namespaces",
    "gvisor": "off: the pod runs in gVisor's user-space kernel (RuntimeClass gvisor), the boundary between the "
              "browser and the node",
}
#: the Localhost profile's path under the kubelet's seccomp root (/var/lib/kubelet/seccomp)
SECCOMP_PROFILE = "halo/chromium.json"
GVISOR_RUNTIME_CLASS = "gvisor"


def image_name(desc: Description, stage: str) -> str:
    """The project image of one Dockerfile stage, as the manifests name it (halo-base, halo-env)."""
    return f"{desc.image.name}-{stage}"


def default_tag() -> str:
    """The tag the manifests name until `halo deploy images` points them at a registry: the
    project's version (a fixed tag, never `latest`)."""
    return importlib.metadata.version("halo-rl")


def k8s_placement(desc: Description) -> Placement:
    """Service DNS names in the namespace, as compose's service names, but localhost for a sidecar
    (it is in the pod of the service that uses it). The trainer reaches the env fleet by
    `fleet://env:PORT` instead (set where its container is built)."""
    where = compose_placement(desc)
    hosts = {n: "127.0.0.1" if desc.services[n].kubernetes.sidecar_of else h for n, h in where.hosts.items()}
    return dataclasses.replace(where, hosts=hosts)


def _sidecars(desc: Description, name: str) -> list[str]:
    return [n for n, s in desc.services.items() if s.kubernetes.sidecar_of == name]


def _labels(name: str) -> dict[str, str]:
    return {**_PART, _APP: name}


def _meta(name: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "labels": _labels(name), **extra}


def _default(arg: str, defaults: dict[str, str] | None = None) -> str:
    """`${VAR:-default}` (compose's substitution) -> `defaults[VAR]`, else compose's default: a manifest
    has no shell around it."""
    return re.sub(r"\$\{([A-Z_]+):-([^}]*)\}", lambda m: (defaults or {}).get(m.group(1), m.group(2)), arg)


def _probe(svc: ServiceSpec, port: int, service: str) -> dict[str, Any]:
    if svc.protocol == "grpc":    # native gRPC probes (Kubernetes >= 1.27): the services' gRPC health
        return {"grpc": {"port": port, "service": service}}
    return {"httpGet": {"path": svc.health, "port": port}}


def _container(desc: Description, name: str, where: Placement) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    svc, kube = desc.services[name], desc.services[name].kubernetes
    container: dict[str, Any] = {"name": name}
    volumes: list[dict[str, Any]] = []
    mounts: list[dict[str, Any]] = []
    if svc.is_halo:
        container["image"] = f"{image_name(desc, svc.stage)}:{default_tag()}"
        container["command"] = ["halo", "serve", svc.serve]
        env = service_environment(desc, name, where)
        if name == "trainer":   # the trainer reaches the env fleet, not one env pod
            env[f"{svc.env_prefix}ENV_TARGET"] = f"fleet://env:{where.ports['env']}"
        if kube.drain_timeout_s:
            env[f"{svc.env_prefix}DRAIN_TIMEOUT_S"] = str(kube.drain_timeout_s)
        container["env"] = [{"name": k, "value": v} for k, v in env.items()]
        container["env"] += [_secret_env(f"{svc.env_prefix}{setting}", TOKENS_SECRET, key)
                             for setting, key in _TOKENS.get(name, {}).items()]
        if name == "env":
            # Chromium's sandbox off in the base: SANDBOX_REASONS, set where the pod says why; and its
            # own pod, for the pod-deletion-cost annotation (halo.env.podcost)
            container["env"].append({"name": f"{svc.env_prefix}CHROMIUM_SANDBOX", "value": "off"})
            container["env"] += [{"name": f"{svc.env_prefix}POD_{what.upper()}", "valueFrom": {"fieldRef": {
                "fieldPath": f"metadata.{what}"}}} for what in ("name", "namespace")]
    else:
        container["image"] = svc.image
        if svc.args:
            container["args"] = [_default(a, kube.defaults) for a in service_args(desc, name, where)]
    ports = [{"name": "grpc" if svc.protocol == "grpc" else "http", "containerPort": svc.port}]
    if svc.metrics_port is not None:
        ports.append({"name": "metrics", "containerPort": svc.metrics_port})
    container["ports"] = ports
    resources: dict[str, Any] = {"requests": {"cpu": kube.cpu, "memory": kube.memory}}
    if kube.memory_limit:
        resources["limits"] = {"memory": kube.memory_limit}
    if kube.gpus:
        resources["requests"]["nvidia.com/gpu"] = kube.gpus
        resources.setdefault("limits", {})["nvidia.com/gpu"] = kube.gpus
    container["resources"] = resources
    # startup: up to 5 min (Chromium, model weights; vLLM 20 min); readiness: serving now (a draining
    # pod leaves the Service at once, so the fleet places nothing there); liveness: patient
    container["startupProbe"] = {**_probe(svc, svc.port, ""), "periodSeconds": 10, "failureThreshold": 120 if kube.gpus else 30}
    container["readinessProbe"] = {**_probe(svc, svc.port, svc.grpc_service), "periodSeconds": 5, "failureThreshold": 2}
    # liveness asks the runtime's LIVENESS_SERVICE name, SERVING through a drain (halo.runtime.server)
    container["livenessProbe"] = {**_probe(svc, svc.port, "liveness"), "periodSeconds": 10, "failureThreshold": 6}
    for volume in svc.volumes:
        mounts.append({"name": volume, "mountPath": desc.volumes[volume]})
        if kube.sidecar_of:
            volumes.append({"name": volume, "emptyDir": {"sizeLimit": desc.kubernetes.storage[volume]["size"]}})
        elif not (kube.workload == "StatefulSet"):
            volumes.append({"name": volume, "persistentVolumeClaim": {"claimName": volume}})
    for config_name, spec in svc.files.items():
        mounts.append({"name": f"{config_name}-config", "mountPath": spec.path, "subPath": Path(spec.path).name, "readOnly": True})
        volumes.append({"name": f"{config_name}-config", "configMap": {"name": f"{config_name}-config"}})
    if name == "prometheus":
        mounts.append({"name": "prometheus-config", "mountPath": "/etc/prometheus", "readOnly": True})
        volumes.append({"name": "prometheus-config", "configMap": {"name": "prometheus-config"}})
    if name == "grafana":
        for cm, path in (("grafana-datasources", "/etc/grafana/provisioning/datasources"),
                         ("grafana-dashboard-provider", "/etc/grafana/provisioning/dashboards"),
                         ("grafana-dashboards", "/var/lib/grafana/dashboards")):
            mounts.append({"name": cm, "mountPath": path, "readOnly": True})
            volumes.append({"name": cm, "configMap": {"name": cm}})
        container["env"] = [{"name": k, "value": v} for k, v in svc.compose.get("environment", {}).items()
                            if not v.startswith("${")]
        container["env"].append(_secret_env("GF_SECURITY_ADMIN_PASSWORD", GRAFANA_SECRET, "password"))
    if name == "vllm":
        # the trainer writes each step's adapter under runs/; vLLM loads it from the same path
        mounts.append({"name": "runs", "mountPath": desc.volumes["runs"], "readOnly": True})
        volumes.append({"name": "runs", "persistentVolumeClaim": {"claimName": "runs", "readOnly": True}})
        container["env"] = [{"name": k, "value": _default(v)} if v is not None else _secret_env(k, *OPTIONAL_SECRETS[k], optional=True)
                            for k, v in svc.compose.get("environment", {}).items()]
        # not root: its caches (Triton, torch.compile, vLLM's config) go under a HOME of its own
        container["env"] += [{"name": "HOME", "value": "/home/vllm"}, {"name": "VLLM_NO_USAGE_STATS", "value": "1"}]
        mounts.append({"name": "home", "mountPath": "/home/vllm"})
        volumes.append({"name": "home", "emptyDir": {}})
    if kube.shm:
        mounts.append({"name": "shm", "mountPath": "/dev/shm"})
        volumes.append({"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": kube.shm}})
    if mounts:
        container["volumeMounts"] = mounts
    container["securityContext"] = copy.deepcopy(_CONTAINER_SECURITY)   # no shared objects: no YAML anchors
    return container, volumes


def _secret_env(name: str, secret: str, key: str, optional: bool = False) -> dict[str, Any]:
    """An environment variable from a Secret that must exist (the pod does not start without it), or
    with `optional`, one that may not (then the variable is not set at all)."""
    return {"name": name, "valueFrom": {"secretKeyRef": {"name": secret, "key": key, "optional": optional}}}


def _gpu_placement(gpu_nodes: dict[str, list[str]]) -> dict[str, Any]:
    """A GPU pod's scheduling: a node whose every label of `gpu_nodes` has one of its values (a node
    affinity: a list of GPU products, not one exact label), tolerating the GPU nodes' taint."""
    placement: dict[str, Any] = {"tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]}
    if gpu_nodes:
        placement["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": k, "operator": "In", "values": list(v)} for k, v in gpu_nodes.items()]}]}}}
    return placement


def _workload(desc: Description, name: str, where: Placement) -> list[dict[str, Any]]:
    svc, kube = desc.services[name], desc.services[name].kubernetes
    container, volumes = _container(desc, name, where)
    annotations = {"prometheus.io/scrape": "true",
                   "prometheus.io/port": str(svc.metrics_port if svc.metrics_port is not None else svc.port),
                   "prometheus.io/path": svc.metrics_path or "/metrics"}
    if kube.sizing:
        annotations["halo/sizing"] = " ".join(kube.sizing.split())
    if name == "env":
        annotations[SANDBOX_ANNOTATION] = SANDBOX_REASONS["base"]
    # a drain's timeout, then 60 s for in-flight calls (shutdown_grace_s) and closing the browsers
    grace = kube.drain_timeout_s + 60 if kube.drain_timeout_s else 60 if kube.fleet else 30
    pod: dict[str, Any] = {"containers": [container], "terminationGracePeriodSeconds": grace}
    for sidecar in _sidecars(desc, name):
        # a native sidecar: started (and its startup probe passed) before the service, stopped only
        # after it exits, so a draining service keeps its sites to the last step
        # (it binds the pod's address only for the kubelet's probes: no Service names it, and the
        # NetworkPolicy admits no other pod to its port)
        side, side_volumes = _container(desc, sidecar, where)
        side["ports"] = [p for p in side["ports"] if p["name"] != "metrics"]
        pod.setdefault("initContainers", []).append({**side, "restartPolicy": "Always"})
        volumes += side_volumes
    if name in _SERVICE_ACCOUNTS:
        pod["serviceAccountName"] = name
        # the token in the one container that calls the API server (not a sidecar): the files and
        # the path the automatic mount has, which Kubernetes' clients (and halo.env.podcost) read
        container.setdefault("volumeMounts", []).append({"name": "kube-api-access", "mountPath": TOKEN_DIR, "readOnly": True})
        volumes.append(_api_access_volume())
    uid = _IMAGE_USERS.get(name, _HALO_UID)
    # Pod Security "restricted": non-root as the image's uid, its volumes writable (fsGroup), the
    # runtime's seccomp profile; no automatic API token (above: mounted where it is used)
    pod["securityContext"] = {"runAsNonRoot": True, "runAsUser": uid, "runAsGroup": uid, "fsGroup": uid,
                              "seccompProfile": {"type": "RuntimeDefault"}}
    pod["automountServiceAccountToken"] = False
    if volumes:
        pod["volumes"] = volumes
    if kube.gpus:
        pod.update(_gpu_placement(desc.kubernetes.gpu_nodes))
    spec: dict[str, Any] = {
        **({} if kube.autoscale else {"replicas": kube.replicas}),   # an autoscaler owns the count
        "selector": {"matchLabels": {_APP: name}},
        "template": {"metadata": {"labels": _labels(name), "annotations": annotations}, "spec": pod},
    }
    if kube.workload == "StatefulSet":
        storage = desc.kubernetes.storage
        spec["serviceName"] = f"{name}-pods"
        spec["volumeClaimTemplates"] = [{
            "metadata": {"name": v},
            "spec": {"accessModes": [storage[v]["access"]], "resources": {"requests": {"storage": storage[v]["size"]}}},
        } for v in svc.volumes]
    elif svc.volumes and not kube.fleet:
        spec["strategy"] = {"type": "Recreate"}   # a ReadWriteOnce claim cannot be held by two pods at once
    elif kube.fleet and kube.gpus:
        # one pod at a time, replaced in place: no surge pod waiting for a GPU the pool may not have,
        # and the other engines serve meanwhile
        spec["strategy"] = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}}
    objects = [{"apiVersion": "apps/v1", "kind": kube.workload, "metadata": _meta(name), "spec": spec}]
    ports = [{"name": p["name"], "port": p["containerPort"], "targetPort": p["name"]} for p in container["ports"]]
    if kube.fleet:
        # headless: the name resolves to every ready pod (and only those: a pod that is starting or
        # draining is not in the answer); the client does the placing (env: halo.client.fleet;
        # vLLM: the gateway's route, discover_engines)
        objects.append({"apiVersion": "v1", "kind": "Service", "metadata": _meta(name),
                        "spec": {"clusterIP": "None", "publishNotReadyAddresses": False,
                                 "selector": {_APP: name}, "ports": ports}})
    elif kube.workload == "StatefulSet":
        # the governing headless Service (one DNS name per replica), and one for the whole set
        objects.append({"apiVersion": "v1", "kind": "Service", "metadata": _meta(f"{name}-pods"),
                        "spec": {"clusterIP": "None", "selector": {_APP: name}, "ports": ports}})
        objects.append({"apiVersion": "v1", "kind": "Service", "metadata": _meta(name),
                        "spec": {"selector": {_APP: name}, "ports": ports}})
    else:
        objects.append({"apiVersion": "v1", "kind": "Service", "metadata": _meta(name),
                        "spec": {"selector": {_APP: name}, "ports": ports}})
    if kube.max_unavailable is not None:
        objects.append({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": _meta(name),
                        "spec": {"maxUnavailable": kube.max_unavailable, "selector": {"matchLabels": {_APP: name}}}})
    if kube.autoscale is not None:
        objects.append(_hpa(name, kube.autoscale))
    if name in _SERVICE_ACCOUNTS:
        objects += _rbac(name, _SERVICE_ACCOUNTS[name], desc.kubernetes.namespace)
    if name == "env":
        objects += _own_deletion_cost_only(name)
    return objects


def _api_access_volume() -> dict[str, Any]:
    """The service-account token (as the automatic mount has it: bound to the pod, expirationSeconds
    3607, which the API server extends so that a client reading the file once keeps working), the
    cluster's CA and the pod's namespace."""
    return {"name": "kube-api-access", "projected": {"sources": [
        {"serviceAccountToken": {"path": "token", "expirationSeconds": 3607}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
    ]}}


#: a removed pod's sessions drain, but each removal costs a pod's warm-up later: go down slowly
_SCALE_DOWN = {"stabilizationWindowSeconds": 600, "policies": [{"type": "Pods", "value": 1, "periodSeconds": 120}]}
#: demand beyond capacity: double (or add 4 pods) every 30 s rather than Kubernetes' default step
_SCALE_UP = {"stabilizationWindowSeconds": 0, "selectPolicy": "Max",
             "policies": [{"type": "Percent", "value": 100, "periodSeconds": 30}, {"type": "Pods", "value": 4, "periodSeconds": 30}]}


def _hpa(name: str, scale: AutoscaleSpec) -> dict[str, Any]:
    """The fallback autoscaler, without KEDA: the CPU of the service's own container (metrics-server)."""
    return {
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": _meta(name),
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
            "minReplicas": scale.min, "maxReplicas": scale.max,
            "metrics": [{"type": "ContainerResource", "containerResource": {
                "name": "cpu", "container": name, "target": {"type": "Utilization", "averageUtilization": scale.cpu_utilization}}}],
            "behavior": {"scaleDown": _SCALE_DOWN, "scaleUp": _SCALE_UP},
        },
    }


def _scaled_object(desc: Description, name: str, scale: AutoscaleSpec) -> dict[str, Any]:
    """KEDA's autoscaler on the session demand query (it makes its own HPA: the fallback is deleted)."""
    return {
        "apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject", "metadata": _meta(name),
        "spec": {
            "scaleTargetRef": {"name": name},
            "minReplicaCount": scale.min, "maxReplicaCount": scale.max,
            "pollingInterval": 15, "cooldownPeriod": 300,
            "advanced": {"horizontalPodAutoscalerConfig": {"behavior": {"scaleDown": _SCALE_DOWN, "scaleUp": _SCALE_UP}}},
            "triggers": [{"type": "prometheus", "metadata": {
                "serverAddress": f"http://prometheus.{desc.kubernetes.namespace}.svc:{desc.services['prometheus'].port}",
                "query": " ".join(scale.metric.split()), "threshold": str(scale.per_replica),
            }}],
        },
    }


#: services that call the Kubernetes API, and what they may do in the namespace
_SERVICE_ACCOUNTS: dict[str, list[dict[str, Any]]] = {
    # discovery of the pods to scrape (kubernetes_sd_configs, role pod: nothing but pods)
    "prometheus": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}],
    # its own pod's controller.kubernetes.io/pod-deletion-cost (halo.env.podcost). A Role's
    # resourceNames cannot name a pod that does not exist yet (a Deployment's pods get generated
    # names), so RBAC grants patch on the namespace's pods, and the admission policy
    # (_own_deletion_cost_only) admits only that annotation of the caller's own pod
    "env": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["patch"]}],
}


#: a bound token's pod, as the API server reports the caller (request.userInfo.extra)
_POD_NAME, _POD_UID = "authentication.kubernetes.io/pod-name", "authentication.kubernetes.io/pod-uid"


def _unchanged(field: str) -> str:
    """CEL: object's metadata.FIELD is oldObject's (both absent counts as equal)."""
    new, old = f"object.metadata.{field}", f"oldObject.metadata.{field}"
    return f"has({new}) == has({old}) && (!has({new}) || {new} == {old})"


def _own_deletion_cost_only(name: str) -> list[dict[str, Any]]:
    """A ValidatingAdmissionPolicy and its binding: an update of a pod by service account NAME is
    admitted only for the caller's own pod (the pod its bound token names) and only when nothing but
    the deletion-cost annotation changed (an integer). Requests by anyone else are not matched.

    Both objects are cluster-scoped and select HALO's namespaces by a label of the Namespace object,
    and the caller as `system:serviceaccount:<the request's namespace>:NAME`, so no namespace is
    written into them: an overlay that moves the tree to another namespace (kustomize's `namespace:`,
    which also writes metadata.namespace into these objects; the API server drops it for
    cluster-scoped kinds) keeps them right, and two HALO namespaces share one policy."""
    policy = f"halo-{name}-own-deletion-cost"
    extra = "request.userInfo.extra"
    return [{
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy", "metadata": _meta(policy),
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {"resourceRules": [
                {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["UPDATE"], "resources": ["pods"]}]},
            "matchConditions": [{"name": f"by-the-{name}-service-account",
                                 "expression": f"request.userInfo.username == 'system:serviceaccount:' + request.namespace + ':{name}'"}],
            "variables": [
                {"name": "annotations", "expression": "has(object.metadata.annotations) ? object.metadata.annotations : {}"},
                {"name": "oldAnnotations", "expression": "has(oldObject.metadata.annotations) ? oldObject.metadata.annotations : {}"},
            ],
            "validations": [
                {"expression": f"has({extra}) && '{_POD_NAME}' in {extra} && {extra}['{_POD_NAME}'] == [object.metadata.name]"
                               f" && '{_POD_UID}' in {extra} && {extra}['{_POD_UID}'] == [object.metadata.uid]",
                 "message": f"the {name} service account may change only its own pod (the pod its token is bound to)",
                 "reason": "Forbidden"},
                {"expression": "object.spec == oldObject.spec && " + " && ".join(
                    _unchanged(f) for f in ("labels", "ownerReferences", "finalizers")),
                 "message": f"the {name} service account may not change a pod's spec, labels, owners or finalizers",
                 "reason": "Forbidden"},
                {"expression": f"variables.annotations.all(k, k == '{DELETION_COST}' || (k in variables.oldAnnotations"
                               " && variables.oldAnnotations[k] == variables.annotations[k]))"
                               f" && variables.oldAnnotations.all(k, k == '{DELETION_COST}' || k in variables.annotations)",
                 "message": f"the {name} service account may change no annotation but {DELETION_COST}",
                 "reason": "Forbidden"},
                {"expression": f"!('{DELETION_COST}' in variables.annotations)"
                               f" || variables.annotations['{DELETION_COST}'].matches('^-?[0-9]+$')",
                 "message": f"{DELETION_COST} is an integer", "reason": "Invalid"},
            ],
        },
    }, {
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding", "metadata": _meta(policy),
        "spec": {"policyName": policy, "validationActions": ["Deny"],
                 "matchResources": {"namespaceSelector": {"matchLabels": {_PART_OF: _PART[_PART_OF]}}}},
    }]


def _rbac(name: str, rules: list[dict[str, Any]], namespace: str) -> list[dict[str, Any]]:
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(name)},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": _meta(name), "rules": rules},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": _meta(name),
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
         "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": namespace}]},
    ]


#: services anyone may call (from outside the namespace too): the trainer's API (bearer token
#: required) and Grafana's UI; every other port admits only the calls deploy/services.yaml names
_ENTRY_POINTS = ("trainer", "grafana")
#: where KEDA's operator runs (its default namespace): it asks Prometheus for the env fleet's demand
_KEDA_NAMESPACE = "keda"


#: the cluster's DNS (kube-dns/CoreDNS in kube-system, as kubeadm, GKE, EKS and AKS label it)
_DNS = {"to": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
                "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}}}],
        "ports": [{"port": 53, "protocol": "UDP"}, {"port": 53, "protocol": "TCP"}]}


def _network_policies(desc: Description, names: list[str]) -> list[dict[str, Any]]:
    """Nothing in or out by default. Ingress: a service's main port from the services that depend on
    or use it (deploy/services.yaml), its metrics from Prometheus. Egress: the main ports of the
    services it depends on or uses (a sidecar is on localhost, which no policy governs), DNS, the
    API server for the pods with a service account (its endpoint addresses: kubernetes.api_server),
    HTTPS anywhere only for a service whose `internet` says why. Prometheus reaches every pod's
    scrape port. The env pod (Chromium) reaches nothing but its peers, DNS and the API server."""
    def pods(*apps: str) -> list[dict[str, Any]]:
        return [{"podSelector": {"matchLabels": {_APP: a}}} for a in apps]

    def main_port(name: str) -> str:
        return "grpc" if desc.services[name].protocol == "grpc" else "http"

    api = desc.kubernetes.api_server
    policies: list[dict[str, Any]] = [{
        "apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": _meta("default-deny"),
        "spec": {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]},
    }]
    for name in names:
        svc = desc.services[name]
        main = main_port(name)
        callers = sorted(n for n in names if n != name and name in (*desc.services[n].depends_on, *desc.services[n].uses))
        if name == "prometheus":
            sources: list[dict[str, Any]] = pods(*callers) + [
                {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": _KEDA_NAMESPACE}}}]
        else:
            sources = pods(*callers)
        rules: list[dict[str, Any]] = []
        if name in _ENTRY_POINTS:
            rules.append({"ports": [{"port": main}]})
        elif sources:
            rules.append({"from": sources, "ports": [{"port": main}]})
        if name != "prometheus":   # scraped: the metrics port, or the main one of a third-party image
            rules.append({"from": pods("prometheus"), "ports": [{"port": "metrics" if svc.metrics_port is not None else main}]})
        # the peers it calls, whether or not this overlay runs them (vLLM: the gpu overlay's)
        callees = [n for n in dict.fromkeys((*svc.depends_on, *svc.uses))
                   if not desc.services[n].kubernetes.sidecar_of and not desc.services[n].kubernetes.variant_of]
        egress: list[dict[str, Any]] = [{"to": pods(n), "ports": [{"port": main_port(n)}]} for n in callees]
        if name == "prometheus":   # every pod's scrape port: a HALO service's metrics, a third-party main port
            egress.append({"to": [{"podSelector": {}}], "ports": [{"port": "metrics"}, {"port": "http"}]})
        egress.append(copy.deepcopy(_DNS))
        if name in _SERVICE_ACCOUNTS:
            egress.append({"to": [{"ipBlock": {"cidr": c}} for c in api.cidrs],
                           "ports": [{"port": p, "protocol": "TCP"} for p in api.ports]})
        meta = _meta(name)
        if svc.kubernetes.internet:
            egress.append({"ports": [{"port": 443, "protocol": "TCP"}]})
            meta["annotations"] = {"halo/internet": " ".join(svc.kubernetes.internet.split())}
        policies.append({
            "apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": meta,
            "spec": {"podSelector": {"matchLabels": {_APP: name}}, "policyTypes": ["Ingress", "Egress"],
                     "ingress": rules, "egress": egress},
        })
    return policies


def _prometheus_config(desc: Description) -> dict[str, Any]:
    """Every pod that carries prometheus.io/scrape, in the namespace: each env replica is its own target;
    job = the pod's app name (the compose file's job names, which the dashboards select on)."""
    return {
        "global": {"scrape_interval": desc.prometheus.scrape_interval, "evaluation_interval": desc.prometheus.evaluation_interval},
        # in the same ConfigMap, so beside prometheus.yml in /etc/prometheus
        **({"rule_files": [Path(r).name for r in desc.prometheus.rule_files]} if desc.prometheus.rule_files else {}),
        "scrape_configs": [{
            "job_name": "halo-pods",
            "kubernetes_sd_configs": [{"role": "pod", "namespaces": {"names": [desc.kubernetes.namespace]}}],
            "relabel_configs": [
                {"source_labels": ["__meta_kubernetes_pod_annotation_prometheus_io_scrape"], "regex": "true", "action": "keep"},
                {"source_labels": ["__meta_kubernetes_pod_phase"], "regex": "Running", "action": "keep"},
                {"source_labels": ["__address__", "__meta_kubernetes_pod_annotation_prometheus_io_port"],
                 "regex": "([^:]+)(?::\\d+)?;(\\d+)", "replacement": "$1:$2", "target_label": "__address__"},
                {"source_labels": ["__meta_kubernetes_pod_annotation_prometheus_io_path"], "target_label": "__metrics_path__"},
                {"source_labels": [f"__meta_kubernetes_pod_label_{_APP.replace('.', '_').replace('/', '_')}"], "target_label": "job"},
                {"source_labels": ["__meta_kubernetes_pod_name"], "target_label": "instance"},
            ],
        }],
    }


def _config_map(name: str, data: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": _meta(name), "data": data}


def _base(desc: Description) -> dict[str, list[dict[str, Any]]]:
    where = k8s_placement(desc)
    ns = desc.kubernetes.namespace
    files: dict[str, list[dict[str, Any]]] = {
        # Pod Security admission holds every pod of the namespace to "restricted" (the manifests meet it)
        "namespace.yaml": [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, "labels": dict(_PART) | {
            _APP: ns, "pod-security.kubernetes.io/enforce": "restricted",
            "pod-security.kubernetes.io/enforce-version": "v" + ".".join(desc.kubernetes.version.split(".")[:2])}}}],
    }
    stateful = {v for s in desc.services.values() if s.kubernetes.workload == "StatefulSet" or s.kubernetes.sidecar_of
                for v in s.volumes}   # claims of their own, or the pod's emptyDir
    used = {v for n, s in desc.services.items() if not s.profiles for v in s.volumes} - stateful
    storage = desc.kubernetes.storage
    files["volumes.yaml"] = [{
        "apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": _meta(v),
        "spec": {"accessModes": [storage[v]["access"]], "resources": {"requests": {"storage": storage[v]["size"]}},
                 # no class: the cluster's default; a user overlay patches in its own (docs)
                 **({"storageClassName": storage[v]["class"]} if storage[v].get("class") else {})},
    } for v in desc.volumes if v in used]
    for name, svc in desc.services.items():
        if svc.profiles or svc.kubernetes.sidecar_of:
            continue
        files[f"{name}.yaml"] = _workload(desc, name, where)
    for config_name, spec in desc.configs().items():
        text = render_file(desc, config_name, where)
        files[f"{config_name}-config.yaml"] = [_config_map(f"{config_name}-config", {Path(spec.path).name: text})]
    files["prometheus-config.yaml"] = [
        _config_map("prometheus-config", {"prometheus.yml": yaml.safe_dump(_prometheus_config(desc), sort_keys=False),
                                          **{Path(r).name: (REPO_ROOT / r).read_text() for r in desc.prometheus.rule_files}}),
    ]
    workloads = [n for n, svc in desc.services.items() if not svc.profiles and not svc.kubernetes.sidecar_of]
    files["network-policies.yaml"] = _network_policies(desc, workloads)
    grafana = REPO_ROOT / "deploy" / "grafana"
    files["grafana-config.yaml"] = [
        _config_map("grafana-datasources", {"prometheus.yml": (grafana / "provisioning/datasources/prometheus.yml").read_text()}),
        _config_map("grafana-dashboard-provider", {"halo.yml": (grafana / "provisioning/dashboards/halo.yml").read_text()}),
        _config_map("grafana-dashboards", {p.name: p.read_text() for p in sorted((grafana / "dashboards").glob("*.json"))}),
    ]
    return files


def _dump_all(objects: list[dict[str, Any]], note: str = "") -> str:
    return _HEADER + note + "---\n".join(yaml.safe_dump(o, sort_keys=False, width=120) for o in objects)


def _sizing_note(desc: Description, names: list[str]) -> str:
    lines = []
    for name in names:
        kube = desc.services[name].kubernetes
        if kube.sizing:
            lines.append(f"# {name}: requests {kube.cpu} CPU, {kube.memory} memory. Where from: {' '.join(kube.sizing.split())}\n")
    return "".join(lines)


def rendered_k8s(desc: Description) -> dict[Path, str]:
    """Every file of deploy/k8s/ (path -> text)."""
    out: dict[Path, str] = {}
    base = _base(desc)
    for file, objects in base.items():
        service = file.removesuffix(".yaml")
        note = _sizing_note(desc, [service, *_sidecars(desc, service)]) if service in desc.services else ""
        out[K8S_ROOT / "base" / file] = _dump_all(objects, note)
    out[K8S_ROOT / "base" / "kustomization.yaml"] = _HEADER + yaml.safe_dump({
        "apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization",
        "namespace": desc.kubernetes.namespace, "resources": sorted(base),
    }, sort_keys=False)

    gateway_only_embedded = {"patch": json.dumps([{"op": "add", "path": "/spec/template/spec/containers/0/env/-", "value": {
        "name": f"{desc.services['gateway'].env_prefix}ONLY_ROUTES", "value": '["embedded"]'}}]),
        "target": {"kind": "Deployment", "name": "gateway"}}
    out[K8S_ROOT / "overlays" / "cpu" / "kustomization.yaml"] = _HEADER + (
        "# kubectl apply -k deploy/k8s/overlays/cpu: no GPU; the gateway serves the embedded policy only\n"
    ) + yaml.safe_dump({
        "apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization",
        "namespace": desc.kubernetes.namespace, "resources": ["../../base"], "patches": [gateway_only_embedded],
    }, sort_keys=False)

    scaled = {n: s.kubernetes.autoscale for n, s in desc.services.items() if s.kubernetes.autoscale and not s.profiles}
    out[K8S_ROOT / "components" / "keda" / "scaledobjects.yaml"] = _dump_all(
        [_scaled_object(desc, n, a) for n, a in scaled.items()])
    out[K8S_ROOT / "components" / "keda" / "kustomization.yaml"] = _HEADER + (
        "# Optional, with KEDA installed (keda.sh): add `components: [../../components/keda]` to an overlay.\n"
        "# It scales the env fleet on session demand (Prometheus) and deletes the CPU HPA it replaces.\n"
    ) + yaml.safe_dump({
        "apiVersion": "kustomize.config.k8s.io/v1alpha1", "kind": "Component",
        "resources": ["scaledobjects.yaml"],
        "patches": [{"patch": yaml.safe_dump({"$patch": "delete", "apiVersion": "autoscaling/v2",
                                              "kind": "HorizontalPodAutoscaler", "metadata": {"name": n}}, sort_keys=False)}
                    for n in scaled],
    }, sort_keys=False)

    where = k8s_placement(desc)
    gpu_names = [n for n, s in desc.services.items() if "gpu" in s.profiles and not s.kubernetes.variant_of]
    gpu_objects = [o for n in gpu_names for o in _workload(desc, n, where)]
    gpu_all = [n for n, svc in desc.services.items() if not svc.kubernetes.sidecar_of and (not svc.profiles or n in gpu_names)]
    gpu_objects += [p for p in _network_policies(desc, gpu_all) if p["metadata"]["name"] in gpu_names]
    out[K8S_ROOT / "overlays" / "gpu" / "vllm.yaml"] = _dump_all(gpu_objects, _sizing_note(desc, gpu_names))
    out[K8S_ROOT / "overlays" / "gpu" / "kustomization.yaml"] = _HEADER + (
        "# kubectl apply -k deploy/k8s/overlays/gpu: base + vLLM on one nvidia.com/gpu of the GPU node pool\n"
        "# (more engines, one GPU each: `replicas: [{name: vllm, count: N}]` in an overlay of your own)\n"
    ) + yaml.safe_dump({
        "apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization",
        "namespace": desc.kubernetes.namespace, "resources": ["../../base", "vllm.yaml"],
    }, sort_keys=False)
    for name, svc in desc.services.items():
        if svc.kubernetes.variant_of:
            out[K8S_ROOT / "components" / name / "kustomization.yaml"] = _variant_component(desc, name, where)
    for component in ("chromium-sandbox", "gvisor"):
        out.update(_containment_component(desc, component))
    return out


def _containment_component(desc: Description, component: str) -> dict[Path, str]:
    """deploy/k8s/components/chromium-sandbox and gvisor: what contains the env pod's browser instead
    of the base's RuntimeDefault seccomp profile alone (SANDBOX_REASONS)."""
    env = desc.services["env"]
    container: dict[str, Any] = {"name": "env"}
    pod: dict[str, Any] = {}
    if component == "chromium-sandbox":
        # the env container only: the sites sidecar keeps the pod's RuntimeDefault profile
        container["securityContext"] = {"seccompProfile": {"type": "Localhost", "localhostProfile": SECCOMP_PROFILE}}
        container["env"] = [{"name": f"{env.env_prefix}CHROMIUM_SANDBOX", "value": "on"}]
        note = (f"# The env container runs Chromium with its sandbox, under the seccomp profile deploy/seccomp/chromium.json,\n"
                f"# which must be on every node that may run an env pod as <kubelet seccomp root>/{SECCOMP_PROFILE}\n"
                f"# (/var/lib/kubelet/seccomp/{SECCOMP_PROFILE}: copied there, or a SeccompProfile of the Security Profiles\n"
                f"# Operator); a node without it fails the container's start, never runs the browser unsandboxed.\n")
    else:
        pod["runtimeClassName"] = GVISOR_RUNTIME_CLASS
        note = (f"# The env pod runs in gVisor (RuntimeClass {GVISOR_RUNTIME_CLASS}: GKE Sandbox, or runsc installed as a\n"
                f"# containerd handler with a RuntimeClass of that name); Chromium's own sandbox stays off inside it.\n")
    if len(container) > 1:
        pod["containers"] = [container]
    # a strategic merge patch: the containers and their variables merge by name
    patch = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "env"}, "spec": {"template": {
        "metadata": {"annotations": {SANDBOX_ANNOTATION: SANDBOX_REASONS[component]}}, "spec": pod}}}
    folder = K8S_ROOT / "components" / component
    return {
        folder / "env.yaml": _dump_all([patch]),
        folder / "kustomization.yaml": _HEADER + (
            f"# Add `components: [../../components/{component}]` to an overlay (docs/guides/deployment-kubernetes.md, Containment).\n"
        ) + note + yaml.safe_dump({"apiVersion": "kustomize.config.k8s.io/v1alpha1", "kind": "Component",
                                   "patches": [{"path": "env.yaml"}]}, sort_keys=False),
    }


def _variant_component(desc: Description, name: str, where: Placement) -> str:
    """deploy/k8s/components/NAME: service `variant_of`'s Deployment made into NAME: its image, resources
    (a GPU among them: the GPU nodes' placement too), sizing note, and the settings it has that the
    other lacks (its ports, folders and targets stay the other's)."""
    kube = desc.services[name].kubernetes
    target = kube.variant_of
    base = {e["name"] for e in _container(desc, target, where)[0]["env"]}
    variant, _ = _container(desc, name, where)
    image = f"{kube.image}:{default_tag()}" if kube.image else variant["image"]
    spec = "/spec/template/spec"
    ops: list[dict[str, Any]] = [
        {"op": "replace", "path": f"{spec}/containers/0/image", "value": image},
        {"op": "replace", "path": f"{spec}/containers/0/resources", "value": variant["resources"]},
        *({"op": "add", "path": f"{spec}/containers/0/env/-", "value": {**e, "value": _default(e["value"])} if "value" in e else e}
          for e in variant["env"] if e["name"] not in base),
    ]
    if kube.gpus:
        ops += [{"op": "add", "path": f"{spec}/{key}", "value": value} for key, value in _gpu_placement(desc.kubernetes.gpu_nodes).items()]
    if kube.sizing:
        ops.append({"op": "replace", "path": "/spec/template/metadata/annotations/halo~1sizing", "value": " ".join(kube.sizing.split())})
    return _HEADER + (
        f"# Add `components: [../../components/{name}]` to an overlay (gpu): the {target} becomes {name}\n"
        f"# (image {kube.image or variant['image']}, {kube.gpus} nvidia.com/gpu on the GPU nodes, its own defaults).\n"
    ) + yaml.safe_dump({
        "apiVersion": "kustomize.config.k8s.io/v1alpha1", "kind": "Component",
        "patches": [{"target": {"kind": "Deployment", "name": target}, "patch": json.dumps(ops)}],
    }, sort_keys=False, width=120)


def deployment_files() -> dict[Path, str]:
    """Everything `halo deploy render` writes: compose, Prometheus, config copies and deploy/k8s/."""
    desc = load()
    return {**rendered_files(desc), **rendered_k8s(desc)}


# --------------------------------------------------------------------------------------------------
# halo deploy images: build and push the project's images, and point a kustomization at them


def image_stages(desc: Description) -> list[str]:
    """The Dockerfile stages the manifests run (base, env), in the Dockerfile's order."""
    return list(dict.fromkeys(s.stage for s in desc.services.values() if s.is_halo))


@dataclasses.dataclass(frozen=True)
class ProjectImage:
    """One image the manifests run: its name, the Dockerfile stage and the build arguments it takes."""

    name: str                                   # halo-base, halo-env, halo-base-cuda
    stage: str
    build_args: tuple[tuple[str, str], ...] = ()


def project_images(desc: Description, gpu: bool = False) -> list[ProjectImage]:
    """The images of every Dockerfile stage the manifests run; with `gpu`, also the GPU variants' own
    images (trainer-gpu's halo-base-cuda), built as compose builds them (its `build` target and args)."""
    images = [ProjectImage(image_name(desc, stage), stage) for stage in image_stages(desc)]
    if gpu:
        for svc in desc.services.values():
            build = svc.compose.get("build") if svc.is_halo else None
            if svc.kubernetes.image and isinstance(build, dict):
                args = tuple(sorted((str(k), str(v)) for k, v in (build.get("args") or {}).items()))
                images.append(ProjectImage(svc.kubernetes.image, build.get("target", svc.stage), args))
    return list(dict.fromkeys(images))


def image_commands(desc: Description, registry: str, tag: str, push: bool = True, gpu: bool = False) -> list[list[str]]:
    """The docker commands that build (and push) every project image as REGISTRY/NAME:TAG."""
    commands = []
    for image in project_images(desc, gpu):
        ref = f"{registry.rstrip('/')}/{image.name}:{tag}"
        build_args = [part for key, value in image.build_args for part in ("--build-arg", f"{key}={value}")]
        commands.append(["docker", "build", "-f", desc.image.dockerfile, "--target", image.stage, *build_args, "-t", ref, "."])
        if push:
            commands.append(["docker", "push", ref])
    return commands


def kustomize_images(desc: Description, registry: str, tag: str, gpu: bool = False) -> list[dict[str, str]]:
    """A kustomization's `images:`: the manifests' image names -> the pushed ones."""
    return [{"name": image.name, "newName": f"{registry.rstrip('/')}/{image.name}", "newTag": tag}
            for image in project_images(desc, gpu)]


def write_overlay(folder: Path, overlay: str, images: list[dict[str, str]]) -> Path:
    """`folder`/kustomization.yaml on top of deploy/k8s/overlays/`overlay`, with `images:`. An existing
    file keeps everything else it says (components, patches, its own resources); only `images:` entries
    of the project's names are replaced."""
    path = folder / "kustomization.yaml"
    base = os.path.relpath(K8S_ROOT / "overlays" / overlay, folder.resolve())
    body: dict[str, Any] = yaml.safe_load(path.read_text()) if path.exists() else {
        "apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization", "resources": [base]}
    names = {i["name"] for i in images}
    body["images"] = [i for i in body.get("images", []) if i.get("name") not in names] + images
    folder.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(body, sort_keys=False))
    return path


def images_main(registry: str, tag: str, overlay: str, folder: str, push: bool, dry_run: bool, gpu: bool = False) -> int:
    """`halo deploy images`: build (and push) the images, then write the overlay that names them."""
    if not registry or "://" in registry:
        print(f"halo deploy images: --registry is a registry path such as ghcr.io/me, got {registry!r}")
        return 2
    if not tag or tag == "latest" or not all(c.isalnum() or c in "._-" for c in tag):
        print(f"halo deploy images: --tag must be a fixed tag (letters, digits, . _ -; not 'latest'), got {tag!r}")
        return 2
    desc = load()
    for command in image_commands(desc, registry, tag, push, gpu):
        print("+", shlex.join(command), flush=True)
        if not dry_run:
            done = subprocess.run(command, cwd=REPO_ROOT)
            if done.returncode != 0:
                print(f"halo deploy images: `{shlex.join(command)}` failed (exit {done.returncode})")
                return done.returncode
    images = kustomize_images(desc, registry, tag, gpu)
    if folder:
        path = write_overlay(Path(folder), overlay, images)
        print(f"wrote {path}: kubectl apply -k {path.parent}")
    else:
        print(yaml.safe_dump({"images": images}, sort_keys=False), end="")
    return 0
