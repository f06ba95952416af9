"""The task registry: REAL v2 tasks from the installed agisdk, plus HALO's own replica tasks.

Each task knows its site, goal, REAL URL and how it is scored, whether a local replica serves it,
and whether agisdk can score it at all (a few upstream eval scripts are broken).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from halo.runtime.errors import NotFound
from halo.sites.playground import load_tasks as playground_tasks
from halo.sites.registry import replica_task_ids

#: Upstream eval scripts that cannot score an attempt as shipped in agisdk 0.3.5, and why.
UNSCORABLE: dict[str, str] = {
    "gocalendar-11": "agisdk's eval_gocalendar_11.py is empty: it prints nothing, so every attempt scores 0",
}
#: Scripts that run but depend on the machine (paths, clocks, sibling files) or accept more than the
#: goal asks (found while building the replicas): scorable, with caveats.
CAVEATS: dict[str, str] = {
    "marrisuite-8": ("the script reads the whole state as text: 'goleta' plus a hotel or listing word passes, a booking phrase or "
                     "'2 rooms'..'5 rooms' fails, the dates are not checked; with no such word at all it decides from the "
                     "state file's path (a timestamp's minute), which HALO's evaluator never provides (a no-op fails)"),
    "dashdish-3": "an item named 'hot-n-ready pepperoni' counts as pizza; orders are found anywhere in the /finish JSON",
    "dashdish-4": "any item whose name holds 'sandwich' or 'sub' passes: the chicken is not checked",
    "dashdish-7": "other items and any size may share the order; the quantity only has to be positive",
    "dashdish-8": "'$20 worth' is read as the order total (fees, tax and tip included) being at least $20",
    "dashdish-10": "the script accepts totals up to $20 (the goal says under $15)",
    "dashdish-11": "sub/sandwich/hoagie/hero/grinder anywhere in an item's name, description or restaurant passes (a chicken sandwich too)",
    "dashdish-12": "'bowl' counts as rice unless the item mentions soup, salad, fries, wings or chips",
    "dashdish-17": "'wing' may be in the item's size instead of its name",
    "dashdish-26": "one Wingstop item is enough: items from other stores may share the order",
    "gomail-1": "script counts 4-8 trashed emails and >= 15 read; it does not check that the trashed ones are Amazon's",
    "gomail-11": "succeeds if any one email older than two months (ids 52-56) is trashed, not all of them",
    "gomail-14": "any single batch of 1-50 trashed emails passes ('visible' is not checked)",
    "gomail-20": "trashing only the first page (50 of 56) passes; trash counts from the two diff sources are added",
    "gomail-21": "the alerts set is taken from the snoozed emails themselves: snoozing any subset passes; 7 days unchecked",
    "gomail-23": "checks 10-30 trashed emails, not that they have 'support' in the title",
    "gomail-24": "only checks that id 1 (John Doe) was trashed",
    "gocalendar-4": ("needs 'gym' in the event's location (a title 'Work out at the gym' alone fails) and an added event "
                     "from 2024-09-21T02:45Z to 03:45Z; the Monday-Friday repetition is not checked"),
    "gocalendar-6": "any Wednesday (UTC) and any on-the-hour start at 15-18h or 21-03h UTC passes (8-11 AM or 2-8 PM PDT), not just 11 AM",
    "gocalendar-8": ("any Monday (UTC) 13:00-19:59 UTC passes, an event as well as a task, and the whole state JSON is searched "
                     "(a matching event created then deleted still passes through calendar.deletedEvents)"),
    "gocalendar-10": "any deleted event titled with 'dinner' and 'friend' passes; the day is not checked",
    "gocalendar-12": "only the title is checked ('gym' and 'clothes', added or updated event), not Monday morning",
    "gocalendar-16": "any deleted event with 'reading' in its title passes: deleting Monday's Reading time instead of Wednesday's scores 1",
    "gocalendar-18": "'coffee' and 'sister' anywhere in a deleted event's title or description",
    "omnizon-28": (
        "eval_omnizon_28.py scores the state file plus every *.json/*.txt file beside it (agisdk writes the "
        "state to the shared temp dir): a sibling file saying 'unsuccessful' fails every attempt and one holding "
        "another attempt's success makes a no-op pass; HALO's evaluator runs it with the state file alone"
    ),
    "opendining-1": "any reservation in the 3 PM hour (3:00-3:59) at a place whose cuisine, name or description says Italian passes; the day is not checked",
    "opendining-2": "the day is not checked; 7:00 and 8:00 PM both count as 'between 7 and 8'",
    "opendining-4": "only the episode's first reservation is read; 'top rated' is 3.5 stars and up, and the day is not checked",
    "opendining-5": "only the first reservation is read; 'tonight' is not checked (any date and time passes)",
    "opendining-6": "any restaurant at 1:30 PM on a July 18 passes (the year is not checked)",
    "opendining-7": "the rating and the day are not checked: any reservation whose restaurant's name, description or image URL has a waterfront word passes",
    "opendining-9": "only the first reservation is read; the day is not checked",
    "opendining-12": "the date is barely checked: any date but 2025-10-21 passes",
    "opendining-17": "the neighbourhood and the date are not checked (any place, 8-10 PM, 6 guests, business meal)",
    "opendining-20": "a completed booking at 5:00 PM at any restaurant passes (the top-level booking time is not tied to Evening Delight)",
    "opendining-24": "the day is not checked",
    "staynb-1": "the 2 bedrooms are not checked; any guest mix summing to 3 (infants and pets included) passes",
    "staynb-4": "reads added.search only; 2 or more adults+children pass; with no amenity filter it passes only for a destination with ', usa' in it (StayNB labels never have it)",
    "staynb-5": "extra amenities pass; a completed booking fails",
    "staynb-6": "any new wishlist holding a stay with 2+ bedrooms and 2+ beds passes with the Cape Town search; the stay's city, wifi and size for 4 are not checked",
    "staynb-9": "with no amenity filter in the search it decides on the parity of the run_id's trailing digits (arbitrary); 'tonight' is any one-day search",
    "staynb-12": "exactly 2 adults: '2 guests' as 1 adult + 1 child fails; any started booking fails",
    "staynb-13": "only a one-day search (check-in = check-out = July 18) passes: July 18-19, the usual reading of 'the night of July 18', fails",
    "staynb-14": "'the first weekend of January' is read as 2025-01-03 to 01-05; 2+ bedrooms come from the Bedrooms filter",
    "staynb-15": "any San Jose, Costa Rica search without a booking passes (dates and guests are free, as the goal says)",
    "staynb-17": "any amenity filter passes for 'I need wifi' (the list only has to be non-empty)",
    "staynb-19": "sharing to the group chat is not checked: the search alone passes",
    "udriver-2": "the wallet is found anywhere in the state; any credit card among the payment methods counts as the card",
    "udriver-4": "a wallet debit naming Rooftop 25 with the route merely selected also passes",
    "udriver-7": "any pickup on Irving Street counts as 22nd & Irving (the replica has one other: the 7-Eleven at 1401 Irving); any 7-Eleven passes",
    "udriver-11": "'enough credits' is read as paid from the wallet: a card payment fails even for an affordable ride",
    "udriver-13": "the trip's status is not checked (a scheduled trip in trips would pass)",
    "udriver-16": "the goal does not ask for credits, but the script needs a wallet debit: a card or cash ride fails",
    "udriver-19": "passes once the route's price and the wallet balance are in the state: nothing checks what was concluded",
    "zilloft-2": "any tour request whose message names Long Beach (or Huntington Beach) without 'apt'/'unit'/'condo' passes; beds and baths are not checked",
    "zilloft-3": "any complete tour request (name, email, phone, message, a day or time) passes; the area, price, rooms and July 19 are not checked",
    "zilloft-5": "any message to any agent passes: San Jose and hiring are not checked",
    "zilloft-6": "any selectedDate on July 19 between 12 and 2 PM anywhere in the state passes; the city, price and rooms are not checked",
    "zilloft-9": "needs a tour request, which the goal does not ask for; any tour passes, the square footage is not checked",
    "zilloft-10": "a maxPrice <= $500K and a 2+ beds filter in the store pass with a tour of any home (else the toured home is checked)",
    "zilloft-14": "the 9 AM is not checked (any time tomorrow passes), nor the price; 'tomorrow' is the day after the first timestamp in the state",
    "zilloft-15": "a requester named 'Bob Bob' passes at any time of a weekend day; the Bay Area is read from city names in the message",
    "zilloft-22": "any tour request passes: Southern California and the $1M limit are not checked",
    # networkin (REAL v2 NetworkIn replica)
    "networkin-1": "any two follows including Microsoft pass ('popular' is not checked); with no follows at all, a search for 'microsoft' passes",
    "networkin-5": "a side-project message passes if the recipient's stored strings say software engineer (any search with 'software' and no data-science context also passes)",
    "networkin-6": "any 'project' message by Div plus any search term with 'new york', 'nyc' or 'tech' passes: the recipient's city and industry are not checked",
    "networkin-10": "counts new connections (contactList or accepted-request chats) in the diff; who they are is not checked",
    "networkin-11": "a self-post with 'network' and a DM phrase, sent as a post message to 2 chats (or any 2 new connections) passes",
    "networkin-13": "any self-post mentioning 'summer' and 'intern' passes",
    "networkin-19": ("eval_networkin_19.py reads data['env_state']['initialfinaldiff'], which only agisdk's leaderboard payload "
                     "carries: the replica's /finish mirrors the diff there (the other networkin scripts score the same); "
                     "exactly one self-post with 'internship' and 'agi inc' passes"),
    "networkin-25": ("any truthy attend/going/rsvp key or any stored string with '/event/' or '/events/' passes (event pages "
                     "live at /my-network/events?id=… so viewing does not); which event is not checked, and the script also "
                     "passes a no-op when the state file sits in a folder named 2025-09-25T23-21-08"),
    "networkin-26": "a search for 'software engineer' alone passes, as does any message with 'software' and an advice word",
    "networkin-27": "'oliviamartinez' as a contact, a chat key or a connection grade passes: a message to Olivia alone also passes",
    # topwork (REAL v2 TopWork replica)
    "topwork-2": "any message (or offer description) with 'fitness', 'app' and 'interested' to a contact whose title says full stack or back end passes: an invitation is not required",
    "topwork-3": "any 'Client' message with 'invite' to a contact whose title has python/backend/data/ml/ai passes ('ml' and 'ai' match inside other words); availability is not checked",
    "topwork-4": "exactly one invited contact, a full-stack one; inviting someone who already was a contact counts twice (added and updated) and fails",
    "topwork-7": "any offer object plus any offer-type message passes: the 'valid message' is not read",
    "topwork-8": "removing any one data-related post passes; the other data posts may stay",
    "topwork-9": "a 'Financial Analyst' post at $45-65 that is not a draft passes; the other fields are not checked",
    "topwork-10": "the open chat must be Alex's (messages.selectedChatId) and a Sarah Johnson message must say 'help' and 'get set up'",
    "topwork-11": ("exactly one offer titled 'Project Lead' (status Pending) passes; whether its freelancer was a past hire is not "
                   "checked"),
    "topwork-12": "one Sarah Johnson reply containing 'tomorrow' to any contact passes: the other unread chats may stay unanswered",
    "topwork-13": ("needs estimateTime '1 to 3 months' and level 'Entry', which the goal never states ('small' and 'not "
                   "permanent' only); the form offers Upwork's three durations and preselects none"),
    "topwork-14": "the ids saved must include ashleycampbell and brandonmartinez (the script's fallback ids when no applicants are in the diff)",
    "topwork-21": "any Sarah Johnson message with a broad word ('time', 'chat', 'call', 'free', a weekday…) to any contact passes",
    "zilloft-23": ("any price <= $900K anywhere in the state counts as the price filter (a minimum price too), and a tour of a "
                   "California home with 3+ beds and a price under $900K passes without filters"),
}

SUITE_REAL = "real-v2"
SUITE_HALO = "halo"


@dataclass(frozen=True)
class EvalSpec:
    kind: str                    # "script" | "jmespath" | "llm_judge"
    script: str = ""
    query: str = ""
    expected_value: Any = None
    rubric: str = ""
    description: str = ""


@dataclass(frozen=True)
class TaskSpec:
    id: str
    site: str
    goal: str
    remote_url: str
    difficulty: str
    challenge_type: str
    possible: bool
    evals: tuple[EvalSpec, ...]
    suite: str
    replica_available: bool = False
    scorable: bool = True
    notes: str = ""
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def eval_kinds(self) -> list[str]:
        return [e.kind for e in self.evals]


def agisdk_v2_dir() -> Path:
    import agisdk.REAL.browsergym.webclones as webclones

    return Path(webclones.__file__).parent / "v2"


def _eval_spec(raw: dict[str, Any]) -> EvalSpec:
    kind = raw.get("type") or ("script" if raw.get("script") else "")
    kind = {"llm_boolean": "llm_judge", "llm": "llm_judge"}.get(kind, kind)
    return EvalSpec(
        kind=kind, script=raw.get("script", ""), query=raw.get("query", ""),
        expected_value=raw.get("expected_value"), rubric=raw.get("rubric", ""),
        description=raw.get("description", "") or raw.get("script", "") or raw.get("query", ""),
    )


def _task_from_json(raw: dict[str, Any], suite: str, served: dict[str, frozenset[str]]) -> TaskSpec:
    task_id = raw["id"]
    site = raw["website"]["id"]
    notes = UNSCORABLE.get(task_id, CAVEATS.get(task_id, ""))
    return TaskSpec(
        id=task_id, site=site, goal=raw["goal"], remote_url=raw["website"].get("url", ""),
        difficulty=raw.get("difficulty", ""), challenge_type=raw.get("challengeType", "action"),
        possible=bool(raw.get("possible", True)), evals=tuple(_eval_spec(e) for e in raw.get("evals", [])),
        suite=suite, replica_available=task_id in served.get(site, frozenset()),
        scorable=task_id not in UNSCORABLE, notes=notes, raw=raw,
    )


class TaskRegistry:
    def __init__(self, tasks: list[TaskSpec]) -> None:
        self._tasks = {t.id: t for t in tasks}

    @classmethod
    def load(cls) -> "TaskRegistry":
        served = replica_task_ids()
        tasks = [
            _task_from_json(json.loads(p.read_text()), SUITE_REAL, served)
            for p in sorted((agisdk_v2_dir() / "tasks").glob("*.json"))
        ]
        tasks += [_task_from_json(raw, SUITE_HALO, served) for raw in playground_tasks()]
        return cls(tasks)

    def get(self, task_id: str) -> TaskSpec:
        key = task_id.removeprefix("v2.")
        try:
            return self._tasks[key]
        except KeyError:
            raise NotFound(f"unknown task {task_id!r} (see ListTasks / `halo tasks list`)") from None

    def list(self, site: str = "", replica_only: bool = False, suite: str = "") -> list[TaskSpec]:
        return [
            t for t in sorted(self._tasks.values(), key=lambda t: (t.suite, t.site, _natural_key(t.id)))
            if (not site or t.site == site) and (not replica_only or t.replica_available) and (not suite or t.suite == suite)
        ]

    def __len__(self) -> int:
        return len(self._tasks)


def _natural_key(task_id: str) -> tuple[str, int]:
    head, _, tail = task_id.rpartition("-")
    return (head, int(tail)) if tail.isdigit() else (task_id, 0)


@cache
def default_registry() -> TaskRegistry:
    return TaskRegistry.load()
