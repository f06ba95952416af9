"""Oracles (UI-only solutions) and plausible wrong attempts for the 12 REAL v2 TopWork tasks.

Targets name elements the way the AXTree shows them: the header's "Search talent" box, freelancers
by their name links, the profile's "Hire <first name>" / "Invite to job" / "Message" links, the
"Save <name>" buttons, the job list's "Remove <title>" buttons, the post-a-job form's labelled
fields and radios, the conversations by name and the reply box. Each wrong attempt is a mistake an
agent could make and must score 0 with agisdk's eval script.
"""

from __future__ import annotations

from halo.agent import actions as A
from halo.sites.oracle import OracleStep, Target, WrongAttempts

FITNESS_JOB = "Full Stack Developer for Fitness App MVP"
PYTHON_JOB = "Python Backend Developer (FastAPI)"


def search(term: str) -> list[OracleStep]:
    return [A.Fill(Target("searchbox", "Search talent"), term), A.KeyPress("Enter")]


def open_link(name: str) -> OracleStep:
    return A.ClickElement(Target("link", name))


def nav(name: str) -> OracleStep:
    return A.ClickElement(Target("link", contains=name))


def invite(job: str, message: str | None = None) -> list[OracleStep]:
    """From an open profile: Invite to job, pick the job, keep (or rewrite) the message, send."""
    steps: list[OracleStep] = [open_link("Invite to job"), A.SelectOption(Target("combobox", "Choose a job"), (job,))]
    if message is not None:
        steps.append(A.Fill(Target("textbox", "Message"), message))
    return steps + [A.ClickElement(Target("button", "Send invitation"))]


def offer(first_name: str, title: str, message: str = "", rehire: bool = False) -> list[OracleStep]:
    """The offer form (opened from the profile's Hire link unless already there by Rehire)."""
    steps: list[OracleStep] = [] if rehire else [open_link(f"Hire {first_name}")]
    steps.append(A.Fill(Target("textbox", "Contract title"), title))
    if message:
        steps.append(A.Fill(Target("textbox", f"Message to {first_name}"), message))
    return steps + [A.ClickElement(Target("button", "Send offer"))]


def reply(text: str) -> list[OracleStep]:
    return [A.Fill(Target("textbox", "Type a message"), text), A.ClickElement(Target("button", "Send"))]


def message_from_profile(text: str) -> list[OracleStep]:
    return [open_link("Message"), *reply(text)]


def post_job(title: str, description: str, category: str, size: str, duration: str, level: str, hire: str,
             rate_from: int, rate_to: int, draft: bool = False) -> list[OracleStep]:
    return [
        nav("Post a job"),
        A.Fill(Target("textbox", "Job title"), title),
        A.Fill(Target("textbox", "Description"), description),
        A.SelectOption(Target("combobox", "Category"), (category,)),
        A.ClickElement(Target("radio", size)),
        A.ClickElement(Target("radio", duration)),
        A.ClickElement(Target("radio", contains=level)),
        A.ClickElement(Target("radio", contains=hire)),
        A.Fill(Target("spinbutton", "Hourly rate from"), str(rate_from)),
        A.Fill(Target("spinbutton", "Hourly rate to"), str(rate_to)),
        A.ClickElement(Target("button", "Save as draft" if draft else "Post this job")),
    ]


def remove(title: str) -> OracleStep:
    return A.ClickElement(Target("button", f"Remove {title}"))


def save(name: str) -> OracleStep:
    return A.ClickElement(Target("button", f"Save {name}"))


FITNESS_INVITE = "Hi Carlos, are you interested in building a fitness app with me? I'd like to invite you to my job."
FINANCE_TEXT = "We need a financial analyst to build monthly forecasts and variance reports for our agency."
FINANCE = ("Financial Analyst", FINANCE_TEXT, "Accounting & Consulting", "Medium", "3 to 6 months", "Intermediate", "No, not at this time")
ANNOTATOR = ("Data Annotator", "Verita AI is looking for a data annotator to label images and text for our training data.",
             "Data Science & Analytics", "Small", "1 to 3 months", "Entry")
SET_UP = "Hi Alex, I'm happy to help you get set up! Let me know what you need."
REHIRE_KEVIN = [nav("My hires"), A.ClickElement(Target("link", "Rehire Kevin Park"))]
TIME_FRAME_CHATS = ("Mike Chen", "Olivia Brown", "Daniel White")

