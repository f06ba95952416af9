"""The grammar mask of constrained sampling, replayed on the learner's side.

Under `--constrain-actions` vLLM samples every action within a regex (structured outputs): before it
samples a token it sets the logits of every token the grammar cannot continue with to −inf, so it
draws from, and reports the logprobs of, the masked and renormalised distribution q. For the
learner to score that same q (importance ratio 1 at equal weights, and the policy gradient of the
distribution actually sampled) it applies the same mask at every completion position.

"The same mask" means the one vLLM computes: HALO's vLLM servers run with the xgrammar backend
(`halo.cli.vllm_local.command`, deploy/services.yaml), and this module builds the mask with the
same library and the same calls as vLLM's `XgrammarBackend` (vllm/v1/structured_output/
backend_xgrammar.py):

- `TokenizerInfo.from_huggingface(tokenizer, vocab_size=<the model's vocabulary size>)` (the
  logits' width, which may exceed the tokenizer's: the padding tokens are never allowed);
- `GrammarCompiler(...).compile_regex(regex)`;
- one `GrammarMatcher(compiled, override_stop_tokens=<the request's stop tokens>)` per completion:
  vLLM passes `SamplingParams.all_stop_token_ids`, the tokenizer's EOS plus the checkpoint's
  generation_config.json `eos_token_id`(s) (`stop_token_ids`) — HALO sends no stop ids of its own;
- at each position `fill_next_token_bitmask`, then `accept_token(sampled)`.

A sampled token that the grammar does not accept means the completion was not drawn under this
regex (another regex, another backend, another tokenizer): scoring it would train on a
distribution nobody sampled from, so it is an error (`GrammarMismatch`), not a silent fallback.

xgrammar is imported lazily (only a run with `extra.action_regex` needs it); its wheel lists
triton, a GPU kernel compiler that its CPU matcher never imports, so HALO installs it with
`--no-deps` (scripts/setup.sh, the trainer image).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import torch

XGRAMMAR_INSTALL = "pip install --no-deps xgrammar==0.2.8 apache-tvm-ffi==0.1.15.post2"


class GrammarMismatch(ValueError):
    """A completion token the grammar does not allow at its position."""


def _xgrammar() -> Any:
    try:
        import xgrammar   # lazy: only constrained runs need it (see the module docstring)
    except ImportError as exc:
        raise ImportError(f"a constrained run's learner needs xgrammar, vLLM's grammar library: {XGRAMMAR_INSTALL} ({exc})") from None
    return xgrammar


def stop_token_ids(model_dir: str | Path, tokenizer: Any) -> list[int]:
    """The stop tokens vLLM gives a request's grammar matcher for this checkpoint: the tokenizer's
    EOS and the generation_config.json `eos_token_id`(s) (vLLM reads them with any
    `--generation-config` mode; `SamplingParams.update_from_generation_config`)."""
    ids: set[int] = set()
    if tokenizer.eos_token_id is not None:
        ids.add(int(tokenizer.eos_token_id))
    path = Path(model_dir) / "generation_config.json"
    if path.exists():
        eos = json.loads(path.read_text()).get("eos_token_id")
        ids.update([int(eos)] if isinstance(eos, int) else [int(e) for e in eos or ()])
    return sorted(ids)


def unpack_bitmask(bitmask: torch.Tensor, vocab_size: int) -> torch.Tensor:
    """xgrammar's packed bitmask [n, ceil(V/32)] int32 (bit j of word w: token 32·w + j allowed)
    -> a bool tensor [n, V]."""
    shifts = torch.arange(32, dtype=torch.int32)
    bits = (bitmask.unsqueeze(-1) >> shifts) & 1
    return bits.reshape(bitmask.shape[0], -1)[:, :vocab_size].bool()


class TokenGrammar:
    """One regex compiled for one checkpoint, as vLLM's xgrammar backend compiles it."""

    def __init__(self, regex: str, tokenizer: Any, vocab_size: int, stop_ids: Sequence[int]) -> None:
        xgr = _xgrammar()
        self.regex, self.vocab_size, self.stop_ids = regex, int(vocab_size), list(stop_ids)
        info = xgr.TokenizerInfo.from_huggingface(tokenizer, vocab_size=self.vocab_size)
        try:
            self._compiled = xgr.GrammarCompiler(info, max_threads=1).compile_regex(regex)
        except Exception as exc:   # xgrammar raises RuntimeError subclasses for what it cannot compile
            raise ValueError(f"xgrammar (vLLM's structured-output backend) cannot compile the action regex: {exc}") from None
        self._xgr = xgr

    @classmethod
    def for_checkpoint(cls, regex: str, model_dir: str | Path, tokenizer: Any, vocab_size: int) -> "TokenGrammar":
        return cls(regex, tokenizer, vocab_size, stop_token_ids(model_dir, tokenizer))

    def state(self) -> "GrammarState":
        """A fresh matcher at the start of one completion."""
        return GrammarState(self)

    def allowed(self, tokens: Sequence[int]) -> torch.Tensor:
        """bool [len(tokens), V]: the tokens the grammar allowed before each token of one completion
        (the completion's first token first). Raises GrammarMismatch at the first token it refuses."""
        state = self.state()
        rows = []
        for i, token in enumerate(tokens):
            rows.append(state.allowed())
            state.advance(token, i)
        return torch.stack(rows) if rows else torch.zeros(0, self.vocab_size, dtype=torch.bool)

    def state_after(self, tokens: Sequence[int]) -> "GrammarState":
        """The matcher after the completion prefix `tokens`. Raises GrammarMismatch at the first
        token it refuses: the matcher alone, no mask (cheap, so a step checks every datum with it
        before it trains on any)."""
        state = self.state()
        for i, token in enumerate(tokens):
            state.advance(token, i)
        return state

    def next_allowed(self, tokens: Sequence[int]) -> torch.Tensor:
        """bool [V]: the tokens the grammar allows after the completion prefix `tokens`."""
        return self.state_after(tokens).allowed()

    def greedy_path(self, text: str, tokenizer: Any) -> list[int]:
        """A token path that spells `text` within the grammar: at each step the longest allowed token
        that continues `text` (deterministic, independent of any weights). Raises ValueError when
        no allowed token continues it."""
        vocab = _decoded_vocab(tokenizer, self.vocab_size)
        state = self.state()
        path: list[int] = []
        rest = text
        while rest:
            fits = [t for t in state.allowed().nonzero().flatten().tolist() if vocab[t] and rest.startswith(vocab[t])]
            if not fits:
                raise ValueError(f"no token the grammar allows continues {rest[:40]!r}")
            best = max(fits, key=lambda t: (len(vocab[t]), -t))
            state.advance(best, len(path))
            path.append(best)
            rest = rest[len(vocab[best]):]
        return path


