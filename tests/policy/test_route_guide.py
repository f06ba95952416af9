"""docs/guides/add-a-model-route.md: its example route file is one the gateway loads as written,
and the refusals it promises (unknown key, missing base_url, a name twice) name what is wrong."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from halo.policy.config import load_gateway_config

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "add-a-model-route.md"


@pytest.fixture
def example() -> dict:
    return yaml.safe_load(re.search(r"```yaml\n(.*?)```", GUIDE.read_text(), re.S).group(1))


def write(tmp_path: Path, config: dict) -> Path:
    path = tmp_path / "my-gateway.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def test_the_guides_routes_load_as_written(example, tmp_path):
    config = load_gateway_config(write(tmp_path, example))
    routes = {r.name: r for r in config.routes}
    assert routes["qwen3vl-32b"].backend == "vllm" and routes["qwen3vl-32b"].model_name == "qwen3-vl"
    assert routes["my-provider"].api_key_env == "MY_PROVIDER_KEY" and not routes["my-provider"].native_n


@pytest.mark.parametrize("change, named", [
    (lambda routes: routes[0].update(temprature=0.7), "temprature"),
    (lambda routes: routes[1].pop("base_url"), "needs base_url"),
    (lambda routes: routes[1].update(name=routes[0]["name"]), "duplicate route names"),
])
def test_a_broken_route_file_is_refused_naming_what_is_wrong(example, tmp_path, change, named):
    change(example["routes"])
    with pytest.raises(ValueError, match=named):
        load_gateway_config(write(tmp_path, example))
