"""GoMail's store and everything that reads or changes it, as plain functions (no HTTP here).

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
import shlex
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

from halo.sites.gomail.data import CONTACTS, INBOX, LABELS, NOW, TODAY, USER, Person, Seed

Email = dict[str, Any]
State = dict[str, Any]

PAGE_SIZE = 50
LAST_SEED_ID = max(s.id for s in INBOX)

#: folder id -> (title, path under the site)
FOLDERS: dict[str, tuple[str, str]] = {
    "inbox": ("Inbox", "/"),
    "starred": ("Starred", "/starred"),
    "snoozed": ("Snoozed", "/snoozed"),
    "sent": ("Sent", "/sent"),
    "drafts": ("Drafts", "/drafts"),
    "all": ("All Mail", "/all"),
    "spam": ("Spam", "/spam"),
    "trash": ("Trash", "/trash"),
}


class MailError(ValueError):
    """A user-facing problem with a request (shown on the page, like Gmail's error bar)."""


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
EMPTY_SEARCH: dict[str, str] = {"from": "", "to": "", "subject": "", "hasWords": "", "doesntHave": ""}


def initial_state() -> State:
    return {
        "user": {"name": USER.name, "email": USER.address},
        "email": {"emails": {str(s.id): _seed_email(s) for s in INBOX}},
        "settings": {"customLabels": [{"id": i, "label": name, "color": color} for i, name, color in LABELS]},
        "filter": {"query": "", "searchData": dict(EMPTY_SEARCH), "searchResults": []},
        "ui": {"snackbar": {"message": "", "open": False}, "searchInputValue": "", "compose": dict(EMPTY_COMPOSE)},
    }


# --- reading: views, search, sorting -------------------------------------------------------


def parse_day(value: str) -> date:
    return date.fromisoformat(value)


def _sort_key(email: Email) -> tuple[str, str, int]:
    return (email["date"], email["time"], int(email["id"]))


def plain_text(content: str) -> str:
    text = re.sub(r"<br\s*/?>|</p>", "\n", content)
    return html.unescape(re.sub(r"<[^>]+>", "", text)).strip()


def snippet(email: Email, length: int = 120) -> str:
    text = " ".join(plain_text(email["content"]).split())
    return text if len(text) <= length else text[: length - 1].rstrip() + "…"


def is_snoozed(email: Email) -> bool:
    return bool(email.get("snoozeUntil"))


def in_folder(email: Email, folder: str) -> bool:
    trash, spam, draft = email["trash"], email["spam"], email["draft"]
    match folder:
        case "inbox":
            return not (trash or spam or draft or email["sent"] or email["archived"] or is_snoozed(email))
        case "starred":
            return email["starred"] and not (trash or spam)
        case "snoozed":
            return is_snoozed(email) and not (trash or spam)
        case "sent":
            return email["sent"] and not (trash or draft)
        case "drafts":
            return draft and not trash
        case "all":
            return not (trash or spam or draft)
        case "spam":
            return spam and not trash
        case "trash":
            return trash
    raise MailError(f"unknown folder {folder!r}")


@dataclass(frozen=True)
class Query:
    """A Gmail search: free words plus the operators people actually type."""

    words: tuple[str, ...] = ()
    sender: str = ""
    recipient: str = ""
    subject: str = ""
    folder: str = ""          # in:trash, in:sent, ...
    label: str = ""
    flags: tuple[str, ...] = ()   # is:unread, is:read, is:starred, is:snoozed
    older_than: date | None = None
    newer_than: date | None = None

    @property
    def search_data(self) -> dict[str, str]:
        return {**EMPTY_SEARCH, "from": self.sender, "to": self.recipient, "subject": self.subject,
                "hasWords": " ".join(self.words)}


def _relative_day(amount: str) -> date | None:
    m = re.fullmatch(r"(\d+)([dmy])", amount.lower())
    if not m:
        return None
    n, unit = int(m.group(1)), m.group(2)
    if unit == "d":
        return TODAY - timedelta(days=n)
    months = n if unit == "m" else 12 * n
    year, month = divmod(TODAY.year * 12 + TODAY.month - 1 - months, 12)
    return date(year, month + 1, min(TODAY.day, 28))


def parse_query(text: str) -> Query:
    try:
        tokens = shlex.split(text)
    except ValueError:  # unbalanced quote: search the raw words
        tokens = text.split()
    words: list[str] = []
    fields: dict[str, Any] = {"flags": []}
    for token in tokens:
        key, sep, value = token.partition(":")
        key = key.lower()
        if sep and value:
            if key == "from":
                fields["sender"] = value.lower()
                continue
            if key == "to":
                fields["recipient"] = value.lower()
                continue
            if key == "subject":
                fields["subject"] = value.lower()
                continue
            if key == "in" and value.lower() in FOLDERS:
                fields["folder"] = value.lower()
                continue
            if key == "label":
                fields["label"] = value.lower()
                continue
            if key == "is" and value.lower() in ("unread", "read", "starred", "snoozed"):
                fields["flags"].append(value.lower())
                continue
            if key in ("older_than", "newer_than") and _relative_day(value):
                fields[key] = _relative_day(value)
                continue
            if key in ("before", "after"):
                try:
                    day = date.fromisoformat(value.replace("/", "-"))
                except ValueError:
                    pass
                else:
                    fields["older_than" if key == "before" else "newer_than"] = day
                    continue
        words.append(token)
    return Query(words=tuple(words), flags=tuple(fields.pop("flags")), **fields)


def _haystack(email: Email) -> str:
    parts = [email["fromName"], email["from"], " ".join(email["to"] + email["cc"]), email["subject"],
             plain_text(email["content"]), " ".join(email["labels"])]
    return " ".join(parts).lower()


def matches(email: Email, query: Query) -> bool:
    if query.folder:
        if not in_folder(email, query.folder):
            return False
    elif email["trash"] or email["spam"] or email["draft"]:
        return False  # Gmail leaves Trash, Spam and Drafts out of a search unless asked
    haystack = _haystack(email)
    if any(word.lower() not in haystack for word in query.words):
        return False
    if query.sender and query.sender not in f"{email['fromName']} {email['from']}".lower():
        return False
    if query.recipient and query.recipient not in " ".join(email["to"] + email["cc"] + email["bcc"]).lower():
        return False
    if query.subject and query.subject not in email["subject"].lower():
        return False
    if query.label and query.label not in (label.lower() for label in email["labels"]):
        return False
    checks = {"unread": not email["isRead"], "read": email["isRead"], "starred": email["starred"],
              "snoozed": is_snoozed(email)}
    if not all(checks[flag] for flag in query.flags):
        return False
    day = parse_day(email["date"])
    if query.older_than and not day < query.older_than:
        return False
    if query.newer_than and not day > query.newer_than:
        return False
    return True


@dataclass(frozen=True)
class View:
    """What a list page shows: a folder, a label or a search, and which page of it."""

    kind: str = "folder"      # "folder" | "label" | "search"
    folder: str = "inbox"
    label: str = ""
    query: str = ""
    page: int = 1

    @property
    def title(self) -> str:
        if self.kind == "label":
            return self.label
        if self.kind == "search":
            return "Search results"
        return FOLDERS[self.folder][0]

    @property
    def scope(self) -> str:
        """How Gmail names this view in "Select all 56 conversations in Inbox"."""
        if self.kind == "search":
            return "Search results"
        return f'"{self.label}"' if self.kind == "label" else FOLDERS[self.folder][0]

    def path(self, page: int | None = None) -> str:
        from urllib.parse import quote, urlencode

        page = self.page if page is None else page
        if self.kind == "search":
            params = {"q": self.query, **({"page": page} if page > 1 else {})}
            return "/search?" + urlencode(params)
        base = f"/label/{quote(self.label)}" if self.kind == "label" else FOLDERS[self.folder][1]
        return base + (f"?page={page}" if page > 1 else "")

    def includes(self, email: Email) -> bool:
        if self.kind == "label":
            return self.label in email["labels"] and not (email["trash"] or email["spam"] or email["draft"])
        if self.kind == "search":
            return matches(email, parse_query(self.query))
        return in_folder(email, self.folder)


def emails_in(state: State, view: View) -> list[Email]:
    found = [e for e in state["email"]["emails"].values() if view.includes(e)]
    return sorted(found, key=_sort_key, reverse=True)


@dataclass
class Page:
    emails: list[Email]
    total: int
    first: int   # 1-based index of the first row shown (0 when empty)
    last: int
    page: int
    pages: int


def page_of(state: State, view: View) -> Page:
    everything = emails_in(state, view)
    pages = max(1, -(-len(everything) // PAGE_SIZE))
    page = min(max(1, view.page), pages)
    start = (page - 1) * PAGE_SIZE
    rows = everything[start : start + PAGE_SIZE]
    return Page(rows, len(everything), start + 1 if rows else 0, start + len(rows), page, pages)


def folder_counts(state: State) -> dict[str, int]:
    """Sidebar counts as Gmail shows them: unread in Inbox and Spam, all drafts."""
    emails = state["email"]["emails"].values()
    return {
        "inbox": sum(1 for e in emails if in_folder(e, "inbox") and not e["isRead"]),
        "drafts": sum(1 for e in emails if in_folder(e, "drafts")),
        "spam": sum(1 for e in emails if in_folder(e, "spam") and not e["isRead"]),
    }


def label_names(state: State) -> list[str]:
    return [item["label"] for item in state["settings"]["customLabels"]]


# --- display helpers -----------------------------------------------------------------------


def _clock(hhmm: str) -> str:
    t = datetime.strptime(hhmm, "%H:%M")
    return t.strftime("%I:%M %p").lstrip("0")


def list_date(email: Email) -> str:
    """Gmail's list column: a time for today's mail, "Jul 12" for this year's."""
    day = parse_day(email["date"])
    if day == TODAY:
        return _clock(email["time"])
    return f"{day.strftime('%b')} {day.day}" if day.year == TODAY.year else day.strftime("%-m/%-d/%y")


def full_date(email: Email) -> str:
    day = parse_day(email["date"])
    ago = ""
    if day == TODAY:
        minutes = int((NOW - datetime.combine(day, datetime.strptime(email["time"], "%H:%M").time())).total_seconds() // 60)
        if minutes >= 0:
            ago = f" ({minutes} minutes ago)" if minutes < 60 else f" ({minutes // 60} hours ago)"
    return f"{day.strftime('%a')}, {day.strftime('%b')} {day.day}, {day.year}, {_clock(email['time'])}{ago}"


def snooze_label(until: str) -> str:
    moment = datetime.fromisoformat(until)
    return f"{moment.strftime('%a')}, {moment.strftime('%b')} {moment.day}, {_clock(moment.strftime('%H:%M'))}"


@dataclass(frozen=True)
class SnoozeOption:
    label: str
    detail: str
    until: str   # ISO datetime


def snooze_options() -> list[SnoozeOption]:
    """Gmail's presets, relative to the replica's clock (Thursday, Jul 18, 10:30 AM)."""
    def at(day: date, hour: int) -> datetime:
        return datetime(day.year, day.month, day.day, hour, 0)

    tomorrow = TODAY + timedelta(days=1)
    saturday = TODAY + timedelta(days=(5 - TODAY.weekday()) % 7 or 7)
    monday = TODAY + timedelta(days=(0 - TODAY.weekday()) % 7 or 7)
    options = [("Later today", at(TODAY, 18)), ("Tomorrow", at(tomorrow, 8)),
               ("This weekend", at(saturday, 8)), ("Next week", at(monday, 8))]
    return [SnoozeOption(name, f"{moment.strftime('%a')}, {_clock(moment.strftime('%H:%M'))}", moment.isoformat(timespec="minutes"))
            for name, moment in options]


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


# --- composing -----------------------------------------------------------------------------


_ANGLE = re.compile(r"<([^<>]+)>")
_ADDRESS = re.compile(r"^[^@\s<>]+@[^@\s<>]+\.[^@\s<>]+$")


def resolve_recipients(text: str, field_name: str) -> list[str]:
    """Comma-separated names or addresses -> addresses; names resolve through the contacts.

    A contact's full name ("Alexa Richardson") or an unambiguous first name / prefix ("Carol")
    resolves like Gmail's autocomplete would; anything else must be a well-formed address.
    """
    out: list[str] = []
    for raw in re.split(r"[,;]", text):
        token = raw.strip()
        if not token:
            continue
        angle = _ANGLE.search(token)
        candidate = (angle.group(1) if angle else token).strip().lower()
        if _ADDRESS.match(candidate):
            out.append(candidate)
            continue
        lowered = " ".join(token.lower().split())
        exact = [c for c in CONTACTS if c.name.lower() == lowered]
        prefix = [c for c in CONTACTS if c.name.lower().startswith(lowered)]
        match = exact or (prefix if len(prefix) == 1 else [])
        if not match:
            raise MailError(f'The address "{token}" in the "{field_name}" field was not recognized. '
                            "Please make sure that all addresses are properly formed.")
        out.append(match[0].address)
    return list(dict.fromkeys(out))


def contact_name(address: str) -> str:
    for person in (*CONTACTS, USER):
        if person.address == address:
            return person.name
    return address


@dataclass
class Draft:
    to: str = ""
    cc: str = ""
    bcc: str = ""
    subject: str = ""
    body: str = ""
    mode: str = "new"            # "new" | "reply" | "forward"
    in_reply_to: str = ""        # the email replied to / forwarded
    draft_id: str = ""           # an existing draft being edited
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def has_content(self) -> bool:
        return any(s.strip() for s in (self.to, self.cc, self.bcc, self.subject, self.body))


def _next_id(state: State) -> str:
    # never reuse a seed id (even one deleted forever): the diff must show new mail as added
    return str(1 + max([LAST_SEED_ID, *(int(i) for i in state["email"]["emails"])]))


def _clock_now(state: State) -> str:
    """The replica's clock advances a minute per message written, so new mail sorts in order."""
    written = sum(1 for i in state["email"]["emails"] if int(i) > LAST_SEED_ID)
    return (NOW + timedelta(minutes=written)).strftime("%H:%M")


def _quoted(original: Email, mode: str) -> str:
    when = full_date(original).split(" (")[0]
    if mode == "forward":
        header = (f"---------- Forwarded message ---------\nFrom: {original['fromName']} <{original['from']}>\n"
                  f"Date: {when}\nSubject: {original['subject']}\nTo: {', '.join(original['to'])}")
        return header + "\n\n" + plain_text(original["content"])
    quoted = "\n".join("> " + line for line in plain_text(original["content"]).split("\n"))
    return f"On {when} {original['fromName']} <{original['from']}> wrote:\n{quoted}"


def _message(state: State, draft: Draft, *, send: bool) -> Email:
    to = resolve_recipients(draft.to, "To")
    cc = resolve_recipients(draft.cc, "Cc")
    bcc = resolve_recipients(draft.bcc, "Bcc")
    if send and not (to or cc or bcc):
        raise MailError("Please specify at least one recipient.")
    emails = state["email"]["emails"]
    original = emails.get(draft.in_reply_to) if draft.mode in ("reply", "forward") else None
    body = draft.body.rstrip()
    content = body_html(body) if body else ""
    if original is not None:
        content += '<blockquote class="gmail_quote">' + body_html(_quoted(original, draft.mode)) + "</blockquote>"
    email_id = draft.draft_id if draft.draft_id in emails and emails[draft.draft_id]["draft"] else _next_id(state)
    return {
        "id": email_id,
        "from": USER.address,
        "fromName": USER.name,
        "to": to,
        "cc": cc,
        "bcc": bcc,
        "subject": draft.subject.strip(),
        "content": content,
        "date": TODAY.isoformat(),
        "time": _clock_now(state),
        "isRead": True,
        "starred": False,
        "labels": [],
        "trash": False,
        "archived": False,
        "spam": False,
        "sent": send,
        "draft": not send,
        "isReply": draft.mode == "reply",
        "isForward": draft.mode == "forward",
        "inReplyTo": draft.in_reply_to if original is not None else "",
    }


def send(state: State, draft: Draft) -> Email:
    email = _message(state, draft, send=True)
    state["email"]["emails"][email["id"]] = email
    state["ui"]["compose"] = dict(EMPTY_COMPOSE)
    notify(state, "Message sent.")
    refresh_search_results(state)
    return email


def save_draft(state: State, draft: Draft) -> Email | None:
    """Closing a compose window keeps what was typed as a draft (Gmail autosaves)."""
    state["ui"]["compose"] = dict(EMPTY_COMPOSE)
    if not draft.has_content:
        return None
    try:
        email = _message(state, draft, send=False)
    except MailError:
        # keep malformed recipients as typed: a draft need not be sendable
        email = _message(state, Draft(subject=draft.subject, body=draft.body, mode=draft.mode,
                                      in_reply_to=draft.in_reply_to, draft_id=draft.draft_id), send=False)
    state["email"]["emails"][email["id"]] = email
    notify(state, "Draft saved.")
    return email


def discard_draft(state: State, draft_id: str) -> None:
    emails = state["email"]["emails"]
    if draft_id in emails and emails[draft_id]["draft"]:
        del emails[draft_id]
    state["ui"]["compose"] = dict(EMPTY_COMPOSE)
    notify(state, "Draft discarded.")


def remember_rejected(state: State, draft: Draft, error: str) -> None:
    """Echo a rejected compose form back with its error (the page re-opens it)."""
    state["ui"]["compose"] = {"to": draft.to, "cc": draft.cc, "bcc": draft.bcc, "subject": draft.subject,
                              "body": draft.body, "error": error, "draftId": draft.draft_id}


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
