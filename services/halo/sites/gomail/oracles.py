"""Oracles (UI-only solutions) and plausible wrong attempts for the 21 REAL v2 GoMail tasks.

Targets name elements the way the AXTree shows them: toolbar buttons by aria-label, rows by the
"Select: <sender>, <subject>" checkbox, conversations by their row link text.
"""

from __future__ import annotations

from halo.sites.oracle import Click, FillIn, OracleStep, Target

SEARCH = Target("searchbox", "Search mail")
SELECT_PAGE = Target("checkbox", "Select all conversations on this page")
DELETE = Target("button", "Delete")          # the toolbar's comes first in the page
ARCHIVE = Target("button", "Archive")
SEND = Target("button", "Send")


def search(text: str) -> OracleStep:
    return FillIn(SEARCH, text, enter=True)


def select_row(subject: str) -> OracleStep:
    return Click(Target("checkbox", contains=subject))


def open_row(text: str) -> OracleStep:
    return Click(Target("link", contains=text))


def trash_search_results(text: str) -> list[OracleStep]:
    return [search(text), Click(SELECT_PAGE), Click(DELETE)]


def compose(to: str, subject: str, body: str, cc: str = "") -> list[OracleStep]:
    steps: list[OracleStep] = [Click(Target("link", "Compose")), FillIn(Target("textbox", "To recipients"), to)]
    if cc:
        steps += [Click(Target("button", "Cc")), FillIn(Target("textbox", "Cc recipients"), cc)]
    return steps + [
        FillIn(Target("textbox", "Subject"), subject),
        FillIn(Target("textbox", "Message Body"), body),
        Click(SEND),
    ]


def reply_to(sender: str, body: str) -> list[OracleStep]:
    return [open_row(sender), Click(Target("link", "Reply")), FillIn(Target("textbox", "Message Body"), body), Click(SEND)]


def snooze_results_until(text: str, day: str) -> list[OracleStep]:
    return [
        search(text), Click(SELECT_PAGE), Click(Target("button", "Snooze")),
        Click(Target("menuitem", "Select date and time")), FillIn(Target("textbox", "Snooze date"), day),
        Click(Target("button", "Save")),
    ]


TODAY_SUBJECTS = ("Can we move our 1:1?", "Draft press release for review", "Your Thursday morning trip with Uber")
OLD_SUBJECTS = ("Apartment lease documents", "The recipe you asked for", "Your RSVP is confirmed",
                "Spring marathon training plan", "Notification: Dentist appointment")

ORACLES: dict[str, list[OracleStep]] = {
    "gomail-1": [Click(Target("button", "More email options")), Click(Target("menuitem", "Mark all as read")),
                 *trash_search_results("amazon")],
    "gomail-2": [*trash_search_results("notification"), *trash_search_results("uber")],
    "gomail-4": compose("Alexa Richardson", "Files", "Hi Alexa,\n\nPlease let me know when the files come in.\n\nThanks,\nSam"),
    "gomail-5": [Click(Target("link", "Starred")), Click(SELECT_PAGE), Click(DELETE),
                 *compose("alexa.richardson@example.com", "Work permit signature",
                          "Hi Alexa,\n\nCould you please sign my work permit this week?\n\nThanks,\nSam")],
    "gomail-7": compose("Ashley Campbell", "Team dinner", "Hi Ashley,\n\nAre you coming to the team dinner on Friday?\n\nSam"),
    "gomail-8": compose("Kevin Moore", "Atlas project", "Hi Kevin,\n\nCould you send me the project details for Atlas?\n\nThanks,\nSam"),
    "gomail-9": compose("Barbara Thomas", "Project plan", "Hi Barbara,\n\nCan we go over the project plan together this week?\n\nSam"),
    "gomail-11": [Click(Target("link", "Older")), *(select_row(s) for s in OLD_SUBJECTS), Click(DELETE)],
    "gomail-12": compose("Charles", "New clients?", "Hi Charles,\n\nHave you found any new clients lately?\n\nSam"),
    "gomail-13": compose("Carol Adams", "Meeting time change",
                         "Hi Carol,\n\nThere has been a time change for the meeting: it is now moved to 8:30 AM.\n\nSam"),
    "gomail-14": [Click(SELECT_PAGE), Click(DELETE)],
    "gomail-15": compose("Danielle Harris", "System update launched",
                         "Hi Danielle,\n\nThe new system update has been launched.\n\nBest,\nSam"),
    "gomail-16": [Click(Target("button", "Create new label")),
                  FillIn(Target("textbox", "Please enter a new label name:"), "Support Emails"),
                  Click(Target("button", "Create"))],
    "gomail-17": [*(select_row(s) for s in TODAY_SUBJECTS), Click(ARCHIVE)],
    "gomail-18": compose("brian.king@example.com", "Meeting notes",
                         "Hi Brian,\n\nCould you please send me the meeting notes?\n\nThanks,\nSam"),
    "gomail-19": compose("Angela White", "FTA dates", "Hi Angela,\n\nWhen do you go on FTA?\n\nThanks,\nSam"),
    "gomail-20": [Click(SELECT_PAGE), Click(Target("button", "Select all 56 conversations in Inbox")), Click(DELETE)],
    "gomail-21": snooze_results_until("alerts", "2024-07-25"),
    "gomail-23": [*reply_to("Jane Smith", "Hi Jane,\n\nThe marketing numbers look right to me.\n\nSam"),
                  *trash_search_results("support")],
    "gomail-24": [open_row("John Doe"), Click(DELETE)],
    "gomail-26": [*trash_search_results("noreply"), *trash_search_results("no-reply")],
}

