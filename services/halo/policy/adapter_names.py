"""One adapter name, one set of weights, on routes whose backend caches prompts by adapter name.

vLLM's prefix cache reuses the KV blocks of a prompt it has seen under the same adapter. Older
vLLMs key those blocks by the adapter's name alone; every vLLM keys them by name and path at
most, never by the weights' bytes. So a name reloaded with other weights (another folder, or the
same folder rewritten) can be answered from KV computed with the weights first loaded under it.
Without a prefix-cache reset it cannot be ruled out (vLLM's reset endpoint exists only in its dev
mode), so such a route refuses the load: new weights go under a new name (`halo train` loads
`run-<id>-v<N>`). Reloading the very same weights (same path, same bytes: e.g. after a vLLM
restart) stays allowed.
"""

from __future__ import annotations

import hashlib
import stat
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

#: The files of a PEFT adapter folder that decide what vLLM computes with it.
FINGERPRINTED_FILES = ("adapter_config.json", "adapter_model.safetensors")
#: Names remembered per route; past this, the oldest names no longer loaded are forgotten.
MAX_REMEMBERED_NAMES = 10_000
_CHUNK = 1 << 20


def adapter_fingerprint(folder: str) -> str | None:
    """sha256 over a PEFT folder's adapter_config.json and adapter_model.safetensors (read in 1 MiB
    chunks), or None when the gateway cannot read both as regular files (the folder lives on
    another host or container, is missing, or holds other files)."""
    digest = hashlib.sha256()
    try:
        for name in FINGERPRINTED_FILES:
            path = Path(folder) / name
            info = path.stat()
            if not stat.S_ISREG(info.st_mode):   # never block on a FIFO or read a device
                return None
            digest.update(f"{name}\0{info.st_size}\0".encode())
            with path.open("rb") as handle:
                while chunk := handle.read(_CHUNK):
                    digest.update(chunk)
    except (OSError, ValueError):   # ValueError: a NUL in the path
        return None
    return digest.hexdigest()


@dataclass(frozen=True)
class AdapterSource:
    """Where a load took an adapter's weights from, and what those files held (None: unknown)."""

    path: str
    fingerprint: str | None


class AdapterNames:
    """The names a route has loaded (loaded now or unloaded since) and the source of each.

    `refusal` says why a load may not use a name; a load that it does not refuse is recorded with
    `loaded` once the backend has taken it. Names loaded now are never forgotten; of the others,
    the oldest go once more than `limit` names are remembered.
    """

    def __init__(self, limit: int = MAX_REMEMBERED_NAMES) -> None:
        self.limit = limit
        self._sources: OrderedDict[str, AdapterSource] = OrderedDict()
        self._loaded: set[str] = set()

    def __contains__(self, name: str) -> bool:
        return name in self._sources

    def source(self, name: str) -> AdapterSource | None:
        return self._sources.get(name)

    def refusal(self, name: str, source: AdapterSource) -> str | None:
        """None when `source` may be loaded as `name`: a name never loaded, or the very same
        weights again (same path, a fingerprint known and unchanged); otherwise why not."""
        first = self._sources.get(name)
        if first is None:
            return None
        if source.path != first.path:
            why = f"from {first.path!r}, not {source.path!r}"
        elif first.fingerprint is None or source.fingerprint is None:
            why = f"from {first.path!r}, a folder the gateway cannot read to check that its files are unchanged"
        elif source.fingerprint != first.fingerprint:
            why = f"from {first.path!r}, whose files have changed since"
        else:
            return None
        return (f"adapter {name!r} was loaded {why}: vLLM may still hold prefix-cache results computed with the "
                f"weights first loaded under that name; load new weights under a new name "
                f"(as `halo train` does: run-<id>-v<N>)")

    def loaded(self, name: str, source: AdapterSource) -> None:
        self._sources[name] = source
        self._sources.move_to_end(name)
        self._loaded.add(name)
        if len(self._sources) > self.limit:
            for old in [n for n in self._sources if n not in self._loaded][:len(self._sources) - self.limit]:
                del self._sources[old]

    def unloaded(self, name: str) -> None:
        """`name` is no longer served; it stays remembered (vLLM may still cache prompts under it)."""
        self._loaded.discard(name)