ORACLES: dict[str, list[OracleStep]] = {
    # a backend developer, invited to the fitness-app job with a message about it
    "topwork-2": [*search("backend"), open_link("Carlos Mendez"), *invite(FITNESS_JOB, FITNESS_INVITE)],
    # a Python developer who is available, invited to the Python job with the standard invitation
    "topwork-3": [*search("python"), open_link("Ananya Iyer"), *invite(PYTHON_JOB)],
    "topwork-4": [*search("full stack"), open_link("Jason Miller"), *invite(FITNESS_JOB)],
    # hire: an offer with a message
    "topwork-7": [*search("react"), open_link("Jason Miller"),
                  *offer("Jason", "React Developer for Fitness App", "Hi Jason, I'd love to hire you to build our fitness app's front end.")],
    # remove both data job posts
    "topwork-8": [remove("Data Analyst for Sales Dashboard"), remove("Machine Learning Engineer for Churn Prediction")],
    "topwork-9": post_job(*FINANCE, 45, 65),
    "topwork-10": [nav("Messages"), nav("Alex Rodriguez"), *reply(SET_UP)],
    "topwork-11": [*REHIRE_KEVIN, *offer("Kevin", "Project Lead", "Would love to have you lead our next launch.", rehire=True)],
    # every unread chat asks about a time frame: the answer is tomorrow
    "topwork-12": [nav("Messages"), nav("Mike Chen"), *reply("I'd like the first three posts by tomorrow."),
                   nav("Olivia Brown"), *reply("Tomorrow works, thank you!"), nav("Daniel White"), *reply("The deadline is tomorrow.")],
    "topwork-13": post_job(*ANNOTATOR, "No, not at this time", 20, 25),
    "topwork-14": [*search("Ashley"), save("Ashley Campbell"), *search("Brandon"), save("Brandon Martinez")],
    "topwork-21": [*search("developer"), open_link("Jason Miller"), *message_from_profile("Hi Jason, are you free for a quick call this week?")],
}

WRONG_ATTEMPTS: dict[str, WrongAttempts] = {
    "topwork-2": {
        "invites a UI/UX designer": [*search("designer"), open_link("Emily Ross"), *invite(FITNESS_JOB, FITNESS_INVITE.replace("Carlos", "Emily"))],
        "asks only whether they are free": [*search("backend"), open_link("Carlos Mendez"), *invite(FITNESS_JOB, "Hi Carlos, are you free next week?")],
    },
    "topwork-3": {"invites a UI/UX designer": [*search("designer"), open_link("Emily Ross"), *invite(PYTHON_JOB)]},
    "topwork-4": {
        "invites a UI/UX designer": [*search("designer"), open_link("Emily Ross"), *invite(FITNESS_JOB)],
        "invites two developers": [*search("full stack"), open_link("Jason Miller"), *invite(FITNESS_JOB),
                                   *search("full stack"), open_link("Priya Sharma"), *invite(FITNESS_JOB)],
    },
    "topwork-7": {"says 'you're hired' without an offer": [*search("react"), open_link("Jason Miller"),
                                                          *message_from_profile("You're hired! Looking forward to working with you.")]},
    "topwork-8": {"removes the logo design job": [remove("Logo Design for Artisan Bakery")]},
    "topwork-9": {
        "$40-65": post_job(*FINANCE, 40, 65),
        "saved as a draft": post_job(*FINANCE, 45, 65, draft=True),
        "an Accountant post": post_job("Accountant", *FINANCE[1:], 45, 65),
    },
    "topwork-10": {
        "replies in the wrong chat": [nav("Messages"), nav("Mike Chen"), *reply(SET_UP)],
        "replies without offering help": [nav("Messages"), nav("Alex Rodriguez"), *reply("Sounds good, talk soon.")],
    },
    "topwork-11": {
        "as Project Manager": [*REHIRE_KEVIN, *offer("Kevin", "Project Manager", rehire=True)],
        "rehires two people": [*REHIRE_KEVIN, *offer("Kevin", "Project Lead", rehire=True),
                               nav("My hires"), A.ClickElement(Target("link", "Rehire Lisa Wang")), *offer("Lisa", "Project Lead", rehire=True)],
    },
    "topwork-12": {
        "answers 'soon'": [nav("Messages"), nav("Mike Chen"), *reply("I'll get back to you soon."),
                           nav("Olivia Brown"), *reply("Soon, thanks!")],
        "opens the chats without replying": [nav("Messages"), nav("Mike Chen"), nav("Olivia Brown"), nav("Daniel White")],
    },
    "topwork-13": {
        "marks it contract-to-hire": post_job(*ANNOTATOR, "Yes, this could become full time", 20, 25),
        "$20-30": post_job(*ANNOTATOR, "No, not at this time", 20, 30),
    },
    "topwork-14": {
        "saves Ashley only": [*search("Ashley"), save("Ashley Campbell")],
        "saves Brandon Lee": [*search("Ashley"), save("Ashley Campbell"), *search("Brandon"), save("Brandon Lee")],
    },
    "topwork-21": {
        "opens the chat without writing": [*search("developer"), open_link("Jason Miller"), open_link("Message")],
        "thanks them for applying": [*search("developer"), open_link("Jason Miller"), *message_from_profile("Thanks for applying!")],
    },
}
