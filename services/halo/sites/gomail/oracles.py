"""Oracles (UI-only solutions) and plausible wrong attempts for the 21 REAL v2 GoMail tasks.

Targets name elements the way the AXTree shows them: toolbar buttons by aria-label, rows by the
"Select: <sender>, <subject>" checkbox, conversations by their row link text.
"""

from __future__ import annotations

from halo.agent import actions as A
from halo.sites.oracle import OracleStep, Target, WrongAttempts

SEARCH = Target("searchbox", "Search mail")
SELECT_PAGE = Target("checkbox", "Select all conversations on this page")
DELETE = Target("button", "Delete")          # the toolbar's comes first in the page
ARCHIVE = Target("button", "Archive")
SEND = Target("button", "Send")


def search(text: str) -> list[OracleStep]:
    return [A.Fill(SEARCH, text), A.KeyPress("Enter")]


def select_row(subject: str) -> OracleStep:
    return A.ClickElement(Target("checkbox", contains=subject))


def open_row(text: str) -> OracleStep:
    return A.ClickElement(Target("link", contains=text))


def trash_search_results(text: str) -> list[OracleStep]:
    return [*search(text), A.ClickElement(SELECT_PAGE), A.ClickElement(DELETE)]


def compose(to: str, subject: str, body: str, cc: str = "") -> list[OracleStep]:
    steps: list[OracleStep] = [A.ClickElement(Target("link", "Compose")), A.Fill(Target("textbox", "To recipients"), to)]
    if cc:
        steps += [A.ClickElement(Target("button", "Cc")), A.Fill(Target("textbox", "Cc recipients"), cc)]
    return steps + [
        A.Fill(Target("textbox", "Subject"), subject),
        A.Fill(Target("textbox", "Message Body"), body),
        A.ClickElement(SEND),
    ]


def reply_to(sender: str, body: str) -> list[OracleStep]:
    return [open_row(sender), A.ClickElement(Target("link", "Reply")), A.Fill(Target("textbox", "Message Body"), body), A.ClickElement(SEND)]


def snooze_results_until(text: str, day: str) -> list[OracleStep]:
    return [
        *search(text), A.ClickElement(SELECT_PAGE), A.ClickElement(Target("button", "Snooze")),
        A.ClickElement(Target("menuitem", "Select date and time")), A.Fill(Target("textbox", "Snooze date"), day),
        A.ClickElement(Target("button", "Save")),
    ]


TODAY_SUBJECTS = ("Can we move our 1:1?", "Draft press release for review", "Your Thursday morning trip with Uber")
OLD_SUBJECTS = ("Apartment lease documents", "The recipe you asked for", "Your RSVP is confirmed",
                "Spring marathon training plan", "Notification: Dentist appointment")

ORACLES: dict[str, list[OracleStep]] = {
    "gomail-1": [A.ClickElement(Target("button", "More email options")), A.ClickElement(Target("menuitem", "Mark all as read")),
                 *trash_search_results("amazon")],
    "gomail-2": [*trash_search_results("notification"), *trash_search_results("uber")],
    "gomail-4": compose("Alexa Richardson", "Files", "Hi Alexa,\n\nPlease let me know when the files come in.\n\nThanks,\nSam"),
    "gomail-5": [A.ClickElement(Target("link", "Starred")), A.ClickElement(SELECT_PAGE), A.ClickElement(DELETE),
                 *compose("alexa.richardson@example.com", "Work permit signature",
                          "Hi Alexa,\n\nCould you please sign my work permit this week?\n\nThanks,\nSam")],
    "gomail-7": compose("Ashley Campbell", "Team dinner", "Hi Ashley,\n\nAre you coming to the team dinner on Friday?\n\nSam"),
    "gomail-8": compose("Kevin Moore", "Atlas project", "Hi Kevin,\n\nCould you send me the project details for Atlas?\n\nThanks,\nSam"),
    "gomail-9": compose("Barbara Thomas", "Project plan", "Hi Barbara,\n\nCan we go over the project plan together this week?\n\nSam"),
    "gomail-11": [A.ClickElement(Target("link", "Older")), *(select_row(s) for s in OLD_SUBJECTS), A.ClickElement(DELETE)],
    "gomail-12": compose("Charles", "New clients?", "Hi Charles,\n\nHave you found any new clients lately?\n\nSam"),
    "gomail-13": compose("Carol Adams", "Meeting time change",
                         "Hi Carol,\n\nThere has been a time change for the meeting: it is now moved to 8:30 AM.\n\nSam"),
    "gomail-14": [A.ClickElement(SELECT_PAGE), A.ClickElement(DELETE)],
    "gomail-15": compose("Danielle Harris", "System update launched",
                         "Hi Danielle,\n\nThe new system update has been launched.\n\nBest,\nSam"),
    "gomail-16": [A.ClickElement(Target("button", "Create new label")),
                  A.Fill(Target("textbox", "Please enter a new label name:"), "Support Emails"),
                  A.ClickElement(Target("button", "Create"))],
    "gomail-17": [*(select_row(s) for s in TODAY_SUBJECTS), A.ClickElement(ARCHIVE)],
    "gomail-18": compose("brian.king@example.com", "Meeting notes",
                         "Hi Brian,\n\nCould you please send me the meeting notes?\n\nThanks,\nSam"),
    "gomail-19": compose("Angela White", "FTA dates", "Hi Angela,\n\nWhen do you go on FTA?\n\nThanks,\nSam"),
    "gomail-20": [A.ClickElement(SELECT_PAGE), A.ClickElement(Target("button", "Select all 56 conversations in Inbox")), A.ClickElement(DELETE)],
    "gomail-21": snooze_results_until("alerts", "2024-07-25"),
    "gomail-23": [*reply_to("Jane Smith", "Hi Jane,\n\nThe marketing numbers look right to me.\n\nSam"),
                  *trash_search_results("support")],
    "gomail-24": [open_row("John Doe"), A.ClickElement(DELETE)],
    "gomail-26": [*trash_search_results("noreply"), *trash_search_results("no-reply")],
}

