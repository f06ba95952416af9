"""The one description of HALO's deployment (deploy/services.yaml) and what is generated from it.

`docker-compose.yml` and `deploy/prometheus/prometheus.yml` are rendered from the description
(`halo deploy render`, `--check` in CI), and `halo up` (halo.cli.launcher) starts the same services as
local processes from the same description, through the same `service_environment()`, so the
containers and the local processes cannot drift apart.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

REPO_ROOT = Path(__file__).resolve().parents[3]
DESCRIPTION_PATH = REPO_ROOT / "deploy" / "services.yaml"
COMPOSE_PATH = REPO_ROOT / "docker-compose.yml"
PROMETHEUS_PATH = REPO_ROOT / "deploy" / "prometheus" / "prometheus.yml"

# {sites.url} {env.target} {volume:runs} {config:prometheus} {bind} {port}; other braces (JSON) are left alone.
_PLACEHOLDER = re.compile(r"\{(bind|port|[a-z][a-z0-9-]*\.(?:url|target)|volume:[a-z0-9-]+|config:[a-z]+)\}")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ImageSpec(_Strict):
    name: str
    dockerfile: str


class PrometheusSpec(_Strict):
    scrape_interval: str = "15s"
    evaluation_interval: str = "15s"
    # alerting/recording rule files (repository paths): compose and Kubernetes mount them beside the
    # scrape config (rule_files names them relative to it), `halo up` names the repository's files
    rule_files: list[str] = Field(default_factory=list)


class FileSpec(_Strict):
    """A config file of the repository as a deployment sees it: `halo up` uses `source` as it is;
    compose mounts a copy at `path`, rendered (`halo deploy render`) with `replace` applied."""

    source: str                                           # repository path, e.g. configs/gateway.yaml
    path: str                                             # where compose mounts the rendered copy
    replace: dict[str, str] = Field(default_factory=dict)  # text -> text (placeholders allowed)

    @property
    def rendered(self) -> str:
        """Repository path of the rendered copy."""
        return f"deploy/configs/{Path(self.source).name}"


class AutoscaleSpec(_Strict):
    """Autoscaling of a fleet: on a Prometheus query with KEDA (deploy/k8s/components/keda), else a
    HorizontalPodAutoscaler on the CPU of the service's container (no KEDA needed)."""

    metric: str                           # PromQL: the fleet's demand, e.g. sessions in use + creates waiting
    per_replica: int                      # target value of `metric` per replica
    min: int = 1
    max: int = 10
    cpu_utilization: int = 75             # the HPA fallback's target, % of the container's CPU request


class KubeSpec(_Strict):
    """How a service runs on Kubernetes (deploy/k8s/, halo.cli.k8s)."""

    workload: Literal["Deployment", "StatefulSet"] = "Deployment"
    replicas: int = 1
    fleet: bool = False                   # a scalable set behind a headless Service: clients see every replica
    cpu: str = "100m"                     # requests
    memory: str = "128Mi"
    memory_limit: str = ""
    shm: str = ""                         # a memory-backed /dev/shm of this size (Chromium, vLLM)
    gpus: int = 0                         # nvidia.com/gpu, on the gpu node selector's nodes
    sizing: str = ""                      # where the figures come from (rendered next to them)
    max_unavailable: int | None = None    # a PodDisruptionBudget
    autoscale: AutoscaleSpec | None = None   # owns the replica count: the workload sets none
    drain_timeout_s: int = 0              # the service's drain on SIGTERM; the pod's grace period covers it
    # runs in each pod of that service instead of pods of its own: a native sidecar (an init
    # container that restarts always: up before it, stopped after it), on localhost, its volumes
    # the pod's own (emptyDir: they outlive a container restart, not the pod)
    sidecar_of: str = ""
    # compose's `${VAR:-default}` in args take these values instead of compose's defaults
    defaults: dict[str, str] = Field(default_factory=dict)
    # not a workload of its own: the component deploy/k8s/components/<this service> makes service
    # `variant_of` into this one (its image, resources, GPU and the settings the other lacks)
    variant_of: str = ""
    image: str = ""                       # the variant's image name (tagged as the project's images)
    # why the service reaches the internet (HTTPS, port 443: a model hub, a hosted model's API); its
    # NetworkPolicy admits that egress and carries the reason. Empty: no egress beyond the namespace's
    # peers it calls, DNS and (with a service account) the API server
    internet: str = ""


