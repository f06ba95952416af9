"""GoMail replica: every REAL v2 GoMail task is solved by its oracle and failed by a no-op and by a
plausible wrong attempt, as scored by agisdk's own eval scripts; plus the mailbox rules those
scripts depend on (ids of the groups they hard-code, diff shapes, select-all semantics)."""

from __future__ import annotations

import html
import json
import re

import httpx
import pytest

from halo.tasks.registry import default_registry
from halo.sites.app import create_app
from halo.sites.gomail import GoMail, compose, mailbox, views
from halo.sites.gomail.views import MailError, View
from tests.sites.replica_checks import assert_verified, verified_fixture


def _natural(task_id: str) -> int:
    return int(task_id.rsplit("-", 1)[1])


GOMAIL_TASKS = sorted(GoMail.task_ids, key=_natural)


def test_replica_serves_every_v2_gomail_task():
    v2 = default_registry().list(site="gomail", suite="real-v2")
    assert {t.id for t in v2} == GoMail.task_ids and len(v2) == 21
    assert all(t.replica_available for t in v2)
    assert set(GoMail.oracles) == set(GoMail.wrong_attempts) == GoMail.task_ids


verified = verified_fixture(GOMAIL_TASKS)


@pytest.mark.parametrize("task_id", GOMAIL_TASKS)
async def test_task_verifies_with_agisdk_scripts(verified, task_id):
    row = verified[task_id]
    assert_verified(row)


# --- the data the eval scripts hard-code -----------------------------------------------------


def _ids(emails) -> set[str]:
    return {e["id"] for e in emails}


def _search(state, text: str) -> set[str]:
    return _ids(views.emails_in(state, View(kind="search", query=text)))


def test_mailbox_groups_match_the_ids_the_eval_scripts_hard_code():
    state = mailbox.initial_state()
    inbox = views.emails_in(state, View())
    assert len(inbox) == 56 and sum(not e["isRead"] for e in inbox) == 17
    assert views.page_of(state, View()).last == 50  # gomail-14: a "visible" page is 50 conversations
    assert _ids(views.emails_in(state, View(folder="starred"))) == {
        "2", "6", "10", "14", "16", "21", "26", "28", "31", "37", "47", "49", "53"}       # gomail-5
    assert {e["id"] for e in inbox if e["date"] == "2024-07-18"} == {"46", "47", "48"}   # gomail-17
    assert {e["id"] for e in inbox if e["date"] <= "2024-05-18"} == {"52", "53", "54", "55", "56"}  # gomail-11
    assert _search(state, "older_than:2m") == {"52", "53", "54", "55", "56"}
    assert _search(state, "noreply") | _search(state, "no-reply") == {"3", "14", "34", "40", "50"}  # gomail-26
    assert _search(state, "notification") == {"3", "4", "5", "6", "17", "36", "38", "56"}            # gomail-2
    assert _search(state, "uber") == {"48"}
    assert len(_search(state, "amazon")) == 4                                                        # gomail-1
    assert _search(state, "alerts") == {"19", "29", "42"}                                            # gomail-21
    support = _search(state, "support")
    assert len(support) == 13 and all("support" in state["email"]["emails"][i]["subject"].lower() for i in support)
    assert _search(state, "from:john.doe") == {"1"}                                                  # gomail-24


def test_dataset_keywords_do_not_leak_into_other_fields_the_scripts_scan():
    # gomail-2 scans every object with from/subject for "uber"/"notification"; gomail-21 scans
    # from/subject/content for "alerts": no other email may mention them anywhere.
    emails = mailbox.initial_state()["email"]["emails"].values()
    def mentions(word):
        return {e["id"] for e in emails if word in f"{e['from']} {e['subject']} {e['content']}".lower()}
    assert mentions("uber") == {"48"}
    assert mentions("notification") == {"3", "4", "5", "6", "17", "36", "38", "56"}
    assert mentions("alerts") == {"19", "29", "42"}


# --- store rules and /finish shapes ------------------------------------------------------------


