"""The sites' session store with a data directory: what a restarted server finds."""

from __future__ import annotations

import httpx

from halo.sites.app import create_app
from halo.sites.store import STATE_HEADER, SessionStore


def test_a_reopened_store_has_every_session_snapshot_and_epoch(tmp_path):
    store = SessionStore(tmp_path)
    session = store.start("sid1", "gomail", "gomail-3", "7", 1, {"emails": [1, 2]})
    session.state["emails"].append(3)
    store.save("sid1", "gomail")
    snap = store.snapshot(session)
    session.state["emails"] = []
    store.save("sid1", "gomail")
    store.start("sid2", "gomail", "gomail-4", "0", 0, {"emails": []})
    assert store.drop("sid2") == 1
    store.close()

    again = SessionStore(tmp_path)
    loaded = again.get("sid1", "gomail")
    assert loaded is not None and (loaded.task_id, loaded.run_id, loaded.seed, loaded.epoch) == ("gomail-3", "7", 1, session.epoch)
    assert loaded.initial == {"emails": [1, 2]} and loaded.state == {"emails": []}
    assert again.restore(loaded, snap) and loaded.state == {"emails": [1, 2, 3]}
    assert again.get("sid2", "gomail") is None and len(again) == 1


def test_a_new_config_is_a_new_epoch_and_in_memory_stores_keep_nothing(tmp_path):
    store = SessionStore(tmp_path)
    first = store.start("sid", "gomail", "gomail-3", "0", 0, {})
    second = store.start("sid", "gomail", "gomail-3", "0", 0, {})
    assert first.epoch != second.epoch and second.state_tag == f"{second.epoch};gomail-3"
    memory = SessionStore()
    memory.start("sid", "gomail", "gomail-3", "0", 0, {})
    assert not memory.durable and SessionStore().get("sid", "gomail") is None


async def test_every_replica_response_names_the_state_it_was_served_from(tmp_path):
    transport = httpx.ASGITransport(app=create_app(data_dir=str(tmp_path)))
    async with httpx.AsyncClient(transport=transport, base_url="http://sites") as http:
        configured = await http.get("/playground/config?task_id=playground-signup")
        tag = configured.headers[STATE_HEADER]
        assert tag.endswith(";playground-signup")
        assert (await http.post("/playground/api/signup")).headers.get(STATE_HEADER) == tag
        assert (await http.get("/playground/finish")).headers[STATE_HEADER] == tag
    # a second app on the same directory (a restarted server) serves the same state
    transport = httpx.ASGITransport(app=create_app(data_dir=str(tmp_path)))
    async with httpx.AsyncClient(transport=transport, base_url="http://sites", cookies=http.cookies) as http2:
        finish = await http2.get("/playground/finish")
        assert finish.headers[STATE_HEADER] == tag and "clicked" in finish.text
