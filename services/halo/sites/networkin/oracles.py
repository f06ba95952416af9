"""Oracles (UI-only solutions) and plausible wrong attempts for the 10 REAL v2 NetworkIn tasks.

Targets name elements the way the AXTree shows them: the header's "Search" box, people by their
name links, "Invite <name> to connect" / "Follow <company>" buttons in lists, the profile's
Connect button and Message link, the composer's "What do you want to talk about?" box, a post's
"Send post by <author>" link and the send page's checkboxes, the conversation's "Write a message…"
box. Each wrong attempt is a mistake an agent could make and must score 0 with agisdk's script.
"""

from __future__ import annotations

from halo.agent import actions as A
from halo.sites.oracle import OracleStep, Target, WrongAttempts

SEND = A.ClickElement(Target("button", "Send"))


def search(term: str) -> list[OracleStep]:
    return [A.Fill(Target("searchbox", "Search"), term), A.KeyPress("Enter")]


def open_link(name: str) -> OracleStep:
    return A.ClickElement(Target("link", name))


def nav(name: str) -> OracleStep:
    return A.ClickElement(Target("link", contains=name))


def message(text: str) -> list[OracleStep]:
    """From an open profile: Message, type, Send."""
    return [open_link("Message"), A.Fill(Target("textbox", "Write a message…"), text), SEND]


def invite(name: str) -> OracleStep:
    return A.ClickElement(Target("button", f"Invite {name} to connect"))


def follow(company: str) -> OracleStep:
    return A.ClickElement(Target("button", f"Follow {company}"))


def post(text: str) -> list[OracleStep]:
    return [A.Fill(Target("textbox", "What do you want to talk about?"), text), A.ClickElement(Target("button", "Post"))]


def send_my_post(*names: str) -> list[OracleStep]:
    """Send the newest post (Div's own, at the top of the feed) to these connections."""
    return [A.ClickElement(Target("link", "Send post by Div Garg")),
            *(A.ClickElement(Target("checkbox", contains=n)) for n in names), SEND]


EVENT_POST = "Hosting a networking event for AI builders next Thursday in San Francisco! DM me if you're interested."
INTERNSHIP_POST = "I just finished my internship at AGI Inc! Grateful to the team for an amazing summer."
SIDE_PROJECT = "Hi {}, would you be interested in working on a side project with me?"
MY_NETWORK = nav("My Network")
EVENTS = nav("Events")

ORACLES: dict[str, list[OracleStep]] = {
    # popular companies on My Network, Microsoft among them
    "networkin-1": [MY_NETWORK, follow("Microsoft"), follow("Google"), follow("OpenAI")],
    # a software engineer found by search (a connection), asked about a side project
    "networkin-5": [*search("software engineer"), open_link("Alex Chen"), *message(SIDE_PROJECT.format("Alex"))],
    # a New York tech person, found by search, invited to the project
    "networkin-6": [*search("New York tech"), open_link("Ethan Brooks"),
                    *message("Hi Ethan, I'm starting a new project in AI agents. Would you like to join my new project?")],
    # three people you may know
    "networkin-10": [MY_NETWORK, invite("Olivia Martinez"), invite("Ethan Brooks"), invite("Maya Rodriguez")],
    # a post about the networking event that asks for DMs, sent to two connections
    "networkin-11": [*post(EVENT_POST), *send_my_post("Alex Chen", "Priya Patel")],
    "networkin-13": [*post("Kicking off my summer internship at AGI Inc this week, building browser agents. Excited for the summer!")],
    "networkin-19": [*post(INTERNSHIP_POST)],
    # an event worth attending: the AI Agents Summit
    "networkin-25": [EVENTS, open_link("AI Agents Summit 2024"), A.ClickElement(Target("button", "Attend"))],
    # search a software engineer, then ask for advice
    "networkin-26": [*search("Software Engineer"), open_link("Ryan Clark"),
                     *message("Hi Ryan, could I get your advice on growing as a software engineer?")],
    "networkin-27": [*search("Olivia Martinez"), invite("Olivia Martinez")],
}

WRONG_ATTEMPTS: dict[str, WrongAttempts] = {
    "networkin-1": {
        "follows Microsoft only": [MY_NETWORK, follow("Microsoft")],
        "follows popular companies but not Microsoft": [MY_NETWORK, follow("Google"), follow("Apple")],
    },
    "networkin-5": {
        "asks a data scientist": [*search("data scientist"), open_link("Emily Zhang"), *message(SIDE_PROJECT.format("Emily"))],
        "a software engineer, but no side project": [*search("software engineer"), open_link("Alex Chen"), *message("Hi Alex, how are you?")],
    },
    "networkin-6": {
        "invites a connection without looking for New York tech people": [
            nav("Messaging"), nav("Alex Chen"), A.Fill(Target("textbox", "Write a message…"), "Would you like to join my new project?"), SEND],
        "finds a New York engineer but sends nothing": [*search("New York tech"), open_link("Ethan Brooks")],
    },
    "networkin-10": {"connects with two people": [MY_NETWORK, invite("Olivia Martinez"), invite("Ethan Brooks")]},
    "networkin-11": {
        "sends the post to one connection": [*post(EVENT_POST), *send_my_post("Alex Chen")],
        "the post does not ask for DMs": [*post("Hosting a networking event for AI builders next Thursday in San Francisco!"),
                                          *send_my_post("Alex Chen", "Priya Patel")],
    },
    "networkin-13": {"no 'summer' in the post": [*post("Kicking off my internship at AGI Inc this week, building browser agents.")]},
    "networkin-19": {
        "posts it twice": [*post(INTERNSHIP_POST), *post(INTERNSHIP_POST)],
        "names Google": [*post("I just finished my internship at Google! Grateful to the team.")],
    },
    "networkin-25": {
        "views the event without attending": [EVENTS, open_link("AI Agents Summit 2024")],
        "follows the organizer instead": [MY_NETWORK, follow("AGI Inc")],
    },
    "networkin-26": {"searches data scientists and asks one for advice": [
        *search("data scientist"), open_link("Lisa Wong"), *message("Hi Lisa, could I get your advice on a career in data science?")]},
    "networkin-27": {"connects with Olivia Martin": [*search("Olivia Martin"), invite("Olivia Martin")]},
}
