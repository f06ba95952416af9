"""GoMail's mailbox: the user, contacts, labels and the 56 inbox conversations (+3 sent).

The ids and groups are the ones agisdk's v2 eval scripts hard-code, so the scripts score this
replica unchanged:

    "Today" (gomail-17)               46, 47, 48 (dated TODAY, shown with a time)
    older than two months (gomail-11) 52, 53, 54, 55, 56 (before 2024-05-18)
    starred (gomail-5)                2, 6, 10, 14, 16, 21, 26, 28, 31, 37, 47, 49, 53
    no-reply senders (gomail-26)      3, 14, 34, 40, 50
    notification emails (gomail-2)    3, 4, 5, 6, 17, 36, 38, 56; Uber: 48
    John Doe (gomail-24)              1

and the counts they assume: 4 Amazon emails (gomail-1), 13 emails with "support" in the title
(gomail-23), 17 unread emails (REAL v1's gomail-1), 56 conversations in the Inbox of which a page
shows 50 (gomail-14, gomail-20), 3 "alerts" emails (gomail-21). `tests/sites/test_gomail.py`
checks that every keyword an agent would search for finds exactly its group.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime

#: The replica's clock: REAL's GoMail data is dated around this day (gomail-11 falls back to it).
TODAY = date(2024, 7, 18)
NOW = datetime(2024, 7, 18, 10, 30)


@dataclass(frozen=True)
class Person:
    name: str
    address: str


USER = Person("Sam Parker", "sam.parker@gomail.com")

#: The address book the compose form autocompletes from (near-namesakes make wrong recipients plausible).
CONTACTS: tuple[Person, ...] = (
    Person("Alexa Richardson", "alexa.richardson@example.com"),
    Person("Alexa Richards", "alexa.richards@example.com"),
    Person("Angela White", "angela.white@example.com"),
    Person("Angela Wright", "angela.wright@example.com"),
    Person("Ashley Campbell", "ashley.campbell@example.com"),
    Person("Ashley Carter", "ashley.carter@example.com"),
    Person("Barbara Thomas", "barbara.thomas@example.com"),
    Person("Brian King", "brian.king@example.com"),
    Person("Brian Kim", "brian.kim@example.com"),
    Person("Carol Adams", "carol.adams@example.com"),
    Person("Charles Davis", "charles.davis@example.com"),
    Person("Chris Taylor", "chris.taylor@example.com"),
    Person("Daniel Lee", "daniel.lee@example.com"),
    Person("Danielle Harris", "danielle.harris@example.com"),
    Person("David Wilson", "david.wilson@example.com"),
    Person("Emily Chen", "emily.chen@example.com"),
    Person("Jane Smith", "jane.smith@example.com"),
    Person("John Doe", "john.doe@example.com"),
    Person("Kevin Moore", "kevin.moore@example.com"),
    Person("Kevin Morgan", "kevin.morgan@example.com"),
    Person("Lisa Martinez", "lisa.martinez@example.com"),
    Person("Mark Evans", "mark.evans@example.com"),
    Person("Michael Brown", "michael.brown@example.com"),
    Person("Olivia Scott", "olivia.scott@example.com"),
    Person("Rachel Green", "rachel.green@example.com"),
    Person("Robert Johnson", "robert.johnson@example.com"),
    Person("Sarah Kim", "sarah.kim@example.com"),
)

#: settings.customLabels at the start (gomail-16 looks for an added {"label": "Support Emails"}).
LABELS: tuple[tuple[str, str, str], ...] = (
    ("label-1", "Work", "#4285f4"),
    ("label-2", "Personal", "#34a853"),
    ("label-3", "Receipts", "#fbbc04"),
    ("label-4", "Travel", "#ea4335"),
)


@dataclass(frozen=True)
class Seed:
    """One conversation of the initial mailbox (body paragraphs are separated by blank lines)."""

    id: int
    name: str
    address: str
    subject: str
    body: str
    day: str                  # YYYY-MM-DD
    time: str                 # HH:MM, 24h
    read: bool = True
    starred: bool = False
    labels: tuple[str, ...] = ()
    sent: bool = False        # sent by the user (then `address` is the recipient)
    to: tuple[str, ...] = field(default_factory=tuple)


S = Seed
INBOX: tuple[Seed, ...] = (
    S(1, "John Doe", "john.doe@example.com", "Lunch on Friday?",
      "Hi Sam,\n\nAre you free for lunch on Friday? There's a new ramen place two blocks from the office that I've "
      "been wanting to try. I can book a table for 12:30 if that works for you.\n\nCheers,\nJohn",
      "2024-07-16", "12:41", labels=("Personal",)),
    S(2, "Alexa Richardson", "alexa.richardson@example.com", "HR paperwork for your visa renewal",
      "Hi Sam,\n\nI've put together the checklist for your visa renewal. Once you have the forms filled in, send them "
      "over and I'll review everything before the filing deadline at the end of the month.\n\nBest,\nAlexa Richardson\n"
      "People Operations",
      "2024-07-12", "15:20", starred=True),
    S(3, "LinkedIn", "notifications-noreply@linkedin.com", "You appeared in 12 searches this week",
      "Sam, your profile is getting noticed.\n\nYou appeared in 12 searches this week. Recruiters from Stripe, Figma and "
      "3 other companies looked at your profile.\n\nSee all searches",
      "2024-07-15", "06:02", read=False),
    S(4, "Slack", "notification@slack.com", "Notification: 5 new messages in #design-team",
      "You have 5 new messages in #design-team from Emily Chen, Robert Johnson and 2 others.\n\n"
      "Emily Chen: the new icon set is in the shared folder, feedback welcome before Friday.\n\nOpen Slack",
      "2024-07-14", "18:33"),
    S(5, "Facebook", "notification@facebookmail.com", "You have 3 new notifications",
      "Hi Sam,\n\nYou have 3 new notifications: Rachel Green commented on your photo, Chris Taylor invited you to "
      "an event and Olivia Scott has a birthday today.\n\nSee what you missed",
      "2024-07-13", "09:15", read=False),
    S(6, "Asana", "notifications@asana.com", "Task assigned to you: Q3 roadmap review",
      "Mark Evans assigned a task to you in Product Planning.\n\nQ3 roadmap review\nDue: Jul 24\n\n"
      "\"Please go through the draft roadmap and flag anything that looks risky for the Q3 launch.\"",
      "2024-07-11", "11:05", starred=True, labels=("Work",)),
    S(7, "Maria Lopez", "maria.lopez@brightwave.io", "Customer Support Ticket #48213: Login issue",
      "Hello,\n\nSince this morning none of our staff can log in to the dashboard. The page keeps loading and then "
      "shows a blank screen. We tried two browsers and cleared the cache.\n\nCan your team look into it urgently?\n\n"
      "Maria Lopez\nBrightwave",
      "2024-07-17", "16:48", read=False),
    S(8, "Jane Smith", "jane.smith@example.com", "Quarterly budget review",
      "Hi Sam,\n\nCould you take a look at the Q3 budget draft and tell me whether the marketing numbers look right "
      "to you? I'd like to finalize it by Monday so that finance can sign off.\n\nThanks,\nJane",
      "2024-07-17", "14:12", labels=("Work",)),
    S(9, "Tom Becker", "tom.becker@northpeak.com", "Re: Support request - billing discrepancy",
      "Hi,\n\nFollowing up on my earlier message: our June invoice still shows 25 seats although we only have 18 "
      "active users. Could you correct the amount and send a revised invoice?\n\nRegards,\nTom Becker",
      "2024-07-16", "10:27"),
    S(10, "Kevin Moore", "kevin.moore@example.com", "Kickoff deck for the Atlas project",
      "Hi Sam,\n\nAttached is the kickoff deck for Atlas. The scope and the timeline are still rough, we'll firm them "
      "up after the stakeholder interviews next week.\n\nKevin",
      "2024-07-10", "13:55", starred=True, labels=("Work",)),
    S(11, "Priya Nair", "priya.nair@lumen-analytics.com", "Support: Unable to export reports to CSV",
      "Hi there,\n\nWhen I export the monthly report to CSV the download starts but the file is empty. Exporting to "
      "PDF works fine. Is this a known problem?\n\nThanks,\nPriya",
      "2024-07-16", "08:40"),
    S(12, "Amazon.com", "shipment-tracking@amazon.com", "Your Amazon.com order #112-4839201-7730612 has shipped",
      "Hello Sam,\n\nYour package with Logitech MX Master 3S Wireless Mouse is on the way.\n\n"
      "Arriving: Saturday, July 20\n\nTrack your package on Amazon.com",
      "2024-07-15", "17:22", read=False, labels=("Receipts",)),
    S(13, "Derek Olsen", "derek.olsen@fieldline.net", "Urgent: Support needed for server outage",
      "Hi,\n\nOur production instance has been down for 40 minutes and the status page still shows everything as "
      "operational. Please call me back as soon as possible at 555-0143.\n\nDerek Olsen\nFieldline",
      "2024-07-15", "07:58", read=False),
    S(14, "Google", "no-reply@accounts.google.com", "Security alert: New sign-in on Mac",
      "New sign-in to your account\n\nsam.parker@gomail.com\n\nWe noticed a new sign-in to your Google Account on a "
      "Mac device. If this was you, you don't need to do anything. If not, we'll help you secure your account.\n\n"
      "Check activity",
      "2024-07-09", "22:14", starred=True),
    S(15, "Helen Cho", "helen.cho@vistacare.org", "Support ticket #48227: Password reset not working",
      "Hello,\n\nThe password reset link in your email expires before I can open it: it says the link is invalid "
      "every time. Could you reset my password manually?\n\nHelen Cho",
      "2024-07-14", "12:03"),
    S(16, "Barbara Thomas", "barbara.thomas@example.com", "Team offsite agenda",
      "Hi Sam,\n\nHere is the draft agenda for the team offsite on August 8. Morning: strategy session. Afternoon: "
      "workshops and a sailing trip. Let me know if you want to add a slot for your team.\n\nBarbara",
      "2024-07-08", "09:30", starred=True, labels=("Work",)),
    S(17, "Trello", "notifications@trello.com", "Card moved: Homepage redesign to Done",
      "Emily Chen moved the card Homepage redesign from In review to Done on the board Website 2024.\n\n"
      "View the card on Trello",
      "2024-07-12", "17:46", read=False),
    S(18, "Charles Davis", "charles.davis@example.com", "Sales pipeline update",
      "Hi Sam,\n\nQuick update from my side: I've been reaching out to a few prospects in the healthcare space and "
      "have two demos booked for next week. I'll share the pipeline sheet once I've cleaned it up.\n\nCharles",
      "2024-07-11", "16:10", labels=("Work",)),
    S(19, "Chase", "alerts@chase.com", "Your account balance is below $500",
      "This is one of the account alerts you asked us to send.\n\nThe available balance in your checking account "
      "ending in 4821 fell below $500.00 on Jul 14, 2024.\n\nManage your alerts in the Chase Mobile app.",
      "2024-07-14", "07:12", read=False),
    S(20, "Nina Patel", "nina.patel@orbitcart.com", "Support follow-up: Mobile app crashes on launch",
      "Hi,\n\nThe iOS app still crashes on launch after the latest release (version 4.2.1). I attached the crash log "
      "from an iPhone 14. Is there a workaround we can give our users?\n\nNina",
      "2024-07-13", "14:26"),
    S(21, "Ashley Campbell", "ashley.campbell@example.com", "Photos from the hackathon",
      "Hey Sam!\n\nI finally uploaded the photos from the hackathon. The one of your team presenting the demo is my "
      "favourite. Link to the album is below.\n\nAshley",
      "2024-07-07", "20:08", starred=True, labels=("Personal",)),
    S(22, "Riverside Dental", "frontdesk@riversidedental.com", "New support request from Riverside Dental",
      "Hello,\n\nOur appointment reminders stopped going out on Monday. Patients are missing appointments. Can someone "
      "check the SMS settings on our account?\n\nFront desk, Riverside Dental",
      "2024-07-12", "10:14", read=False),
    S(23, "Angela White", "angela.white@example.com", "Coverage plan while I'm out",
      "Hi Sam,\n\nI'm putting together a coverage plan for my upcoming FTA (flexible time away). I'll be handing the "
      "vendor calls over to Brian for those weeks. I'll confirm the exact dates soon.\n\nAngela",
      "2024-07-10", "11:47", labels=("Work",)),
    S(24, "Omar Haddad", "omar.haddad@cobaltlabs.io", "Support escalation: Data sync delays",
      "Hi team,\n\nSyncing between our CRM and your platform now takes more than six hours instead of minutes. "
      "This blocks our sales team. Please escalate.\n\nOmar Haddad\nCobalt Labs",
      "2024-07-11", "09:02"),
    S(25, "Amazon Prime", "prime@amazon.com", "Your Amazon Prime membership renews on August 1",
      "Hello Sam,\n\nThank you for being a Prime member. Your membership will renew on August 1, 2024 for $139.00. "
      "No action is needed.\n\nManage your membership on Amazon.com",
      "2024-07-09", "05:30", labels=("Receipts",)),
    S(26, "Carol Adams", "carol.adams@example.com", "Meeting with Horizon Partners",
      "Hi Sam,\n\nThe meeting with Horizon Partners is confirmed for next Tuesday at 9:00 AM in conference room B. "
      "I'll bring the printed proposal, could you prepare the demo?\n\nThanks,\nCarol",
      "2024-07-08", "15:44", starred=True, labels=("Work",)),
    S(27, "Lucas Meyer", "lucas.meyer@pinegrove.edu", "Support: Feature request for dark mode",
      "Hello,\n\nMany of our teachers use the platform late in the evening. Would you consider adding a dark mode? "
      "Happy to test a beta version.\n\nLucas Meyer\nPinegrove School",
      "2024-07-10", "08:19"),
    S(28, "Danielle Harris", "danielle.harris@example.com", "System update rollout timeline?",
      "Hi Sam,\n\nThe operations team keeps asking me when the new system update goes live. Could you keep me posted "
      "so I can pass it on?\n\nThanks,\nDanielle",
      "2024-07-06", "10:51", starred=True, labels=("Work",)),
    S(29, "Google Alerts", "googlealerts@google.com", "Google Alert - machine learning",
      "machine learning\nDaily update, July 13, 2024\n\nNEWS\nNew benchmark shows smaller models closing the gap on "
      "web navigation tasks.\n\nYou have received this email because you subscribed to Google Alerts.",
      "2024-07-13", "04:00", read=False),
    S(30, "Grace Kim", "grace.kim@tallyhq.com", "Support request: Cannot add team members",
      "Hi,\n\nWhen I try to invite new team members the Invite button stays greyed out, even though we have seats "
      "left on our plan. Could you check our account?\n\nGrace Kim\nTally HQ",
      "2024-07-09", "13:37"),
    S(31, "Brian King", "brian.king@example.com", "Vendor review meeting recap",
      "Hi Sam,\n\nThanks for joining the vendor review meeting yesterday. We agreed to shortlist three vendors and to "
      "revisit pricing in two weeks. I took notes during the meeting.\n\nBrian",
      "2024-07-05", "17:20", starred=True, labels=("Work",)),
    S(32, "Michael Brown", "michael.brown@example.com", "Re: Conference travel reimbursement",
      "Hi Sam,\n\nFinance approved your travel reimbursement for the Berlin conference. The amount will be paid with "
      "the July payroll.\n\nMichael",
      "2024-07-08", "11:26", labels=("Travel",)),
    S(33, "Ethan Ross", "ethan.ross@meridianhealth.com", "Support: Integration with Salesforce failing",
      "Hello,\n\nSince yesterday every sync with Salesforce fails with error 403. Nothing changed on our side. Can you "
      "help us find out what happened?\n\nEthan Ross\nMeridian Health",
      "2024-07-08", "09:48", read=False),
    S(34, "Zoom", "no-reply@zoom.us", "Cloud recording - Weekly Product Sync is now available",
      "Hi Sam,\n\nYour cloud recording of Weekly Product Sync is now available.\n\nDate: Jul 4, 2024 10:00 AM Pacific "
      "Time\nDuration: 47 minutes\n\nView recording",
      "2024-07-04", "11:03"),
    S(35, "Amazon.com", "order-update@amazon.com", "Delivered: Your Amazon package was left at the front door",
      "Hello Sam,\n\nYour package with Anker USB-C Charger 65W was delivered. It was left at the front door.\n\n"
      "Order #112-7720134-5591046 on Amazon.com",
      "2024-07-03", "15:35", labels=("Receipts",)),
    S(36, "Jira", "jira-notifications@atlassian.net", "[JIRA] (ATLAS-142) Update API rate limits",
      "Kevin Moore assigned ATLAS-142 to you.\n\nUpdate API rate limits\nPriority: High\nSprint: Atlas Sprint 3\n\n"
      "View the issue in Jira",
      "2024-07-07", "09:11", read=False, labels=("Work",)),
    S(37, "Emily Chen", "emily.chen@example.com", "Design review feedback",
      "Hi Sam,\n\nThanks for the detailed comments on the onboarding flow. I updated the mockups: the progress bar is "
      "now at the top and the copy is shorter. Let me know what you think.\n\nEmily",
      "2024-07-02", "16:22", starred=True, labels=("Work",)),
    S(38, "Instagram", "notifications@mail.instagram.com", "sarah_k and 4 others liked your photo",
      "sarah_k, rachel.g and 3 others liked your photo.\n\nSee your activity on Instagram.",
      "2024-07-06", "21:40"),
    S(39, "Carlos Mendez", "carlos.mendez@brightpath.co", "Support: Refund for duplicate charge",
      "Hi,\n\nWe were charged twice for our annual plan on July 1. Could you refund the duplicate charge of "
      "$1,188?\n\nCarlos Mendez\nBrightpath",
      "2024-07-05", "10:09"),
    S(40, "Dropbox", "no-reply@dropbox.com", "Emily Chen shared \"Q3 Mockups\" with you",
      "Emily Chen (emily.chen@example.com) invited you to edit the folder \"Q3 Mockups\".\n\nGo to folder",
      "2024-07-01", "14:58"),
    S(41, "David Wilson", "david.wilson@example.com", "Book club pick for August",
      "Hi everyone,\n\nThe votes are in: August's book club pick is Project Hail Mary. We'll meet on August 28 at my "
      "place. Bring snacks!\n\nDavid",
      "2024-07-04", "19:02", read=False, labels=("Personal",)),
    S(42, "Indeed", "jobalerts@indeed.com", "12 new jobs for Product Manager in San Francisco",
      "Your job alerts for Product Manager in San Francisco, CA\n\nSenior Product Manager - Figma\nProduct Manager, "
      "Growth - Notion\nProduct Manager - Airtable\n\nSee all 12 new jobs",
      "2024-07-02", "06:45"),
    S(43, "Hannah Berg", "hannah.berg@quantix.ai", "Support: SSO configuration question",
      "Hello,\n\nWe're setting up SSO with Okta and can't find where to upload our SAML certificate. Could you point "
      "us to the right settings page?\n\nHannah Berg\nQuantix",
      "2024-07-03", "13:30"),
    S(44, "Amazon.com", "store-news@amazon.com", "Rate your recent Amazon purchase",
      "Hello Sam,\n\nHow do you like your Kindle Paperwhite? Share your thoughts with other customers and rate it "
      "with one to five stars.\n\nWrite a review on Amazon.com",
      "2024-06-28", "12:00", read=False),
    S(45, "Lisa Martinez", "lisa.martinez@example.com", "Volunteer day sign-up",
      "Hi all,\n\nOur volunteer day at the food bank is on July 27. Sign-up closes this Friday; reply to me if you'd "
      "like to join.\n\nLisa",
      "2024-06-27", "10:35", read=False),
    S(46, "Robert Johnson", "robert.johnson@example.com", "Can we move our 1:1?",
      "Hi Sam,\n\nSomething came up this afternoon. Could we move our 1:1 to tomorrow at 2 PM?\n\nRobert",
      "2024-07-18", "10:02", read=False, labels=("Work",)),
    S(47, "Sarah Kim", "sarah.kim@example.com", "Draft press release for review",
      "Hi Sam,\n\nHere's the draft press release for the Atlas launch. Could you review the product description "
      "section by end of day?\n\nSarah",
      "2024-07-18", "09:47", read=False, starred=True, labels=("Work",)),
    S(48, "Uber Receipts", "uber.us@uber.com", "Your Thursday morning trip with Uber",
      "Thanks for riding, Sam.\n\nTotal: $18.42\n\nPickup 7:31 AM, 1450 Market St\nDropoff 7:52 AM, 500 Howard St\n\n"
      "Rate your driver",
      "2024-07-18", "08:05", read=False, labels=("Receipts",)),
    S(49, "Mark Evans", "mark.evans@example.com", "Contract renewal terms",
      "Hi Sam,\n\nThe vendor sent the renewal terms for next year: 8% increase, but they add premium onboarding. "
      "Can we discuss on Monday?\n\nMark",
      "2024-06-20", "15:15", starred=True, labels=("Work",)),
    S(50, "Spotify", "noreply@spotify.com", "Your Release Radar is ready",
      "Hi Sam,\n\nYour Release Radar playlist is updated with new music from artists you follow. Listen now.",
      "2024-06-14", "08:00"),
    S(51, "Olivia Scott", "olivia.scott@example.com", "Farewell lunch for Tom",
      "Hi all,\n\nTom's last day is June 7. Let's take him out for lunch on Thursday at noon. Please reply by "
      "Tuesday so I can book a table.\n\nOlivia",
      "2024-05-24", "13:10"),
    S(52, "Daniel Lee", "daniel.lee@example.com", "Apartment lease documents",
      "Hi Sam,\n\nI've attached the signed lease documents for the apartment. Keep a copy for your records.\n\nDaniel",
      "2024-05-15", "18:20", labels=("Personal",)),
    S(53, "Rachel Green", "rachel.green@example.com", "The recipe you asked for",
      "Hi Sam!\n\nHere's the lemon cake recipe from the party. The trick is to use the zest of two lemons.\n\n"
      "Rachel",
      "2024-05-02", "19:45", starred=True, labels=("Personal",)),
    S(54, "Meetup", "info@meetup.com", "Your RSVP is confirmed: Bay Area Product Managers",
      "You're going!\n\nBay Area Product Managers - Spring Mixer\nThursday, April 25, 6:30 PM\nSoMa, San Francisco",
      "2024-04-19", "12:30"),
    S(55, "Chris Taylor", "chris.taylor@example.com", "Spring marathon training plan",
      "Hey Sam,\n\nHere's the 10-week plan I mentioned. Week one is easy: three short runs and one long run on "
      "Sunday.\n\nChris",
      "2024-04-03", "07:50", labels=("Personal",)),
    S(56, "Google Calendar", "calendar-notification@google.com", "Notification: Dentist appointment @ Fri Mar 15, 2024 9am",
      "Dentist appointment\nFriday, March 15, 2024, 9:00 AM - 10:00 AM\nRiverside Dental, 220 Pine St\n\n"
      "Invitation from Google Calendar",
      "2024-03-14", "09:00"),
    # Sent by the user (not in the Inbox).
    S(57, "Alexa Richardson", "alexa.richardson@example.com", "Re: HR paperwork for your visa renewal",
      "Hi Alexa,\n\nThanks for the checklist! I'll get the forms to you by next week.\n\nSam",
      "2024-07-12", "16:02", sent=True),
    S(58, "Kevin Moore", "kevin.moore@example.com", "Re: Kickoff deck for the Atlas project",
      "Thanks Kevin, looks good. Happy to help with the stakeholder interviews.\n\nSam",
      "2024-07-10", "14:31", sent=True),
    S(59, "Carol Adams", "carol.adams@example.com", "Horizon Partners prep",
      "Hi Carol,\n\nI'll prepare the demo for Tuesday and send you the slides on Monday.\n\nSam",
      "2024-07-08", "16:15", sent=True),
)
