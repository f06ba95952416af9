"""Start SkyRL 0.3.0's Tinker-API server (run with `.venv-skyrl/bin/python`), speaking tinker 0.38's wire.

    .venv-skyrl/bin/python tests/tinker_server/skyrl_server.py --base-model DIR --port 8123 \
        --checkpoints-base DIR --database-url sqlite:///DIR/tinker.db

What differs from `python -m skyrl.tinker.api`, and why:
- Its API process starts its engine with `uv run <the parent's uv flags> -m skyrl.tinker.engine`,
  read from the parent's command line; without `uv run` it refuses to start. Here the engine is
  started with this venv's own python (`_build_uv_run_cmd_engine` replaced), same arguments.
- The SDK's protobuf exchanges are translated by `proto_wire.TinkerProtoWire` (this folder).
- It binds 127.0.0.1, never 0.0.0.0.
Everything else (routes, database, engine, JAX backend) is SkyRL's own code, unchanged.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))   # proto_wire, without HALO's packages

import uvicorn  # noqa: E402
from skyrl.tinker import api  # noqa: E402
from skyrl.tinker.config import EngineConfig, add_model, config_to_argv  # noqa: E402

from proto_wire import TinkerProtoWire  # noqa: E402


def engine_command(parent_cmd: list[str], engine_config: EngineConfig) -> list[str]:
    """The engine process, started by this interpreter instead of `uv run`."""
    return [sys.executable, "-m", "skyrl.tinker.engine", *config_to_argv(engine_config)]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="SkyRL's Tinker-API server with tinker 0.38's protobuf wire")
    add_model(parser, EngineConfig)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args(argv)
    api.app.state.engine_config = EngineConfig.model_validate(
        {k: v for k, v in vars(args).items() if k in EngineConfig.model_fields})
    api._build_uv_run_cmd_engine = engine_command
    uvicorn.run(TinkerProtoWire(api.app), host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
