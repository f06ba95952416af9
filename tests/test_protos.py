"""The committed stubs are exactly what the protos generate, and the contracts follow the rules."""

from __future__ import annotations

from halo.cli.protos import drifted_files, proto_files
from halo.v1 import common_pb2, env_pb2, policy_pb2, reward_pb2, trainer_pb2

def test_committed_stubs_match_the_protos():
    assert drifted_files() == [], "run `halo protos` and commit clients/halo/v1"

def test_every_service_proto_exists():
    names = {p.stem for p in proto_files()}
    assert {"common", "env", "reward", "policy", "trainer"} <= names

def test_enums_start_with_unspecified_zero():
    for module in (common_pb2, env_pb2, policy_pb2, reward_pb2, trainer_pb2):
        for enum in module.DESCRIPTOR.enum_types_by_name.values():
            zero = enum.values_by_number[0].name
            assert zero.endswith("_UNSPECIFIED"), f"{enum.full_name} zero value is {zero}"

def test_every_field_and_rpc_is_documented():
    """Every field and rpc carries a comment (on its line or the line above): the protos are the docs."""
    import re

    for path in proto_files():
        lines = path.read_text().splitlines()
        for i, line in enumerate(lines):
            stripped = line.strip()
            is_field = re.match(r"^(repeated |map<[^>]+> |optional )?[\w.]+ \w+ = \d+;", stripped)
            is_rpc = stripped.startswith("rpc ")
            if not (is_field or is_rpc):
                continue
            documented = "//" in line or lines[i - 1].strip().startswith("//")

            assert documented, f"{path.name}:{i + 1} undocumented: {stripped}"

def test_services_are_versioned_under_halo_v1():
    services = [s.full_name for m in (env_pb2, policy_pb2, reward_pb2, trainer_pb2) for s in m.DESCRIPTOR.services_by_name.values()]
    assert sorted(services) == ["halo.v1.EnvService", "halo.v1.PolicyGatewayService", "halo.v1.RewardService", "halo.v1.TrainerService"]
