"""Writing mail: recipients from the address book, sending, replying, forwarding and drafts."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import timedelta

from halo.sites.gomail.data import CONTACTS, NOW, TODAY, USER
from halo.sites.gomail.mailbox import EMPTY_COMPOSE, LAST_SEED_ID, body_html, notify, refresh_search_results
from halo.sites.gomail.views import Email, MailError, State, full_date, plain_text

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
