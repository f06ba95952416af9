"""NetworkIn's store (what /finish diffs) and the operations its pages perform on it.

Slices, shaped after what agisdk's networkin eval scripts read (all present at /config, so an
append to a list shows in the diff as a dict of added items, as in REAL's clone):

    config.networkin             {run_id, task_id}, written by the first page after /config
    router.location              {pathname, search} of the page shown (search keeps `?keywords=…`)
    contactList                  usernames of Div's connections; Connect appends
    connectionGrades             {username: 1|2|3}
    followedCompanies            {lowercase company id: true|false}
    searchHistory                [{searchTerm, type}] of the searches run
    feedPosts                    the feed's posts, oldest first (a new post is appended, so old ones keep their index)
    ui.feed.postDynamicData      {postId: {id, type: post|self-post, authorId, description, likes, comments, createdAt}}
    ui.messaging.chatroomData    {username: {id, participant{id,name,headline}, messages[], lastMessage, lastMessageAuthorId}}
    ui.messaging.selectedChat    the open conversation's {id, name, headline} (networkin-5 reads the headline)
    events.attendance            {eventId: true} for the events Div attends

networkin-25 passes on any stored string holding "/event/" or "/events/" and on any truthy key
named like attend/going/rsvp, so event pages live at `/my-network/events?id=…` and nothing but
the Attend flag is stored about events.
"""

from __future__ import annotations

from typing import Any

from halo.sites.networkin.people import (
    COMPANY_BY_ID, CONNECTIONS, EVENT_BY_ID, MEMBER_BY_ID, MEMBERS, ME, SEED_CHATS, SEED_POSTS, Member,
)

CREATED_AT = "2024-07-18T17:00:00.000Z"     # REAL v2's "today": Thursday, July 18, 2024, 10 AM Pacific
MAX_TEXT = 3000


def _connection_messages(member: Member) -> list[dict[str, Any]]:
    return [
        {"id": f"{member.id}-1", "authorId": ME.id, "message": "Connection request sent", "type": "system"},
        {"id": f"{member.id}-2", "authorId": member.id, "message": f"{member.name} accepted your connection request", "type": "system"},
    ]


def _chatroom(member: Member, messages: list[dict[str, Any]]) -> dict[str, Any]:
    last = messages[-1] if messages else {"message": "", "authorId": ""}
    return {"id": member.id, "participant": member.as_participant(), "messages": messages,
            "lastMessage": last["message"], "lastMessageAuthorId": last["authorId"]}


def _post(post_id: str, author: str, text: str, likes: int, kind: str = "post") -> dict[str, Any]:
    return {"id": post_id, "type": kind, "authorId": author, "description": text, "likes": likes, "comments": [],
            "createdAt": CREATED_AT}


def initial_state() -> dict[str, Any]:
    chats = {}
    for mid in CONNECTIONS:
        member = MEMBER_BY_ID[mid]
        lines = [{"id": f"{mid}-{i + 3}", "authorId": a, "message": t, "type": "text"} for i, (a, t) in enumerate(SEED_CHATS[mid])]
        chats[mid] = _chatroom(member, _connection_messages(member) + lines)
    posts = [_post(pid, author, text, likes) for pid, author, text, likes in SEED_POSTS]
    grades = {m.id: (1 if m.id in CONNECTIONS else 2 if m.location == ME.location or i % 2 == 0 else 3)
              for i, m in enumerate(MEMBERS)}
    return {
        "config": {},
        "router": {"location": {"pathname": "/", "search": ""}},
        "user": {"id": ME.id, "name": ME.name, "headline": ME.headline},
        "contactList": list(CONNECTIONS),
        "connectionGrades": grades,
        "followedCompanies": {},
        "searchHistory": [],
        "feedPosts": posts,
        "ui": {"feed": {"postDynamicData": {p["id"]: dict(p) for p in posts}},
               "messaging": {"chatroomData": chats, "selectedChat": None}},
        "events": {"attendance": {}},
    }


def clean_text(raw: Any, limit: int = MAX_TEXT) -> str:
    return str(raw or "").strip()[:limit]


# --- search ---------------------------------------------------------------------------------------

def record_search(state: dict[str, Any], term: str, kind: str) -> None:
    """A search run from the search box joins the history (not again when only a filter changes)."""
    history = state["searchHistory"]
    if term and not (history and history[-1] == {"searchTerm": term, "type": kind}):
        history.append({"searchTerm": term, "type": kind})


