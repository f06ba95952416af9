"""The embedded policy's candidate actions: what it can do on a page, from the goal and the observation only.

A model reads the goal and the page and writes an action; the embedded policy cannot write, so it
chooses among candidates enumerated here: click / select every actionable element, fill every text
field with each piece of text the goal offers, press Enter in a field that holds text, scroll
both ways, go back, finish. The inputs are the goal string and the `PageView` (elements, URL,
title) and nothing else: no task id, no site module, no oracle or evaluation script
(`tests/policy/test_candidate_inputs.py` runs this module with those made unimportable, and an
import-linter contract keeps `halo.embedded` away from them).

Text from the goal (`goal_texts`) is found by generic surface rules a reader of any goal would
use: quoted phrases and e-mail addresses; capitalised names ("Olivia Martinez", "San Jose, Costa
Rica"); amounts, times and dates ("100", "8:30 AM", "July 18"); content-word phrases for search
boxes ("queen size bed frame", "bed frame"); and free text for a message or a post (the goal's
request, and what follows "that" / "about" / "saying" ...).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from halo.agent import actions as A
from halo.agent.context import PageElement, PageView

CLICK_ROLES = frozenset({
    "button", "link", "checkbox", "radio", "tab", "menuitem", "menuitemcheckbox", "switch", "treeitem",
    "option", "combobox", "listbox", "slider",
})
TEXT_ROLES = frozenset({"textbox", "searchbox", "spinbutton"})
ACTION_KINDS = ("click", "fill", "select", "enter", "scroll", "back", "finish")
SCROLL_STEP_PX = 400.0
FINISH_MESSAGE = "Done."
#: globals appended after the page's candidates (scroll down, scroll up, back, finish)
N_GLOBALS = 4


@dataclass(frozen=True)
class CandidateAction:
    """One action the embedded policy can choose for this observation."""

    action: A.Action
    kind: str            # one of ACTION_KINDS
    description: str     # what the encoder reads, e.g. 'click button "Sign up"'
    element: PageElement | None = None

    @property
    def subject(self) -> str:
        """What the candidate acts on, without the text it would type ('fill textbox "To"'): the
        goal/candidate relevance is measured on it, since every fill's text comes from the goal."""
        if self.kind == "fill" and self.element is not None:
            return f"fill {_label(self.element)}"
        return self.description


# ------------------------------------------------------------------------- text from the goal

_QUOTED = re.compile(r"\"([^\"]{1,200})\"|“([^”]{1,200})”|'([^']{1,200})'(?!\w)")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+\.[\w.-]+")
_SITE_PREFIX = re.compile(r"^\s*[A-Z][\w]*(?: [A-Z][\w]*)?\s*:\s*")   # "GoMail: ...", "Network In: ..."
_TOKEN = re.compile(r"\b[A-Za-z][\w'’&-]*|[,.;:!?()\[\]/]")   # words, and punctuation that ends a phrase
_CAPITALISED = re.compile(r"\b(?:[A-Z][\w'’&-]*|[A-Z]{2,})(?:\s+(?:[A-Z][\w'’&-]*|of|de|la|del|van|von))*(?<![\s])")
_TIME = re.compile(r"\b(\d{1,2})(?::(\d{2}))?\s*([ap])\.?\s?m\.?\b", re.I)
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_DATE = re.compile(r"\b(" + "|".join(m.capitalize() for m in _MONTHS) + r"|" + "|".join(m[:3].capitalize() for m in _MONTHS)
                   + r")\.?\s+(\d{1,2})(?:st|nd|rd|th)?\b", re.I)
_NUMBER = re.compile(r"(?<![\w:])\$?\s?(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)\s?(k|K|\$)?(?![\w:])")
_IS_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_FREE_TEXT_LEAD = re.compile(
    r"\b(?:saying|say|telling|tell(?: (?:him|her|them))?|asking(?: (?:him|her|them))?|ask(?: (?:him|her|them))?|"
    r"notifying(?: (?:him|her|them))?|that|about|to say|regarding|informing(?: (?:him|her|them))?)(?:\s+that)?\s+(.+)$", re.I)

#: Words that carry no search meaning: function words and the imperative verbs goals open with.
_STOP = frozenset("""
a an the and or but of to for from in on at by with without into onto over under between than then as is are be been
being am was were it its it's this that these those there here my me i i'm we our us you your yours he him his she her
they them their who whom which what when where why how all any some each every no not only just also too very so such
can could would should will shall may might must do does did done have has had get got make made let please need want
like want wanted really about around after before up down out off if because while until since again more most less
few many much one ones find show book order buy reserve give send write create add put take go see look check help
tell ask email mail message post set change remove delete clear empty mark move cancel select choose search open
close start keep sure also someone something anything everything thing things place places day today tonight now
new next last first
""".split())


