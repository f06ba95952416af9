"""What every language's env demo (clients/node/env-demo.js, clients/go's halo-env-demo) must print
after its walk on playground-signup: list tasks, create a session, click "Sign up" by bid, read the
site's state, close."""

from __future__ import annotations


def assert_walked_the_signup_session(out: dict) -> None:
    assert out["tasks"] > 100 and out["task"]["replica_available"] is True  # REAL v2 + playground
    assert out["clicked"]["role"] == "button" and out["action_ok"] is True and out["env_failure"] is False
    assert any("Thanks for signing up" in name for name in out["after"])
    assert out["state"]["initialfinaldiff"]["updated"]["signup"]["clicked"] is True  # the site's /finish state
    assert out["closed"] is True