WRONG_ATTEMPTS: dict[str, list[OracleStep]] = {
    # marks everything read but forgets the Amazon emails
    "gomail-1": [Click(Target("button", "More email options")), Click(Target("menuitem", "Mark all as read"))],
    # clears Uber but not the notifications
    "gomail-2": trash_search_results("uber"),
    # a near-namesake
    "gomail-4": compose("Alexa Richards", "Files", "Hi Alexa,\n\nPlease let me know when the files come in.\n\nSam"),
    # clears the starred mail, but the email never says "work permit" in its subject
    "gomail-5": [Click(Target("link", "Starred")), Click(SELECT_PAGE), Click(DELETE),
                 *compose("Alexa Richardson", "Signature needed", "Hi Alexa,\n\nCould you sign my papers?\n\nSam")],
    "gomail-7": compose("Ashley Carter", "Team dinner", "Hi Ashley,\n\nAre you coming to the team dinner on Friday?\n\nSam"),
    # copies someone else in (the task wants Kevin only)
    "gomail-8": compose("Kevin Moore", "Atlas project", "Hi Kevin,\n\nCould you send me the project details?\n\nSam",
                        cc="Barbara Thomas"),
    # about the project, but not its plan
    "gomail-9": compose("Barbara Thomas", "Atlas timeline", "Hi Barbara,\n\nDo you have the Atlas timeline?\n\nSam"),
    # deletes the oldest-looking email that is in fact less than two months old (May 24)
    "gomail-11": [Click(Target("link", "Older")), select_row("Farewell lunch for Tom"), Click(DELETE)],
    # forgets the subject
    "gomail-12": compose("Charles Davis", "", "Hi Charles,\n\nHave you found any new clients lately?\n\nSam"),
    "gomail-13": compose("Carol Adams", "Meeting time change", "Hi Carol,\n\nThe meeting is now at 9:30 AM.\n\nSam"),
    # clears every conversation, not just the visible page
    "gomail-14": [Click(SELECT_PAGE), Click(Target("button", "Select all 56 conversations in Inbox")), Click(DELETE)],
    # writes the email but closes it as a draft instead of sending it
    "gomail-15": [Click(Target("link", "Compose")), FillIn(Target("textbox", "To recipients"), "Danielle Harris"),
                  FillIn(Target("textbox", "Subject"), "System update launched"),
                  FillIn(Target("textbox", "Message Body"), "Hi Danielle, the new system update has been launched."),
                  Click(Target("button", "Save & close"))],
    "gomail-16": [Click(Target("button", "Create new label")),
                  FillIn(Target("textbox", "Please enter a new label name:"), "Support"), Click(Target("button", "Create"))],
    # misses the Uber receipt that also came in today
    "gomail-17": [*(select_row(s) for s in TODAY_SUBJECTS[:2]), Click(ARCHIVE)],
    "gomail-18": compose("Brian Kim", "Meeting notes", "Hi Brian,\n\nCould you please send me the meeting notes?\n\nSam"),
    "gomail-19": compose("Angela Wright", "FTA dates", "Hi Angela,\n\nWhen do you go on FTA?\n\nSam"),
    # archives everything instead of moving it to the trash
    "gomail-20": [Click(SELECT_PAGE), Click(Target("button", "Select all 56 conversations in Inbox")), Click(ARCHIVE)],
    # deletes the alerts instead of snoozing them
    "gomail-21": trash_search_results("alerts"),
    # writes Jane a new email instead of replying to hers
    "gomail-23": [*compose("Jane Smith", "Budget", "Hi Jane,\n\nThe marketing numbers look right to me.\n\nSam"),
                  *trash_search_results("support")],
    # archives instead of deleting
    "gomail-24": [open_row("John Doe"), Click(ARCHIVE)],
    "gomail-26": [search("noreply"), Click(SELECT_PAGE), Click(ARCHIVE), search("no-reply"), Click(SELECT_PAGE), Click(ARCHIVE)],
}
