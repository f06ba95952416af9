"""The gateway core's rule for adapter names on routes whose backend caches prompts by adapter name
(vLLM): a name once loaded takes only the same weights again. No server: the core with a backend
that records the loads it is asked for (tests/lora/test_vllm_adapter_names.py runs the real vLLM)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from halo.errors import FailedPrecondition, InvalidArgument
from halo.policy.adapter_names import AdapterNames, AdapterSource, adapter_fingerprint
from halo.policy.backends.base import Backend, BackendResult
from halo.policy.config import GatewayConfig, RouteConfig
from halo.policy.gateway import PolicyGateway


class RecordingBackend(Backend):
    """Takes every adapter with a path and records the calls; a path ending in "broken" is refused."""

    def __init__(self, route: RouteConfig, caches_by_name: bool) -> None:
        super().__init__(route)
        self.caches_prompts_by_adapter_name = caches_by_name
        self.calls: list[tuple[str, ...]] = []

    async def sample(self, prompt, ctx, params, adapter) -> BackendResult:
        return BackendResult(completions=[])

    async def load_adapter(self, name: str, path: str, weights: bytes) -> None:
        if path.endswith("broken"):
            raise InvalidArgument(f"refused {path}")
        self.calls.append(("load", name, path))

    async def unload_adapter(self, name: str) -> None:
        self.calls.append(("unload", name))


def gateway(caches_by_name: bool = True) -> tuple[PolicyGateway, RecordingBackend]:
    route = RouteConfig(name="r", backend="vllm", base_url="http://127.0.0.1:9/v1", served_model="m")
    backend = RecordingBackend(route, caches_by_name)
    return PolicyGateway(GatewayConfig(routes=[route]), backends={"r": backend}), backend


def adapter(folder: Path, weights: bytes, config: str = '{"r": 4}') -> str:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "adapter_config.json").write_text(config)
    (folder / "adapter_model.safetensors").write_bytes(weights)
    return str(folder)


async def test_a_name_takes_only_the_weights_first_loaded_under_it(tmp_path):
    core, backend = gateway()
    a, b = adapter(tmp_path / "a", b"weights-a"), adapter(tmp_path / "b", b"weights-b")
    assert await core.load_adapter("r", "x", a, b"", False) == 1
    assert await core.load_adapter("r", "x", a, b"", False) == 2   # the same weights again: a reload
    assert backend.calls == [("load", "x", a), ("load", "x", a)]

    with pytest.raises(FailedPrecondition) as refused:
        await core.load_adapter("r", "x", b, b"", True)
    message = str(refused.value)
    assert "\n" not in message and repr(a) in message and repr(b) in message
    assert "prefix-cache" in message and "new name" in message and "run-<id>-v<N>" in message
    # a refused load changes nothing: the first weights stay loaded, at their version, not made default
    assert backend.calls == [("load", "x", a), ("load", "x", a)]
    assert core.routes["r"].adapters["x"].path == a and core.routes["r"].adapters["x"].version == 2
    assert core.routes["r"].default_adapter == ""

    original = Path(a, "adapter_model.safetensors").read_bytes()
    Path(a, "adapter_model.safetensors").write_bytes(b"weights-a, trained further")
    with pytest.raises(FailedPrecondition, match="whose files have changed"):
        await core.load_adapter("r", "x", a, b"", False)
    Path(a, "adapter_model.safetensors").write_bytes(original)
    assert await core.load_adapter("r", "x", a, b"", False) == 3

    assert await core.load_adapter("r", "x-v2", b, b"", False) == 1   # new weights, new name
    # unloaded, the name is still remembered: vLLM may still cache prompts under it
    assert await core.unload_adapter("r", "x")
    with pytest.raises(FailedPrecondition):
        await core.load_adapter("r", "x", b, b"", False)
    assert await core.load_adapter("r", "x", a, b"", False) == 4


async def test_a_folder_the_gateway_cannot_read_is_loaded_once_per_name(tmp_path):
    core, backend = gateway()
    elsewhere = str(tmp_path / "on-the-vllm-host")   # not on this machine
    assert await core.load_adapter("r", "y", elsewhere, b"", False) == 1
    with pytest.raises(FailedPrecondition, match="cannot read"):
        await core.load_adapter("r", "y", elsewhere, b"", False)
    assert backend.calls == [("load", "y", elsewhere)]


async def test_a_load_the_backend_refused_is_not_remembered(tmp_path):
    core, _ = gateway()
    with pytest.raises(InvalidArgument):
        await core.load_adapter("r", "z", str(tmp_path / "broken"), b"", False)
    assert await core.load_adapter("r", "z", adapter(tmp_path / "c", b"c"), b"", False) == 1


async def test_a_backend_that_caches_nothing_by_name_replaces_the_weights(tmp_path):
    core, backend = gateway(caches_by_name=False)
    a, b = adapter(tmp_path / "a", b"a"), adapter(tmp_path / "b", b"b")
    assert await core.load_adapter("r", "x", a, b"", False) == 1
    assert await core.load_adapter("r", "x", b, b"", False) == 2
    assert core.routes["r"].adapters["x"].path == b and backend.calls[-1] == ("load", "x", b)


def test_only_the_vllm_backend_caches_prompts_by_adapter_name():
    from halo.policy.backends.embedded import EmbeddedBackend
    from halo.policy.backends.openai_compat import OpenAICompatibleBackend, VllmBackend
    from halo.policy.backends.tinker import TinkerBackend

    assert VllmBackend.caches_prompts_by_adapter_name
    assert not any(b.caches_prompts_by_adapter_name for b in (EmbeddedBackend, TinkerBackend, OpenAICompatibleBackend))


def test_the_fingerprint_covers_the_config_and_the_weights(tmp_path):
    a = adapter(tmp_path / "a", b"w" * 3_000_000)   # more than one read chunk
    same = adapter(tmp_path / "same", b"w" * 3_000_000)
    print_a = adapter_fingerprint(a)
    assert print_a is not None and print_a == adapter_fingerprint(same)
    assert adapter_fingerprint(adapter(tmp_path / "w", b"w" * 2_999_999 + b"v")) != print_a
    assert adapter_fingerprint(adapter(tmp_path / "cfg", b"w" * 3_000_000, '{"r": 8}')) != print_a
    assert adapter_fingerprint(str(tmp_path / "missing")) is None
    bin_only = tmp_path / "bin"
    bin_only.mkdir()
    (bin_only / "adapter_config.json").write_text("{}")
    (bin_only / "adapter_model.bin").write_bytes(b"torch")
    assert adapter_fingerprint(str(bin_only)) is None
    fifo = tmp_path / "fifo"
    fifo.mkdir()
    (fifo / "adapter_config.json").write_text("{}")
    os.mkfifo(fifo / "adapter_model.safetensors")
    assert adapter_fingerprint(str(fifo)) is None   # refused at once, never blocks on the pipe
    assert adapter_fingerprint("bad\0path") is None


def test_remembered_names_are_bounded_but_loaded_ones_are_kept():
    names = AdapterNames(limit=3)
    for n in "abcde":
        names.loaded(n, AdapterSource(f"/{n}", "f"))
    assert all(n in names for n in "abcde")   # all loaded: none forgotten
    names.unloaded("a")
    names.unloaded("c")
    names.loaded("f", AdapterSource("/f", "f"))
    assert "a" not in names and "c" not in names and all(n in names for n in "bdef")
    names.unloaded("b")
    names.loaded("g", AdapterSource("/g", "f"))
    assert "b" not in names
    assert names.refusal("b", AdapterSource("/other", "f")) is None   # forgotten: a new name again
    assert names.refusal("d", AdapterSource("/other", "f")) is not None