class GrammarState:
    """One completion's place in the grammar: what it allows next, and the tokens it has accepted."""

    def __init__(self, grammar: TokenGrammar) -> None:
        xgr = grammar._xgr
        self.vocab_size = grammar.vocab_size
        self._matcher = xgr.GrammarMatcher(grammar._compiled, override_stop_tokens=grammar.stop_ids or None)
        self._packed = xgr.allocate_token_bitmask(1, grammar.vocab_size)

    def allowed(self) -> torch.Tensor:
        """bool [V]: the tokens the grammar allows next."""
        self._matcher.fill_next_token_bitmask(self._packed, 0)
        return unpack_bitmask(self._packed, self.vocab_size)[0]

    def advance(self, token: int, position: int = 0) -> None:
        if not self._matcher.accept_token(int(token)):
            raise GrammarMismatch(
                f"completion token {position} (id {int(token)}) is not allowed by the action regex there: the sample was "
                "not drawn under this grammar (vLLM's structured-output backend must be xgrammar, with the same regex)")


def _decoded_vocab(tokenizer: Any, vocab_size: int) -> list[str]:
    """Each token id's text as it decodes alone ("" for ids the tokenizer does not have)."""
    out = [""] * vocab_size
    for token_id in range(min(vocab_size, len(tokenizer))):
        out[token_id] = tokenizer.decode([token_id])
    return out


def segments(active: torch.Tensor) -> Iterable[tuple[int, int]]:
    """(start, end) of each maximal run of consecutive positions in a sorted 1-D index tensor: a
    datum's completions (one per action of the episode), separated by observation tokens."""
    positions = active.tolist()
    if not positions:
        return
    start = prev = positions[0]
    for p in positions[1:]:
        if p != prev + 1:
            yield start, prev + 1
            start = p
        prev = p
    yield start, prev + 1