def _clean(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip(" .,;:!?\t\n")


def goal_request(goal: str) -> str:
    """The goal without a leading site name ("GoMail: Send ..." -> "Send ...")."""
    return _clean(_SITE_PREFIX.sub("", goal, count=1))


def _names(request: str) -> list[str]:
    """Capitalised word runs that are not just the sentence's first word ("Connect with Olivia
    Martinez" -> "Olivia Martinez"), and a place with its region ("San Jose, Costa Rica")."""
    out: list[str] = []
    sentence_starts = {0} | {m.end() for m in re.finditer(r"[.!?]\s+", request)}
    runs = [(m.start(), m.end(), m.group(0)) for m in _CAPITALISED.finditer(request)]
    kept: list[tuple[int, int, str]] = []
    for start, end, text in runs:
        words = text.split()
        if start in sentence_starts:
            words = words[1:]   # the first word of a sentence is capitalised anyway
            if not words:
                continue
            start = end - len(" ".join(words))
        phrase = " ".join(words)
        if phrase.lower() in _STOP:
            continue
        kept.append((start, end, phrase))
        out.append(phrase)
    for (s1, e1, a), (s2, e2, b) in zip(kept, kept[1:]):
        if re.fullmatch(r",\s*", request[e1:s2]):
            out.append(f"{a}, {b}")
    return out


def _amounts(request: str) -> list[str]:
    out: list[str] = []
    for m in _TIME.finditer(request):
        hour, minute, half = int(m.group(1)), m.group(2) or "00", m.group(3).upper()
        out.append(f"{hour}:{minute} {half}M")
    for m in _DATE.finditer(request):
        month = next(x for x in _MONTHS if x.startswith(m.group(1).lower()[:3]))
        out.append(f"{month.capitalize()} {int(m.group(2))}")
    for m in _NUMBER.finditer(request):
        digits = m.group(1).replace(",", "")
        if m.group(2) in ("k", "K"):
            digits = str(int(float(digits) * 1000))
        out.append(digits)
    return out


def _phrases(request: str) -> list[str]:
    """Runs of content words between stop words, and the last two words of a long run (its head
    noun: "queen size bed frame" -> "bed frame"), for search boxes."""
    out: list[str] = []
    run: list[str] = []
    for token in _TOKEN.findall(request) + [""]:
        if token[:1].isalpha() and token.lower() not in _STOP:
            run.append(token)
            continue
        if run:
            out.append(" ".join(run).lower())
            if len(run) > 2:
                out.append(" ".join(run[-2:]).lower())
        run = []
    return out


def _free_text(request: str) -> list[str]:
    """What a message or post could say: what follows "that" / "about" / "saying" ..., and the request itself."""
    out: list[str] = []
    m = _FREE_TEXT_LEAD.search(request)
    if m and len(m.group(1).split()) >= 2:
        tail = _clean(m.group(1))
        out.append(tail[0].upper() + tail[1:])
    out.append(request)
    return out


def _unique(texts: list[str]) -> list[str]:
    unique: list[str] = []
    seen: set[str] = set()
    for text in (_clean(t) for t in texts):
        if text and text.lower() not in seen:
            seen.add(text.lower())
            unique.append(text)
    return unique


def key_texts(goal: str) -> list[str]:
    """The goal's most specific words: quoted phrases, e-mail addresses, names, amounts, times, dates."""
    request = goal_request(goal)
    found = [next(g for g in m.groups() if g is not None).strip() for m in _QUOTED.finditer(goal)]
    return _unique(found + _EMAIL.findall(goal) + _names(request) + _amounts(request))


def goal_texts(goal: str, limit: int = 12) -> list[str]:
    """Strings from the goal that a fill action may type, most specific first."""
    request = goal_request(goal)
    return _unique(key_texts(goal) + _free_text(request) + _phrases(request))[:limit]


# ------------------------------------------------------------------------------ enumeration

def _label(e: PageElement) -> str:
    name = e.name.strip() or e.value.strip() or "(unnamed)"
    return f'{e.role} "{name}"'


def candidates_for(goal: str, page: PageView, max_candidates: int = 256) -> list[CandidateAction]:
    """Every action the embedded policy considers, in a stable order (page order, then globals).

    The order is part of the contract: the gateway returns the chosen index, and a trainer that
    re-enumerates the same observation gets the same list.
    """
    texts = goal_texts(goal)
    numbers = [t for t in texts if _IS_NUMBER.fullmatch(t)]
    out: list[CandidateAction] = []
    combobox: PageElement | None = None
    for e in page.elements:
        role = e.role
        if role == "option" and combobox is not None:
            # the options of a listbox that a page draws (autocomplete suggestions) are clicked when
            # in view; those of a native <select> have no box and are chosen through the select
            if e.interactive and e.visible and e.width > 0 and e.height > 0:
                out.append(CandidateAction(A.ClickElement(e.bid), "click", f"click {_label(e)}", e))
            else:
                out.append(CandidateAction(A.SelectOption(combobox.bid, (e.name,)), "select",
                                           f'select "{e.name}" in {_label(combobox)}', combobox))
            continue
        combobox = e if role in ("combobox", "listbox") else None
        if not e.interactive or not e.visible:
            continue
        if role in TEXT_ROLES:
            # a number field (spinbutton) takes numbers only: anything else is an action error
            for text in (numbers if role == "spinbutton" else texts):
                out.append(CandidateAction(A.Fill(e.bid, text), "fill", f'fill {_label(e)} with "{text}"', e))
            if e.value.strip() and e.focused:
                # submit what the focused field holds (a search box, a form without a button in view)
                out.append(CandidateAction(A.KeyPress("Enter"), "enter", f"press Enter in {_label(e)}", e))
        if role in CLICK_ROLES or role in TEXT_ROLES:
            out.append(CandidateAction(A.ClickElement(e.bid), "click", f"click {_label(e)}", e))
    out = out[: max_candidates - N_GLOBALS]
    out.append(CandidateAction(A.Scroll(delta_y=SCROLL_STEP_PX), "scroll", "scroll down the page"))
    out.append(CandidateAction(A.Scroll(delta_y=-SCROLL_STEP_PX), "scroll", "scroll up the page"))
    out.append(CandidateAction(A.GoBack(), "back", "go back to the previous page"))
    out.append(CandidateAction(A.SendMessage(FINISH_MESSAGE), "finish", "finish: the task is done"))
    return out