def test_differences_report_flags_as_updates_sends_as_additions_and_snoozes_as_deletions():
    initial = mailbox.initial_state()
    state = mailbox.initial_state()
    mailbox.apply_action(state, ["3"], "trash")
    mailbox.apply_action(state, ["19"], "snooze", snooze_until="2024-07-25T08:00")
    sent = compose.send(state, compose.Draft(to="Carol", subject="Meeting", body="Moved to 8:30 AM"))
    diff = mailbox.differences(initial, state)["emails"]
    assert diff["updated"] == [{"id": "3", "trash": True}]
    assert [e["id"] for e in diff["deleted"]] == ["19"] and "alerts" in diff["deleted"][0]["from"]
    assert diff["added"] == [sent] and sent["to"] == ["carol.adams@example.com"] and sent["sent"] is True
    assert sent["id"] == "60" and sent["content"] == "<p>Moved to 8:30 AM</p>"
    assert state["ui"]["snackbar"]["message"] == "Message sent."


def test_snoozing_search_results_keeps_the_stored_results_in_step():
    state = mailbox.initial_state()
    view = mailbox.run_search(state, "alerts")
    ids = [e["id"] for e in views.emails_in(state, view)]
    message = mailbox.apply_action(state, ids, "snooze", snooze_until="2024-07-25T08:00")
    assert message == "3 conversations snoozed until Thu, Jul 25, 8:00 AM"
    assert state["filter"]["searchData"]["hasWords"] == "alerts" and state["ui"]["searchInputValue"] == "alerts"
    assert {e["id"]: e.get("snoozeUntil") for e in state["filter"]["searchResults"]} == dict.fromkeys(ids, "2024-07-25T08:00")
    assert not _ids(views.emails_in(state, View())) & set(ids)          # out of the Inbox
    assert _ids(views.emails_in(state, View(folder="snoozed"))) == set(ids)
    with pytest.raises(MailError):
        mailbox.apply_action(state, ["1"], "snooze", snooze_until="2024-07-01T08:00")  # the past


def test_recipients_resolve_names_first_names_and_addresses():
    assert compose.resolve_recipients("Alexa Richardson, carol, KEVIN.MOORE@example.com", "To") == [
        "alexa.richardson@example.com", "carol.adams@example.com", "kevin.moore@example.com"]
    assert compose.resolve_recipients("Brian King <brian.king@example.com>", "To") == ["brian.king@example.com"]
    with pytest.raises(MailError, match="not recognized"):
        compose.resolve_recipients("Kevin", "To")            # Kevin Moore or Kevin Morgan?
    with pytest.raises(MailError, match="at least one recipient"):
        compose.send(mailbox.initial_state(), compose.Draft(subject="hi", body="there"))


def test_labels_are_created_once_and_applied_as_toggles():
    state = mailbox.initial_state()
    mailbox.create_label(state, "  Support   Emails ")
    assert state["settings"]["customLabels"][-1] == {"id": "label-5", "label": "Support Emails", "color": "#9aa0a6"}
    with pytest.raises(MailError, match="already exists"):
        mailbox.create_label(state, "support emails")
    assert mailbox.apply_action(state, ["7", "9"], "label", label="Support Emails") == '2 conversations added to "Support Emails".'
    assert _ids(views.emails_in(state, View(kind="label", label="Support Emails"))) == {"7", "9"}
    mailbox.apply_action(state, ["7", "9"], "label", label="Support Emails")
    assert not views.emails_in(state, View(kind="label", label="Support Emails"))


# --- through HTTP (the pages' forms) -----------------------------------------------------------


async def _finish(http: httpx.AsyncClient) -> dict:
    page = (await http.get("/gomail//finish")).text
    return json.loads(html.unescape(page.split("<pre>")[1].split("</pre>")[0]))


