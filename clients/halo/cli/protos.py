"""Regenerate the Python stubs in clients/halo/v1 from protos/halo/v1.

`halo protos` (or `python -m halo.cli.protos`) writes them; `--check` exits non-zero
when the committed stubs differ from what the protos generate (CI runs this).
"""

from __future__ import annotations

import filecmp
import importlib.resources
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[3]
PROTO_ROOT = REPO_ROOT / "protos"
STUB_DIR = REPO_ROOT / "clients" / "halo" / "v1"


def proto_files() -> list[Path]:
    return sorted((PROTO_ROOT / "halo" / "v1").glob("*.proto"))


def generate(out_root: Path) -> list[Path]:
    """Run protoc into `out_root` (which gets halo/v1/...); returns the generated files."""
    from grpc_tools import protoc

    well_known = importlib.resources.files("grpc_tools") / "_proto"
    args = [
        "protoc",
        f"-I{PROTO_ROOT}",
        f"-I{well_known}",
        f"--python_out={out_root}",
        f"--pyi_out={out_root}",
        f"--grpc_python_out={out_root}",
        *[str(p) for p in proto_files()],
    ]
    if protoc.main(args) != 0:
        raise RuntimeError("protoc failed: " + " ".join(args))
    out_dir = out_root / "halo" / "v1"
    (out_dir / "__init__.py").write_text('"""Generated protobuf/gRPC stubs for halo.v1 (do not edit)."""\n')
    return sorted(p for p in out_dir.iterdir() if p.is_file())


def drifted_files() -> list[str]:
    """Names of stub files that differ from a fresh generation (missing or extra included)."""
    with tempfile.TemporaryDirectory() as tmp:
        fresh = {p.name: p for p in generate(Path(tmp))}
        committed = {p.name: p for p in STUB_DIR.iterdir() if p.is_file()} if STUB_DIR.exists() else {}
        names = set(fresh) | set(committed)
        return sorted(
            n for n in names
            if n not in fresh or n not in committed or not filecmp.cmp(fresh[n], committed[n], shallow=False)
        )


def write() -> list[Path]:
    STUB_DIR.mkdir(parents=True, exist_ok=True)
    for old in STUB_DIR.glob("*_pb2*.py*"):
        old.unlink()
    return generate(REPO_ROOT / "clients")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if "--check" in argv:
        drift = drifted_files()
        if drift:
            print("generated stubs drift from protos/: " + ", ".join(drift), file=sys.stderr)
            print("run `halo protos` and commit the result", file=sys.stderr)
            return 1
        print("stubs match protos")
        return 0
    for path in write():
        print(path.relative_to(REPO_ROOT))
    return 0


def add_parser(sub) -> None:
    protos = sub.add_parser("protos", help="regenerate (or check) the gRPC stubs from protos/")
    protos.add_argument("--check", action="store_true", help="fail when committed stubs drift")
    protos.set_defaults(run=lambda args: main(["--check"] if args.check else []))


if __name__ == "__main__":
    raise SystemExit(main())
