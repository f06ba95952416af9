"""GoMail's store and every change made to it (toolbar actions, labels, search, trash), plus /finish's `differences`.

Store slices (what REAL's GoMail keeps in its Redux store, as far as the eval scripts read it):

    email.emails           id -> email (dict keyed by id, so initialfinaldiff paths are
                           `updated.email.emails["46"].archived`, as the scripts expect)
    settings.customLabels  [{"id", "label", "color"}]
    filter.searchData      the last search, split like Gmail's search form (hasWords, from, ...)
    filter.searchResults   copies of the emails the last search found, kept up to date
    ui.snackbar            {"message", "open"}: the last confirmation ("3 conversations moved to Trash.")
    ui.searchInputValue    the text in the search box
    ui.compose             the compose form echoed back after a rejected send

Flags on an email: isRead, starred, trash, archived, spam, sent, draft, labels; snoozing adds
`snoozeUntil`. Moving to Trash is a flag (the scripts read `trash: true` updates), and only
"Delete forever" removes an email from the store.
"""

from __future__ import annotations

import copy
import html
import re
from datetime import datetime
from typing import Any

from halo.sites.gomail.data import INBOX, LABELS, NOW, USER, Person, Seed
from halo.sites.gomail.views import (
    EMPTY_SEARCH, Email, MailError, State, View, emails_in, is_snoozed, label_names, parse_query, snooze_label,
)

#: ids above this one were written during the episode (seed ids are never reused)
LAST_SEED_ID = max(s.id for s in INBOX)

# --- the initial store ---------------------------------------------------------------------


def body_html(text: str) -> str:
    """Plain text -> the HTML GoMail stores as `content` (one <p> per paragraph, lines joined by <br>)."""
    paragraphs = [p for p in re.split(r"\n\s*\n", text.strip()) if p.strip()]
    return "".join("<p>" + "<br>".join(html.escape(line) for line in p.split("\n")) + "</p>" for p in paragraphs)


def _seed_email(seed: Seed) -> Email:
    if seed.sent:
        sender, recipients = USER, [seed.address]
    else:
        sender, recipients = Person(seed.name, seed.address), [USER.address]
    return {
        "id": str(seed.id),
        "from": sender.address,
        "fromName": sender.name,
        "to": recipients,
        "cc": [],
        "bcc": [],
        "subject": seed.subject,
        "content": body_html(seed.body),
        "date": seed.day,
        "time": seed.time,
        "isRead": seed.read,
        "starred": seed.starred,
        "labels": list(seed.labels),
        "trash": False,
        "archived": False,
        "spam": False,
        "sent": seed.sent,
        "draft": False,
        "isReply": False,
        "isForward": False,
    }


EMPTY_COMPOSE: dict[str, str] = {"to": "", "cc": "", "bcc": "", "subject": "", "body": "", "error": "", "draftId": ""}


def initial_state() -> State:
    return {
        "user": {"name": USER.name, "email": USER.address},
        "email": {"emails": {str(s.id): _seed_email(s) for s in INBOX}},
        "settings": {"customLabels": [{"id": i, "label": name, "color": color} for i, name, color in LABELS]},
        "filter": {"query": "", "searchData": dict(EMPTY_SEARCH), "searchResults": []},
        "ui": {"snackbar": {"message": "", "open": False}, "searchInputValue": "", "compose": dict(EMPTY_COMPOSE)},
    }

# --- changing the store --------------------------------------------------------------------


def _conversations(n: int) -> str:
    return "Conversation" if n == 1 else f"{n} conversations"


def notify(state: State, message: str) -> None:
    """Show a confirmation or an error in the snackbar (the scripts read the last one)."""
    state["ui"]["snackbar"] = {"message": message, "open": True}


def refresh_search_results(state: State) -> None:
    """Keep the last search's results in step with the mailbox (they are copies in the store)."""
    query = state["filter"]["query"]
    if not query:
        return
    view = View(kind="search", query=query)
    state["filter"]["searchResults"] = [copy.deepcopy(e) for e in emails_in(state, view)]


def run_search(state: State, text: str) -> View:
    text = " ".join(text.split())
    query = parse_query(text)
    state["ui"]["searchInputValue"] = text
    state["filter"]["query"] = text
    state["filter"]["searchData"] = query.search_data
    view = View(kind="search", query=text)
    state["filter"]["searchResults"] = [copy.deepcopy(e) for e in emails_in(state, view)]
    return view


def clear_search_box(state: State) -> None:
    state["ui"]["searchInputValue"] = ""


#: bulk action -> (flag changes, snackbar verb)
_FLAG_ACTIONS: dict[str, tuple[dict[str, Any], str]] = {
    "archive": ({"archived": True}, "archived."),
    "trash": ({"trash": True}, "moved to Trash."),
    "spam": ({"spam": True}, "marked as spam."),
    "not_spam": ({"spam": False}, "marked as not spam."),
    "read": ({"isRead": True}, "marked as read."),
    "unread": ({"isRead": False}, "marked as unread."),
    "move_inbox": ({"trash": False, "archived": False, "spam": False}, "moved to Inbox."),
}
ACTIONS = frozenset(_FLAG_ACTIONS) | {"star", "unstar", "snooze", "unsnooze", "delete_forever", "label"}