class SecretsSpec(_Strict):
    """What keeps a compose deployment closed: a one-shot service (named as the volume) writes a random
    bearer token and Grafana's admin password into a named volume on the first `up`; every gRPC
    service reads the token from there, Grafana its password. Ports are published on
    `publish_address` (loopback unless the operator says otherwise)."""

    volume: str = "secrets"               # a named volume, and the one-shot service that fills it
    path: str = "/run/halo"               # where it is mounted (read-only but in that service)
    token: str = "token"                  # file of the services' bearer token (the image's halo uid)
    grafana_password: str = "grafana-admin-password"   # file of Grafana's admin password (Grafana's uid)
    publish_address: str = "${HALO_PUBLISH_ADDRESS:-127.0.0.1}"


class ApiServerSpec(_Strict):
    """Where pods reach the Kubernetes API server, for the NetworkPolicies of the pods that call it. A
    NetworkPolicy cannot select the API server by labels (it is no pod of the cluster), and CNIs apply
    policies after the `kubernetes` Service's address is translated to the server's own: these are the
    server's endpoint addresses and ports (`kubectl get endpointslices -n default -l
    kubernetes.io/service-name=kubernetes`)."""

    cidrs: list[str] = Field(default_factory=lambda: ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"])
    ports: list[int] = Field(default_factory=lambda: [443, 6443])


class KubernetesSpec(_Strict):
    namespace: str = "halo"
    version: str = "1.32.0"
    storage: dict[str, dict[str, str]] = Field(default_factory=dict)   # volume -> {size, access[, class]}
    # where a pod with a GPU may run: a node affinity, each label's value one of its list
    gpu_nodes: dict[str, list[str]] = Field(default_factory=dict)
    api_server: ApiServerSpec = ApiServerSpec()


class ServiceSpec(_Strict):
    """One service. HALO's own run `halo serve <serve>` from the project image; others name an image."""

    serve: str = ""                       # `halo serve <serve>`; empty for third-party images
    stage: str = "base"                   # Dockerfile stage of the project image
    image: str = ""                       # third-party image (prometheus, grafana, vllm)
    protocol: Literal["grpc", "http"]
    grpc_service: str = ""                # health-checked service name (gRPC)
    port: int
    metrics_port: int | None = None       # Prometheus /metrics of HALO services
    metrics_path: str = ""                # /metrics on the main port (third-party)
    health: str = ""                      # HTTP health path
    env_prefix: str = ""
    depends_on: list[str] = Field(default_factory=list)  # must be up (and healthy) first
    uses: list[str] = Field(default_factory=list)        # optional peers: "" when not running locally
    settings: dict[str, str | int | float | bool] = Field(default_factory=dict)
    volumes: list[str] = Field(default_factory=list)
    args: list[str] = Field(default_factory=list)
    local_binary: str = ""                # third-party service that `halo up` runs when found on PATH
    profiles: list[str] = Field(default_factory=list)
    gpu: str = ""                         # GPU device id(s) reserved in compose
    # compose: up to this many engines of the service on one machine, one GPU each. Profile
    # engines-K runs K of them: the service itself (on `gpu`) and copies NAME-1 .. NAME-(K-1), copy i
    # on GPU i and published on port+i, every copy also answering to NAME (a network alias), so a
    # client that resolves NAME (the gateway's discover_engines) finds every engine. 0: one engine.
    gpu_engines: int = Field(0, ge=0)
    # the copies' `${VAR:-default}` in args take these defaults instead (each copy has a GPU of its own)
    engine_defaults: dict[str, str] = Field(default_factory=dict)
    files: dict[str, FileSpec] = Field(default_factory=dict)  # {config:NAME} placeholders
    compose: dict[str, Any] = Field(default_factory=dict)  # extra compose keys, merged last
    kubernetes: KubeSpec = KubeSpec()     # deploy/k8s/

    @model_validator(mode="after")
    def _check(self) -> "ServiceSpec":
        if bool(self.serve) == bool(self.image):
            raise ValueError("a service has exactly one of `serve` (HALO) or `image` (third-party)")
        if self.serve and not self.env_prefix:
            raise ValueError(f"halo service {self.serve!r} needs env_prefix")
        if self.protocol == "grpc" and not self.grpc_service:
            raise ValueError("a gRPC service names its grpc_service for health checks")
        if self.protocol == "http" and not self.health:
            raise ValueError("an HTTP service names its health path")
        if self.gpu_engines and (self.gpu_engines < 2 or not self.gpu):
            raise ValueError("gpu_engines is a count of at least 2, for a service pinned to a GPU (`gpu`)")
        return self

    def engine_ports(self) -> list[int]:
        """The host ports compose publishes the copies of a service with gpu_engines on (port+1, ...)."""
        return [self.port + i for i in range(1, self.gpu_engines)]

    @property
    def is_halo(self) -> bool:
        return bool(self.serve)

    @property
    def runs_locally(self) -> bool:
        """`halo up` runs it: a HALO service of the default profile (one of a compose profile, such as
        the gpu profile's trainer, runs in compose only), or a third-party binary found on PATH."""
        return (self.is_halo and not self.profiles) or bool(self.local_binary)


class Description(_Strict):
    project: str
    image: ImageSpec
    volumes: dict[str, str]
    secrets: SecretsSpec = SecretsSpec()
    prometheus: PrometheusSpec = PrometheusSpec()
    kubernetes: KubernetesSpec = KubernetesSpec()
    services: dict[str, ServiceSpec]

    @model_validator(mode="after")
    def _check(self) -> "Description":
        names = set(self.services)
        if self.secrets.volume in names or self.secrets.volume in self.volumes:
            raise ValueError(f"secrets.volume {self.secrets.volume!r} is also a service or a volume")
        for rules in self.prometheus.rule_files:
            if not (REPO_ROOT / rules).is_file():
                raise ValueError(f"prometheus: no rule file {rules}")
        for name, svc in self.services.items():
            for dep in (*svc.depends_on, *svc.uses):
                if dep not in names:
                    raise ValueError(f"service {name!r} refers to unknown service {dep!r}")
            if svc.kubernetes.variant_of and svc.kubernetes.variant_of not in names:
                raise ValueError(f"service {name!r} is a variant of unknown service {svc.kubernetes.variant_of!r}")
            for vol in svc.volumes:
                if vol not in self.volumes:
                    raise ValueError(f"service {name!r} mounts unknown volume {vol!r}")
            for file in svc.files.values():
                if not (REPO_ROOT / file.source).is_file():
                    raise ValueError(f"service {name!r}: no file {file.source}")
            for text in (*map(str, svc.settings.values()), *svc.args, *(v for f in svc.files.values() for v in f.replace.values())):
                for ref in _PLACEHOLDER.findall(text):
                    if ref.startswith("config:") and ref[7:] not in {"prometheus", *self.configs()}:
                        raise ValueError(f"service {name!r}: unknown config in {{{ref}}}")
                    if ref.startswith("volume:") and ref[7:] not in self.volumes:
                        raise ValueError(f"service {name!r}: unknown volume in {{{ref}}}")
                    if "." in ref and ref.split(".")[0] not in names:
                        raise ValueError(f"service {name!r}: unknown service in {{{ref}}}")
        self.start_order()  # raises on cycles
        ports = [p for s in self.services.values() for p in (s.port, s.metrics_port, *s.engine_ports()) if p is not None]
        if len(ports) != len(set(ports)):
            raise ValueError("two services share a port")
        return self

    def start_order(self) -> list[str]:
        """Every service, dependencies (hard and optional) before their dependents."""
        order: list[str] = []
        visiting: set[str] = set()

        def visit(name: str) -> None:
            if name in order:
                return
            if name in visiting:
                raise ValueError(f"dependency cycle through {name!r}")
            visiting.add(name)
            svc = self.services[name]
            for dep in (*svc.depends_on, *svc.uses):
                visit(dep)
            visiting.discard(name)
            order.append(name)

        for name in self.services:
            visit(name)
        return order

    def configs(self) -> dict[str, FileSpec]:
        """Config files declared by the services (`{config:NAME}`), besides Prometheus' scrape config."""
        return {n: f for s in self.services.values() for n, f in s.files.items()}

    def scraped(self) -> list[str]:
        """Services Prometheus scrapes (their own /metrics), in description order."""
        return [n for n, s in self.services.items() if s.metrics_port is not None or s.metrics_path or n == "prometheus"]


def load(path: Path = DESCRIPTION_PATH) -> Description:
    return Description.model_validate(yaml.safe_load(path.read_text()))


# --------------------------------------------------------------------------------------------------
# Placeholders and the environment a HALO service gets (shared by compose and `halo up`)


@dataclass(frozen=True)
class Placement:
    """Where the services are, for one kind of deployment."""

    hosts: dict[str, str]          # service -> host name ("" = not running there)
    ports: dict[str, int]          # service -> port
    metrics_ports: dict[str, int]  # service -> metrics port
    bind: str                      # address services bind to
    volumes: dict[str, str]        # volume -> path
    configs: dict[str, str]        # config name -> path
    log_format: str

    def resolve(self, text: str, service: str) -> str:
        def sub(match: re.Match[str]) -> str:
            ref = match.group(1)
            if ref == "bind":
                return self.bind
            if ref == "port":
                return str(self.ports[service])
            if ref.startswith("volume:"):
                return self.volumes[ref[7:]]
            if ref.startswith("config:"):
                return self.configs[ref[7:]]
            name, _, what = ref.partition(".")
            host = self.hosts.get(name, "")
            if not host:
                return ""
            address = f"{host}:{self.ports[name]}"
            return f"http://{address}" if what == "url" else address

        return _PLACEHOLDER.sub(sub, text)


def _env_value(value: str | int | float | bool) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def service_environment(desc: Description, name: str, where: Placement) -> dict[str, str]:
    """HALO_<SERVICE>_* variables of a HALO service: runtime basics + the description's settings."""
    svc = desc.services[name]
    assert svc.is_halo, name
    env = {f"{svc.env_prefix}HOST": where.bind, f"{svc.env_prefix}PORT": str(where.ports[name])}
    if svc.metrics_port is not None:
        env[f"{svc.env_prefix}METRICS_PORT"] = str(where.metrics_ports[name])
        env[f"{svc.env_prefix}LOG_FORMAT"] = where.log_format
    for key, value in svc.settings.items():
        env[f"{svc.env_prefix}{key.upper()}"] = where.resolve(_env_value(value), name)
    return env


def service_args(desc: Description, name: str, where: Placement) -> list[str]:
    return [where.resolve(a, name) for a in desc.services[name].args]


def health_command(svc: ServiceSpec, host: str, port: int) -> list[str]:
    """`halo health ...` for a HALO service (what compose's healthcheck runs)."""
    if svc.protocol == "grpc":
        return ["halo", "health", f"{host}:{port}", "--service", svc.grpc_service]
    return ["halo", "health", f"http://{host}:{port}{svc.health}"]


# --------------------------------------------------------------------------------------------------
# docker-compose.yml


def compose_placement(desc: Description) -> Placement:
    return Placement(
        hosts={n: n for n in desc.services},
        ports={n: s.port for n, s in desc.services.items()},
        metrics_ports={n: s.metrics_port for n, s in desc.services.items() if s.metrics_port is not None},
        bind="0.0.0.0",
        volumes=dict(desc.volumes),
        configs={"prometheus": "/etc/prometheus/prometheus.yml", **{n: f.path for n, f in desc.configs().items()}},
        log_format="json",
    )


#: the uids that read the generated files: deploy/Dockerfile's halo user, the grafana image's own
HALO_UID, GRAFANA_UID = 1000, 472
#: every container's logs: Docker's json-file driver, rotated (at most 3 x 10 MB a container)
COMPOSE_LOGGING = {"driver": "json-file", "options": {"max-size": "10m", "max-file": "3"}}
#: health checks as shipped (and as the compose test runs them): probed every 10 s (each probe of a
#: HALO service starts a Python process: ~0.5 s of CPU), a start period long enough for a loaded
#: machine to import Python and launch Chromium; a check that passes ends it at once
COMPOSE_HEALTHCHECK = {"interval": "10s", "timeout": "60s", "retries": 3, "start_period": "600s"}


def compose_memory(quantity: str) -> str:
    """A Kubernetes memory quantity (3Gi, 1400Mi) as Docker writes it (3g, 1400m: the same 1024-based units)."""
    match = re.fullmatch(r"(\d+)([KMGT])i", quantity)
    if not match:
        raise ValueError(f"memory_limit {quantity!r}: give it in Ki, Mi, Gi or Ti")
    return f"{match.group(1)}{match.group(2).lower()}"


def secrets_service(desc: Description) -> dict[str, Any]:
    """The one-shot service that writes the token and Grafana's password, once: files that exist are
    kept (a restart keeps its token), each mode 0600 and owned by the uid that reads it."""
    spec = desc.secrets
    lean = next(s for s in desc.services.values() if s.is_halo and s.stage == "services" and not s.profiles)
    script = " && ".join([
        "set -eu", "umask 077", f"cd {spec.path}",
        *(f"{{ [ -s {file} ] || od -An -vtx1 -N{size} /dev/urandom | tr -d ' \\n' > {file}; }}"
          for file, size in ((spec.token, 32), (spec.grafana_password, 16))),
        f"chown {HALO_UID}:{HALO_UID} {spec.token}", f"chown {GRAFANA_UID}:{GRAFANA_UID} {spec.grafana_password}",
        f"chmod 0600 {spec.token} {spec.grafana_password}", f"chmod 0755 {spec.path}",
    ])
    return {
        "image": f"{desc.image.name}-{lean.stage}:latest",
        "build": {"context": ".", "dockerfile": desc.image.dockerfile, "target": lean.stage},
        "command": ["sh", "-c", script],
        "user": "0:0",                  # to give each file to its reader; no network, done in a second
        "network_mode": "none",
        "volumes": [f"{spec.volume}:{spec.path}"],
        "restart": "no",
        "logging": copy.deepcopy(COMPOSE_LOGGING),
    }


def render_compose(desc: Description) -> dict[str, Any]:
    where = compose_placement(desc)
    secrets = desc.secrets
    services: dict[str, Any] = {secrets.volume: secrets_service(desc)}
    for name, svc in desc.services.items():
        out: dict[str, Any] = {}
        healthcheck: dict[str, Any] = {}
        if svc.is_halo:
            out["image"] = f"{desc.image.name}-{svc.stage}:latest"
            out["build"] = {"context": ".", "dockerfile": desc.image.dockerfile, "target": svc.stage}
            out["command"] = ["halo", "serve", svc.serve]
            out["environment"] = service_environment(desc, name, where)
            healthcheck["test"] = ["CMD", *health_command(svc, "127.0.0.1", svc.port)]
        else:
            out["image"] = svc.image
            if svc.args:
                out["command"] = service_args(desc, name, where)
        if svc.profiles:
            out["profiles"] = list(svc.profiles)
        out["ports"] = [f"{secrets.publish_address}:{svc.port}:{svc.port}"]
        reads_secret = (svc.is_halo and svc.protocol == "grpc") or name == "grafana"
        if reads_secret:
            if svc.is_halo:
                out["environment"][f"{svc.env_prefix}AUTH_TOKEN_FILE"] = f"{secrets.path}/{secrets.token}"
            else:
                out["environment"] = {"GF_SECURITY_ADMIN_PASSWORD__FILE": f"{secrets.path}/{secrets.grafana_password}"}
        if svc.volumes or svc.files or reads_secret:
            out["volumes"] = [f"{v}:{desc.volumes[v]}" for v in svc.volumes]
            out["volumes"] += [f"./{f.rendered}:{f.path}:ro" for f in svc.files.values()]
            if reads_secret:
                out["volumes"].append(f"{secrets.volume}:{secrets.path}:ro")
        if svc.depends_on or reads_secret:
            out["depends_on"] = {secrets.volume: {"condition": "service_completed_successfully"}} if reads_secret else {}
            out["depends_on"].update({d: {"condition": "service_healthy"} for d in svc.depends_on})
        if svc.is_halo:
            out["init"] = True   # tini as PID 1: Chromium's exited helpers are reaped, signals forwarded
        resources: dict[str, Any] = {}
        if svc.kubernetes.memory_limit:   # the Kubernetes limit and its sizing (no CPU cap: see the guide)
            resources["limits"] = {"memory": compose_memory(svc.kubernetes.memory_limit)}
        if svc.gpu:
            resources["reservations"] = {"devices": [
                {"driver": "nvidia", "device_ids": [svc.gpu], "capabilities": ["gpu"]}
            ]}
        if resources:
            out["deploy"] = {"resources": resources}
        for key, value in svc.compose.items():
            if key == "volumes":
                out["volumes"] = [*out.get("volumes", []), *value]
            elif key == "healthcheck":
                healthcheck.update(value)
            elif key == "environment":
                out["environment"] = {**out.get("environment", {}), **value}
            else:
                out[key] = value
        out["healthcheck"] = {"test": healthcheck.pop("test"), **COMPOSE_HEALTHCHECK, **healthcheck}
        out["restart"] = "unless-stopped"
        out["logging"] = copy.deepcopy(COMPOSE_LOGGING)
        services[name] = out
        services.update(engine_copies(desc, name, out))
    return {"name": desc.project, "services": services,
            "volumes": {v: {} for v in (*desc.volumes, secrets.volume)}}


def _compose_default(arg: str, defaults: dict[str, str]) -> str:
    """`${VAR:-x}` -> `${VAR:-defaults[VAR]}` (still the user's value when VAR is set)."""
    return re.sub(r"\$\{([A-Z_]+):-([^}]*)\}", lambda m: f"${{{m.group(1)}:-{defaults.get(m.group(1), m.group(2))}}}", arg)


def engine_profile(count: int) -> str:
    """The compose profile that runs `count` engines of a service with gpu_engines."""
    return f"engines-{count}"


def engine_copies(desc: Description, name: str, engine: dict[str, Any]) -> dict[str, Any]:
    """The copies of a service with gpu_engines (rendered as `engine`, which joins every engines-K
    profile): copy i is in profiles engines-(i+1) .. engines-N, reserves GPU i alone (one
    `count: 1` reservation per replica of `--scale` would give every replica the same first GPU),
    publishes port+i on the host (one engine reached at a time) and answers to the service's name
    too, so the name resolves to every engine that runs."""
    svc = desc.services[name]
    if not svc.gpu_engines:
        return {}
    profiles = [engine_profile(k) for k in range(2, svc.gpu_engines + 1)]
    engine["profiles"] = [*engine.get("profiles", []), *profiles]
    copies: dict[str, Any] = {}
    for i, host_port in enumerate(svc.engine_ports(), start=1):
        out = copy.deepcopy(engine)
        out["profiles"] = profiles[i - 1:]
        out["ports"] = [f"{desc.secrets.publish_address}:{host_port}:{svc.port}"]
        out["deploy"]["resources"]["reservations"]["devices"][0]["device_ids"] = [str(i)]
        out["networks"] = {"default": {"aliases": [name]}}
        if "command" in out:
            out["command"] = [_compose_default(a, svc.engine_defaults) for a in out["command"]]
        copies[f"{name}-{i}"] = out
    return copies


# --------------------------------------------------------------------------------------------------
# Prometheus scrape config


def render_prometheus(desc: Description, where: Placement, scrape_interval: str | None = None,
                      dns_discovery: bool = False, rules_beside_config: bool = False) -> dict[str, Any]:
    """One job per scraped service that runs in `where` (job name = service name), and the rule files:
    by name when they are mounted beside the config (`rules_beside_config`: compose), else the
    repository's own files (`halo up`).

    With `dns_discovery`, every address the host name resolves to is a target (DNS A records,
    re-resolved every scrape interval): a compose service scaled to N containers is N targets,
    where a static target would scrape whichever container the name happened to resolve to.
    """
    jobs = []
    interval = scrape_interval or desc.prometheus.scrape_interval
    for name in desc.scraped():
        host = where.hosts.get(name, "")
        if not host:
            continue
        svc = desc.services[name]
        port = where.metrics_ports[name] if svc.metrics_port is not None else where.ports[name]
        job: dict[str, Any] = {"job_name": name}
        if dns_discovery:
            job["dns_sd_configs"] = [{"names": [host], "type": "A", "port": port, "refresh_interval": interval}]
        else:
            job["static_configs"] = [{"targets": [f"{host}:{port}"]}]
        if svc.metrics_path:
            job["metrics_path"] = svc.metrics_path
        jobs.append(job)
    config: dict[str, Any] = {
        "global": {"scrape_interval": interval, "evaluation_interval": scrape_interval or desc.prometheus.evaluation_interval},
    }
    if desc.prometheus.rule_files:
        config["rule_files"] = [Path(r).name if rules_beside_config else str(REPO_ROOT / r) for r in desc.prometheus.rule_files]
    config["scrape_configs"] = jobs
    return config


# --------------------------------------------------------------------------------------------------
# Files


def _dump(data: dict[str, Any], header: str) -> str:
    return header + yaml.safe_dump(data, sort_keys=False, default_flow_style=False, width=120)


_GENERATED = "# GENERATED from deploy/services.yaml by `halo deploy render`: edit that file, not this one.\n"


def render_file(desc: Description, name: str, where: Placement) -> str:
    """The rendered copy of config file `name` (every `replace` key must still be in the source)."""
    service = next(s for s, svc in desc.services.items() if name in svc.files)
    spec = desc.services[service].files[name]
    text = (REPO_ROOT / spec.source).read_text()
    for old, new in spec.replace.items():
        if old not in text:
            raise ValueError(f"{spec.source} no longer contains {old!r} (deploy/services.yaml replaces it)")
        text = text.replace(old, where.resolve(new, service))
    return f"# GENERATED from {spec.source} by `halo deploy render` (deploy/services.yaml): edit those, not this.\n" + text


def rendered_files(desc: Description | None = None) -> dict[Path, str]:
    desc = desc or load()
    files = {REPO_ROOT / f.rendered: render_file(desc, n, compose_placement(desc)) for n, f in desc.configs().items()}
    compose_header = _GENERATED + (
        "# docker compose up                 sites, env, reward, gateway, trainer, prometheus, grafana\n"
        "# docker compose --profile gpu up   ... and vLLM on the GPU (HALO_VLLM_GPU, default 0)\n"
        "# docker compose --profile gpu --profile engines-N up   ... N vLLM engines, engine i on GPU i,\n"
        "#                                   all behind the gateway's vLLM route (docs/guides/deployment-compose.md)\n"
    )
    return {
        COMPOSE_PATH: _dump(render_compose(desc), compose_header),
        PROMETHEUS_PATH: _dump(render_prometheus(desc, compose_placement(desc), dns_discovery=True, rules_beside_config=True), _GENERATED),
        **files,
    }


def render(check: bool = False, files: dict[Path, str] | None = None) -> int:
    """Write the generated files (or, with check, report which differ from the description):
    `files`, or those of rendered_files() (`halo deploy render` adds deploy/k8s/, halo.cli.k8s)."""
    stale = []
    for path, text in (rendered_files() if files is None else files).items():
        current = path.read_text() if path.exists() else None
        if current == text:
            continue
        stale.append(path)
        if not check:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    for path in stale:
        rel = path.relative_to(REPO_ROOT) if path.is_relative_to(REPO_ROOT) else path
        print(f"{rel}: {'out of date: run `halo deploy render`' if check else 'written'}")
    return 1 if (check and stale) else 0