WRONG_ATTEMPTS: dict[str, WrongAttempts] = {
    "gomail-1": {'marks everything read but forgets the Amazon emails': [A.ClickElement(Target("button", "More email options")), A.ClickElement(Target("menuitem", "Mark all as read"))]},
    "gomail-2": {'clears Uber but not the notifications': trash_search_results("uber")},
    "gomail-4": {'a near-namesake': compose("Alexa Richards", "Files", "Hi Alexa,\n\nPlease let me know when the files come in.\n\nSam")},
    "gomail-5": {'clears the starred mail, but the email never says "work permit" in its subject': [A.ClickElement(Target("link", "Starred")), A.ClickElement(SELECT_PAGE), A.ClickElement(DELETE),
                 *compose("Alexa Richardson", "Signature needed", "Hi Alexa,\n\nCould you sign my papers?\n\nSam")]},
    "gomail-7": {'a near-namesake (Ashley Carter)': compose("Ashley Carter", "Team dinner", "Hi Ashley,\n\nAre you coming to the team dinner on Friday?\n\nSam")},
    "gomail-8": {'copies someone else in (the task wants Kevin only)': compose("Kevin Moore", "Atlas project", "Hi Kevin,\n\nCould you send me the project details?\n\nSam",
                        cc="Barbara Thomas")},
    "gomail-9": {'about the project, but not its plan': compose("Barbara Thomas", "Atlas timeline", "Hi Barbara,\n\nDo you have the Atlas timeline?\n\nSam")},
    "gomail-11": {'deletes the oldest-looking email that is in fact less than two months old (May 24)': [A.ClickElement(Target("link", "Older")), select_row("Farewell lunch for Tom"), A.ClickElement(DELETE)]},
    "gomail-12": {'forgets the subject': compose("Charles Davis", "", "Hi Charles,\n\nHave you found any new clients lately?\n\nSam")},
    "gomail-13": {'the wrong new time (9:30 AM)': compose("Carol Adams", "Meeting time change", "Hi Carol,\n\nThe meeting is now at 9:30 AM.\n\nSam")},
    "gomail-14": {'clears every conversation, not just the visible page': [A.ClickElement(SELECT_PAGE), A.ClickElement(Target("button", "Select all 56 conversations in Inbox")), A.ClickElement(DELETE)]},
    "gomail-15": {'writes the email but closes it as a draft instead of sending it': [A.ClickElement(Target("link", "Compose")), A.Fill(Target("textbox", "To recipients"), "Danielle Harris"),
                  A.Fill(Target("textbox", "Subject"), "System update launched"),
                  A.Fill(Target("textbox", "Message Body"), "Hi Danielle, the new system update has been launched."),
                  A.ClickElement(Target("button", "Save & close"))]},
    "gomail-16": {'a shorter label name': [A.ClickElement(Target("button", "Create new label")),
                  A.Fill(Target("textbox", "Please enter a new label name:"), "Support"), A.ClickElement(Target("button", "Create"))]},
    "gomail-17": {'misses the Uber receipt that also came in today': [*(select_row(s) for s in TODAY_SUBJECTS[:2]), A.ClickElement(ARCHIVE)]},
    "gomail-18": {'a near-namesake (Brian Kim)': compose("Brian Kim", "Meeting notes", "Hi Brian,\n\nCould you please send me the meeting notes?\n\nSam")},
    "gomail-19": {'a near-namesake (Angela Wright)': compose("Angela Wright", "FTA dates", "Hi Angela,\n\nWhen do you go on FTA?\n\nSam")},
    "gomail-20": {'archives everything instead of moving it to the trash': [A.ClickElement(SELECT_PAGE), A.ClickElement(Target("button", "Select all 56 conversations in Inbox")), A.ClickElement(ARCHIVE)]},
    "gomail-21": {'deletes the alerts instead of snoozing them': trash_search_results("alerts")},
    "gomail-23": {'writes Jane a new email instead of replying to hers': [*compose("Jane Smith", "Budget", "Hi Jane,\n\nThe marketing numbers look right to me.\n\nSam"),
                  *trash_search_results("support")]},
    "gomail-24": {'archives instead of deleting': [open_row("John Doe"), A.ClickElement(ARCHIVE)]},
    "gomail-26": {'archives instead of deleting': [*search("noreply"), A.ClickElement(SELECT_PAGE), A.ClickElement(ARCHIVE), *search("no-reply"), A.ClickElement(SELECT_PAGE), A.ClickElement(ARCHIVE)]},
}
