"""The embedded policy's core, without gRPC: candidates, features, learning, weights."""

from __future__ import annotations

import pytest
import torch

from halo.agent import actions as A
from halo.agent.context import PastStep
from halo.embedded.policy import (
    EmbeddedPolicy, ScoringHead, SentenceEncoder, WeightsError, enumerate_candidates, head_from_bytes, head_to_bytes,
    goal_texts,
)
from tests.policy import pages


@pytest.fixture(scope="module")
def embedded() -> EmbeddedPolicy:
    return EmbeddedPolicy(SentenceEncoder())


def test_candidates_come_from_the_page_elements_and_the_goal():
    assert goal_texts(pages.GOAL)[0] == "bob@example.com"
    candidates = enumerate_candidates(pages.context())
    actions = [c.action for c in candidates]
    assert A.Fill("3", "bob@example.com") in actions and A.ClickElement("4") in actions and A.ClickElement("1") in actions
    assert A.SelectOption("5", ("Weekly",)) in actions and A.SelectOption("5", ("Monthly",)) in actions
    assert A.ClickElement("2") not in actions  # a heading is not actionable
    assert actions[-4:] == [A.Scroll(delta_y=400.0), A.Scroll(delta_y=-400.0), A.GoBack(), A.SendMessage("Done.")]
    assert [c.description for c in enumerate_candidates(pages.context())] == [c.description for c in candidates]


def test_encoder_is_the_real_sentence_model(embedded):
    vectors = embedded.encoder.encode(["click button Sign up", "press the sign-up button", "the weather in Paris"])
    assert vectors.shape == (3, 384) and torch.allclose(vectors.norm(dim=-1), torch.ones(3), atol=1e-4)
    assert float(vectors[0] @ vectors[1]) > float(vectors[0] @ vectors[2]) + 0.2  # meaning, not bytes


def test_a_few_policy_gradient_steps_learn_the_rewarded_action(embedded):
    head = ScoringHead(seed=0)
    ctx = pages.context((PastStep(pages.FILL_EMAIL),))
    features = embedded.featurize(ctx)
    target = [c.action for c in features.candidates].index(pages.SIGNUP_CLICK)
    before = float(EmbeddedPolicy.log_probs(head, features.tensor)[target].exp().detach())
    optimizer = torch.optim.Adam(head.parameters(), lr=0.01)
    for _ in range(30):  # REINFORCE with reward 1 for the target action, 0 otherwise
        logp = EmbeddedPolicy.log_probs(head, features.tensor)
        loss = -(logp[target] * 1.0)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    after = float(EmbeddedPolicy.log_probs(head, features.tensor)[target].exp().detach())
    assert before < 0.2 and after > 0.5


def test_weights_round_trip_and_reject_foreign_bytes(embedded):
    head = ScoringHead(hidden=32, seed=5)
    copy = head_from_bytes(head_to_bytes(head))
    features = embedded.featurize(pages.context())
    assert torch.equal(head(features.tensor), copy(features.tensor)) and copy.hidden == 32
    with pytest.raises(WeightsError):
        head_from_bytes(b"\x00" * 4)
    with pytest.raises(WeightsError):
        head_from_bytes(b"definitely not safetensors, just text of some length")


def test_sampling_is_seeded_and_greedy_is_the_argmax(embedded):
    head = ScoringHead(seed=2)
    _, a = embedded.sample(head, pages.context(), n=8, temperature=1.0, seed=42)
    _, b = embedded.sample(head, pages.context(), n=8, temperature=1.0, seed=42)
    assert [s.index for s in a] == [s.index for s in b]
    features, greedy = embedded.sample(head, pages.context(), n=2, temperature=0.0)
    assert greedy[0].index == int(torch.argmax(head(features.tensor))) == greedy[1].index
