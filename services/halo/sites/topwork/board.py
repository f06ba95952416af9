"""TopWork's store (what /finish diffs) and the operations its pages perform on it.

Slices, shaped after what agisdk's topwork eval scripts read:

    config.topwork              {run_id, task_id}, written by the first page after /config
    router.location             {pathname, search} of the page shown
    messages.contactList        [{id, name, job, messages: [{id, author, message, type: text|invite|offer, offer?}],
                                  lastMessage, lastMessageAuthor, unread, offer?}]. Sarah's typed lines are authored
                                "Sarah Johnson", the invitations and offers the site writes "Client". A freelancer
                                who is not yet a contact is appended whole (so id and job reach the diff)
    messages.selectedChatId     absent until a conversation is opened (then it shows under `added`)
    offers.offers               [{id, contractTitle, freelancerId, hourlyRate, description, startDate, status}]; an
                                offer's copies (the offer message, contact.offer) share its id
    jobs.jobs                   the client's job posts (a removed post stays, closed); jobs.removedJobPosts is absent
                                until a post is removed, then the list of removed posts (a list in the diff, as
                                eval_topwork_8.py wants)
    saved.savedFreelancerIds    saved talent
    hires.pastHires             past contracts (no contractTitle: only new offers look like offers)
"""

from __future__ import annotations

import copy
from typing import Any

from halo.sites.pages import toggle
from halo.sites.topwork.talent import (
    CLIENT, DURATIONS, FREELANCER_BY_ID, HIRE_CHOICES, LEVELS, PAST_HIRES, SEED_CHATS, SEED_JOBS, SIZES, Freelancer,
)

ME = CLIENT["name"]
SITE_AUTHOR = "Client"        # the author REAL's TopWork gives the messages it writes for the client
MAX_TEXT = 3000


class FormError(ValueError):
    def __init__(self, errors: dict[str, str]) -> None:
        super().__init__("; ".join(errors.values()))
        self.errors = errors


def invite_text(f: Freelancer) -> str:
    return (f"Hi {f.first_name}, I'd like to invite you to take a look at the job I've posted. "
            "Please submit a proposal if you're available and interested.")


def _contact(f: Freelancer, lines: list[tuple[str, str]], unread: bool = False) -> dict[str, Any]:
    messages = [{"id": f"{f.id}-{i + 1}", "author": a, "message": t, "type": "text"} for i, (a, t) in enumerate(lines)]
    last = messages[-1] if messages else {"message": "", "author": ""}
    return {"id": f.id, "name": f.name, "job": f.title, "messages": messages, "lastMessage": last["message"],
            "lastMessageAuthor": last["author"], "unread": unread}


def initial_state() -> dict[str, Any]:
    return {
        "config": {},
        "router": {"location": {"pathname": "/", "search": ""}},
        "user": dict(CLIENT),
        "messages": {"contactList": [_contact(FREELANCER_BY_ID[fid], list(lines), unread) for fid, unread, lines in SEED_CHATS]},
        "offers": {"offers": []},
        "jobs": {"jobs": copy.deepcopy(list(SEED_JOBS))},
        "saved": {"savedFreelancerIds": []},
        "hires": {"pastHires": copy.deepcopy(list(PAST_HIRES))},
    }


def clean_text(raw: Any, limit: int = MAX_TEXT) -> str:
    return str(raw or "").strip()[:limit]


# --- messages -------------------------------------------------------------------------------------

def contact(state: dict[str, Any], freelancer_id: str) -> dict[str, Any] | None:
    return next((c for c in state["messages"]["contactList"] if c["id"] == freelancer_id), None)


def open_chat(state: dict[str, Any], freelancer_id: str) -> None:
    state["messages"]["selectedChatId"] = freelancer_id
    found = contact(state, freelancer_id)
    if found is not None and found["unread"]:
        found["unread"] = False


def _post(state: dict[str, Any], f: Freelancer, message: dict[str, Any]) -> dict[str, Any]:
    """Append a message to the freelancer's conversation; a new contact is appended whole."""
    found = contact(state, f.id)
    if found is None:
        found = _contact(f, [])
        message["id"] = f"{f.id}-1"
        found["messages"].append(message)
        found["lastMessage"], found["lastMessageAuthor"] = message["message"], message["author"]
        state["messages"]["contactList"].append(found)
        return found
    message["id"] = f"{f.id}-{len(found['messages']) + 1}"
    found["messages"].append(message)
    found["lastMessage"], found["lastMessageAuthor"] = message["message"], message["author"]
    return found