async def test_select_all_matching_trashes_every_inbox_conversation_not_just_the_page():
    transport = httpx.ASGITransport(app=create_app([GoMail]))
    async with httpx.AsyncClient(transport=transport, base_url="http://sites", follow_redirects=True) as http:
        await http.get("/gomail//config?run_id=1&task_id=gomail-20")
        inbox = (await http.get("/gomail/")).text
        assert "1–50 of 56" in inbox and "Select all 56 conversations in Inbox" in inbox
        assert len(re.findall(r'name="ids" value="\d+"', inbox)) == 50
        page = await http.post("/gomail/api/bulk", data={"kind": "folder", "folder": "inbox", "all_matching": "1",
                                                          "action": "trash", "ids": ["46"]})
        assert "56 conversations moved to Trash." in page.text and "Your Inbox is empty." in page.text
        state = await _finish(http)
        assert len(state["differences"]["emails"]["updated"]) == 56
        assert state["initialfinaldiff"]["updated"]["ui"]["snackbar"]["message"] == "56 conversations moved to Trash."
        # the toast is shown once; the message stays in the store for the eval scripts
        again = (await http.get("/gomail/trash")).text
        assert 'role="status"' not in again and "1–50 of 56" in again


async def test_rejected_send_reopens_the_form_with_what_was_typed_and_opening_mail_marks_it_read():
    transport = httpx.ASGITransport(app=create_app([GoMail]))
    async with httpx.AsyncClient(transport=transport, base_url="http://sites", follow_redirects=True) as http:
        await http.get("/gomail//config?run_id=1&task_id=gomail-7")
        page = await http.post("/gomail/api/send", data={"to": "Ashley", "subject": "Team dinner", "body": "Coming?",
                                                         "mode": "new", "back": "/"})
        assert "compose=1" in str(page.url) and 'role="alert"' in page.text and "Team dinner" in page.text
        state = await _finish(http)
        assert state["differences"]["emails"]["added"] == []
        email = await http.get("/gomail/email/46?back=/")
        assert "Can we move our 1:1?" in email.text and "1 of 56" in email.text
        state = await _finish(http)
        assert state["differences"]["emails"]["updated"] == [{"id": "46", "isRead": True}]
        # a reply is threaded under the conversation and flagged as a reply
        await http.post("/gomail/api/send", data={"to": "robert.johnson@example.com", "subject": "Re: Can we move our 1:1?",
                                                  "body": "Sure, 2 PM works.", "mode": "reply", "in_reply_to": "46",
                                                  "back": "/email/46?back=/"})
        thread = (await http.get("/gomail/email/46?back=/")).text
        assert "Sure, 2 PM works." in thread
        added = (await _finish(http))["differences"]["emails"]["added"]
        assert added[0]["isReply"] is True and added[0]["inReplyTo"] == "46" and "gmail_quote" in added[0]["content"]


async def test_closing_compose_keeps_a_draft_that_can_be_sent_later_and_forwarding_quotes_the_original():
    transport = httpx.ASGITransport(app=create_app([GoMail]))
    async with httpx.AsyncClient(transport=transport, base_url="http://sites", follow_redirects=True) as http:
        await http.get("/gomail//config?run_id=1&task_id=gomail-15")
        form = {"to": "Danielle Harris", "subject": "Update", "body": "The new system update has been launched.",
                "mode": "new", "back": "/"}
        await http.post("/gomail/api/compose/close", data=form)
        drafts = (await http.get("/gomail/drafts")).text
        assert "1–1 of 1" in drafts and "compose=1&amp;draft=60" in drafts
        reopened = (await http.get("/gomail/drafts?compose=1&draft=60")).text
        assert 'value="danielle.harris@example.com"' in reopened and "has been launched" in reopened
        added = (await _finish(http))["differences"]["emails"]["added"]
        assert [(e["id"], e["draft"], e["sent"]) for e in added] == [("60", True, False)]
        await http.post("/gomail/api/send", data={**form, "to": "danielle.harris@example.com", "draft_id": "60", "back": "/drafts"})
        assert "0 of 0" in (await http.get("/gomail/drafts")).text
        await http.post("/gomail/api/send", data={"to": "Barbara Thomas", "subject": "Fwd: Kickoff deck for the Atlas project",
                                                  "body": "FYI", "mode": "forward", "in_reply_to": "10", "back": "/email/10?back=/"})
        added = (await _finish(http))["differences"]["emails"]["added"]
        assert [(e["id"], e["draft"], e["sent"]) for e in added] == [("60", False, True), ("61", False, True)]
        assert added[1]["isForward"] is True and "Forwarded message" in added[1]["content"] and added[1]["to"] == ["barbara.thomas@example.com"]