def _words(text: str) -> list[str]:
    return [w for w in text.lower().replace(",", " ").split() if w]


def search_people(term: str, location: str = "", industry: str = "") -> list[Member]:
    words = _words(term)
    found = []
    for m in MEMBERS:
        if (location and m.location != location) or (industry and m.industry != industry):
            continue
        hay = f"{m.name} {m.headline} {m.industry} {m.location}".lower()
        if not words or all(w in hay or (w == "nyc" and m.location.startswith("New York")) for w in words):
            found.append(m)
    return found


def search_companies(term: str) -> list:
    words = _words(term)
    return [c for c in COMPANY_BY_ID.values()
            if not words or all(w in f"{c.name} {c.industry} {c.location}".lower() for w in words)]


# --- network ----------------------------------------------------------------------------------------

def is_connected(state: dict[str, Any], member_id: str) -> bool:
    return member_id in state["contactList"]


def connect(state: dict[str, Any], member_id: str) -> bool:
    """Connect (accepted at once, as in REAL's clone): the contact list, the grade and a new conversation."""
    member = MEMBER_BY_ID.get(member_id)
    if member is None or member.id == ME.id or is_connected(state, member_id):
        return False
    state["contactList"].append(member.id)
    state["connectionGrades"][member.id] = 1
    chats = state["ui"]["messaging"]["chatroomData"]
    if member.id in chats:
        room = chats[member.id]
        room["messages"].extend(_connection_messages(member))
        room["lastMessage"], room["lastMessageAuthorId"] = room["messages"][-1]["message"], member.id
    else:
        chats[member.id] = _chatroom(member, _connection_messages(member))
    return True


def follow(state: dict[str, Any], company_id: str, on: bool) -> bool:
    if company_id not in COMPANY_BY_ID:
        return False
    state["followedCompanies"][company_id] = on
    return True


def attend(state: dict[str, Any], event_id: str) -> bool:
    if event_id not in EVENT_BY_ID:
        return False
    state["events"]["attendance"][event_id] = True
    return True


# --- messaging --------------------------------------------------------------------------------------

def open_chat(state: dict[str, Any], member_id: str) -> Member | None:
    member = MEMBER_BY_ID.get(member_id)
    if member is None or member.id == ME.id:
        return None
    state["ui"]["messaging"]["selectedChat"] = member.as_participant()
    return member


def _append(state: dict[str, Any], member: Member, message: dict[str, Any]) -> None:
    chats = state["ui"]["messaging"]["chatroomData"]
    room = chats.get(member.id)
    if room is None:
        room = chats[member.id] = _chatroom(member, [])
    message["id"] = f"{member.id}-{len(room['messages']) + 1}"
    room["messages"].append(message)
    room["lastMessage"] = message["message"]
    room["lastMessageAuthorId"] = ME.id


def send_message(state: dict[str, Any], member_id: str, text: str) -> bool:
    member = MEMBER_BY_ID.get(member_id)
    text = clean_text(text)
    if member is None or member.id == ME.id or not text:
        return False
    _append(state, member, {"id": "", "authorId": ME.id, "message": text, "type": "text"})
    return True


# --- posts --------------------------------------------------------------------------------------

def create_post(state: dict[str, Any], text: str) -> str | None:
    text = clean_text(text)
    if not text:
        return None
    post_id = f"post-{len(state['feedPosts']) + 1}"
    post = _post(post_id, ME.id, text, 0, kind="self-post")
    state["feedPosts"].append(post)
    state["ui"]["feed"]["postDynamicData"][post_id] = dict(post)
    return post_id


def share_post(state: dict[str, Any], post_id: str, member_ids: list[str]) -> int:
    """Send a post to connections: each conversation gets a post message pointing at it."""
    post = state["ui"]["feed"]["postDynamicData"].get(post_id)
    if post is None:
        return 0
    sent = 0
    for mid in dict.fromkeys(member_ids):
        member = MEMBER_BY_ID.get(mid)
        if member is None or not is_connected(state, mid):
            continue
        _append(state, member, {"id": "", "authorId": ME.id, "message": "Shared a post", "type": "post",
                                "postData": {"id": post_id, "authorId": post["authorId"]}})
        sent += 1
    return sent


def posts_newest_first(state: dict[str, Any]) -> list[dict[str, Any]]:
    data = state["ui"]["feed"]["postDynamicData"]
    return [data.get(p["id"], p) for p in reversed(state["feedPosts"])]