def send_message(state: dict[str, Any], f: Freelancer, text: str) -> bool:
    text = clean_text(text)
    if not text:
        return False
    _post(state, f, {"id": "", "author": ME, "message": text, "type": "text"})
    return True


def invite(state: dict[str, Any], f: Freelancer, job_id: str, text: str) -> None:
    job = next((j for j in state["jobs"]["jobs"] if j["id"] == job_id and j["status"] == "published"), None)
    errors = {}
    if job is None:
        errors["job"] = "Choose one of your open jobs"
    text = clean_text(text)
    if not text:
        errors["message"] = "Add a message"
    if errors:
        raise FormError(errors)
    _post(state, f, {"id": "", "author": SITE_AUTHOR, "message": text, "type": "invite", "jobId": job["id"], "jobTitle": job["title"]})


def send_offer(state: dict[str, Any], f: Freelancer, form: dict[str, str]) -> dict[str, Any]:
    errors = {}
    title = clean_text(form.get("contractTitle"), 120)
    if not title:
        errors["contractTitle"] = "Add a contract title"
    try:
        rate = round(float(str(form.get("hourlyRate", "")).replace("$", "").strip()), 2)
        if not 3 <= rate <= 999:
            raise ValueError
    except ValueError:
        errors["hourlyRate"] = "Enter an hourly rate between $3 and $999"
        rate = 0
    start = clean_text(form.get("startDate"), 10)
    if not start:
        errors["startDate"] = "Choose a start date"
    if errors:
        raise FormError(errors)
    offer = {"id": f"offer-{len(state['offers']['offers']) + 1}", "contractTitle": title, "freelancerId": f.id,
             "hourlyRate": rate, "description": clean_text(form.get("description")), "startDate": start, "status": "Pending"}
    state["offers"]["offers"].append(offer)
    found = _post(state, f, {"id": "", "author": SITE_AUTHOR, "message": f"Sent an offer: {title}", "type": "offer",
                             "offer": dict(offer)})
    found["offer"] = dict(offer)
    return offer


# --- jobs -----------------------------------------------------------------------------------------

def post_job(state: dict[str, Any], form: dict[str, str], draft: bool) -> dict[str, Any]:
    errors = {}
    title, description = clean_text(form.get("title"), 120), clean_text(form.get("description"))
    if not title:
        errors["title"] = "Add a title"
    if not description:
        errors["description"] = "Describe the job"
    choices = {"estimateSize": SIZES, "estimateTime": DURATIONS, "estimateLevelExperience": tuple(l for l, _ in LEVELS),
               "estimateHireOpportunity": tuple(v for v, _ in HIRE_CHOICES)}
    for key, allowed in choices.items():
        if form.get(key) not in allowed:
            errors[key] = "Choose one"
    rates = {}
    for key in ("hourlyRateFrom", "hourlyRateTo"):
        try:
            rates[key] = int(str(form.get(key, "")).replace("$", "").strip())
            if not 3 <= rates[key] <= 999:
                raise ValueError
        except ValueError:
            errors[key] = "Enter a whole dollar rate between $3 and $999"
    if len(rates) == 2 and rates["hourlyRateFrom"] > rates["hourlyRateTo"]:
        errors["hourlyRateTo"] = "The top of the range must be at least the bottom"
    if errors and not draft:
        raise FormError(errors)
    skills = [s.strip() for s in str(form.get("skills", "")).split(",") if s.strip()][:15]
    job = {"id": f"job-{len(state['jobs']['jobs']) + 1}",
           "title": title or "Untitled draft", "description": description, "category": str(form.get("category", "")),
           "subcategory": "", "skills": skills, "hourlyRateFrom": rates.get("hourlyRateFrom"),
           "hourlyRateTo": rates.get("hourlyRateTo"), **{k: form.get(k) if form.get(k) in v else None for k, v in choices.items()},
           "status": "draft" if draft else "published", "applications": []}
    state["jobs"]["jobs"].append(job)
    return job


def remove_job(state: dict[str, Any], job_id: str) -> dict[str, Any] | None:
    """Remove a post: it is closed where it stands (so the other posts keep their index in the diff)
    and a copy joins jobs.removedJobPosts."""
    job = next((j for j in state["jobs"]["jobs"] if j["id"] == job_id and j["status"] != "closed"), None)
    if job is None:
        return None
    job["status"] = "closed"
    state["jobs"].setdefault("removedJobPosts", []).append(copy.deepcopy(job))
    return job


# --- saved talent -----------------------------------------------------------------------------------

def toggle_saved(state: dict[str, Any], freelancer_id: str) -> bool:
    return toggle(state["saved"]["savedFreelancerIds"], freelancer_id)
