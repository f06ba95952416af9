"""Trainer service settings (flags or HALO_TRAINER_* env vars)."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import SettingsConfigDict

from halo.runtime.settings import ServiceSettings


class TrainerSettings(ServiceSettings):
    model_config = SettingsConfigDict(env_prefix="HALO_TRAINER_", extra="forbid", cli_kebab_case=True)

    port: int = Field(50055, description="gRPC port (0 picks a free one)")
    runs_dir: str = Field("runs", description="folder holding every run (specs, events, metrics, checkpoints)")
    env_target: str = Field("127.0.0.1:50051", description="env service host:port, or a fleet of replicas: host:port,host:port or fleet://name:port (halo.client.fleet)")
    reward_target: str = Field("127.0.0.1:50052", description="reward service host:port")
    gateway_target: str = Field("127.0.0.1:50053", description="policy gateway host:port")
    service_token: str = Field("", description="bearer token for calls to the other services (none: the trainer's own auth token, one token for the deployment)")
    service_tls_ca: str = Field("", description="PEM root certificate to trust: call the other services over TLS")
    auto_resume: bool = Field(True, description="resume runs that were active when the service last stopped")
    # what a submitted local_lora run leaves empty (halo.trainer.defaults): the deployment's vLLM
    local_lora_route: str = Field("", description="local_lora runs that name no vLLM route (extra.serve_route) sample through this gateway route")
    local_lora_base_model: str = Field("", description="local_lora runs that name no base model train on this checkpoint: a folder, or a Hugging Face id found in the local cache (HF_HOME), as vLLM serves it")
    local_lora_device: str = Field("", description="local_lora runs that name no device (extra.device) put their learner on this one (cuda, cpu)")