def apply_action(state: State, ids: list[str], action: str, *, snooze_until: str = "", label: str = "") -> str:
    """Apply one toolbar action to the given conversations; returns (and shows) Gmail's confirmation."""
    emails = state["email"]["emails"]
    chosen = [emails[i] for i in dict.fromkeys(ids) if i in emails]
    if not chosen:
        raise MailError("No conversations selected.")
    n = len(chosen)
    if action in _FLAG_ACTIONS:
        changes, verb = _FLAG_ACTIONS[action]
        for email in chosen:
            email.update(changes)
        message = f"{_conversations(n)} {verb}"
    elif action in ("star", "unstar"):
        for email in chosen:
            email["starred"] = action == "star"
        message = ""  # Gmail stars silently
    elif action == "snooze":
        try:
            moment = datetime.fromisoformat(snooze_until)
        except ValueError:
            raise MailError("Choose a date and time to snooze until.") from None
        if moment <= NOW:
            raise MailError("Snooze time must be in the future.")
        until = moment.isoformat(timespec="minutes")
        for email in chosen:
            email["snoozeUntil"] = until
        message = f"{_conversations(n)} snoozed until {snooze_label(until)}"
    elif action == "unsnooze":
        for email in chosen:
            email.pop("snoozeUntil", None)
        message = f"{_conversations(n)} unsnoozed."
    elif action == "delete_forever":
        for email in chosen:
            del emails[email["id"]]
        message = f"{_conversations(n)} deleted forever."
    elif action == "label":
        if label not in label_names(state):
            raise MailError(f'There is no label "{label}".')
        if all(label in e["labels"] for e in chosen):
            for email in chosen:
                email["labels"].remove(label)
            message = f'{_conversations(n)} removed from "{label}".'
        else:
            for email in chosen:
                if label not in email["labels"]:
                    email["labels"].append(label)
            message = f'{_conversations(n)} added to "{label}".'
    else:
        raise MailError(f"Unknown action {action!r}.")
    if message:
        notify(state, message)
    refresh_search_results(state)
    return message


def mark_all_read(state: State, view: View) -> str:
    emails = emails_in(state, view)
    for email in emails:
        email["isRead"] = True
    refresh_search_results(state)
    message = f"All conversations in {view.scope} marked as read." if emails else "No conversations to mark as read."
    notify(state, message)
    return message


def open_email(state: State, email_id: str) -> Email:
    try:
        email = state["email"]["emails"][email_id]
    except KeyError:
        raise MailError("This conversation no longer exists.") from None
    if not email["isRead"]:
        email["isRead"] = True
        refresh_search_results(state)
    return email


def create_label(state: State, name: str) -> str:
    name = " ".join(name.split())
    if not name:
        raise MailError("Please enter a label name.")
    if len(name) > 40:
        raise MailError("Label names can be at most 40 characters.")
    if name.lower() in (existing.lower() for existing in label_names(state)):
        raise MailError("The label name you have chosen already exists. Please try another name.")
    labels = state["settings"]["customLabels"]
    next_id = 1 + max((int(item["id"].rsplit("-", 1)[1]) for item in labels), default=0)
    labels.append({"id": f"label-{next_id}", "label": name, "color": "#9aa0a6"})
    message = f'Label "{name}" created.'
    notify(state, message)
    return message


def delete_label(state: State, name: str) -> str:
    labels = state["settings"]["customLabels"]
    if name not in label_names(state):
        raise MailError(f'There is no label "{name}".')
    state["settings"]["customLabels"] = [item for item in labels if item["label"] != name]
    for email in state["email"]["emails"].values():
        if name in email["labels"]:
            email["labels"].remove(name)
    message = f'Label "{name}" deleted.'
    notify(state, message)
    return message


def empty_trash(state: State) -> str:
    emails = state["email"]["emails"]
    doomed = [i for i, e in emails.items() if e["trash"]]
    for email_id in doomed:
        del emails[email_id]
    refresh_search_results(state)
    message = f"{_conversations(len(doomed))} deleted forever." if doomed else "Trash is already empty."
    notify(state, message)
    return message


# --- /finish `differences` -----------------------------------------------------------------


def differences(initial: State, final: State) -> dict[str, Any]:
    """REAL GoMail's `differences.emails`: added / deleted / updated conversations.

    Compared over the mailbox the app lists (snoozed conversations leave it until they wake up,
    so they count as deleted: gomail-21 reads the snoozed "alerts" emails from
    `differences.emails.deleted`); `updated` entries carry the id and only the changed fields
    (`{"id": "3", "trash": true}`), as REAL v1's jmespath evals read them.
    """
    def listed(state: State) -> dict[str, Email]:
        return {i: e for i, e in state["email"]["emails"].items() if not is_snoozed(e)}

    before, after = listed(initial), listed(final)
    order = lambda i: int(i)  # noqa: E731 - numeric ids sort numerically
    added = [copy.deepcopy(after[i]) for i in sorted(after.keys() - before.keys(), key=order)]
    deleted = [copy.deepcopy(before[i]) for i in sorted(before.keys() - after.keys(), key=order)]
    updated = []
    for i in sorted(before.keys() & after.keys(), key=order):
        old, new = before[i], after[i]
        changed = {k: copy.deepcopy(new.get(k)) for k in sorted(old.keys() | new.keys()) if old.get(k) != new.get(k)}
        if changed:
            updated.append({"id": i, **changed})
    return {"emails": {"added": added, "deleted": deleted, "updated": updated}}
