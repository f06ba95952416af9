"""Reading GoMail's store: folders, Gmail search, list pages and how dates are shown."""

from __future__ import annotations

import html
import re
import shlex
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any
from urllib.parse import quote, urlencode

from halo.sites.gomail.data import NOW, TODAY

Email = dict[str, Any]
State = dict[str, Any]

PAGE_SIZE = 50

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

#: filter.searchData before any search (the fields of Gmail's search form)
EMPTY_SEARCH: dict[str, str] = {"from": "", "to": "", "subject": "", "hasWords": "", "doesntHave": ""}


class MailError(ValueError):
    """A user-facing problem with a request (shown on the page, like Gmail's error bar)."""


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
