"""GoCalendar's data: the clock, the user's time zone, contacts, calendars and the seeded events/tasks.

The replica's clock is fixed at Sunday, July 14, 2024, 10:00 AM in America/Los_Angeles (PDT,
UTC-7), so that the goals' relative days are unambiguous and match what agisdk's eval scripts
compute in UTC:

    "Wednesday"       July 17 (gocalendar-6, 10, 16, 23; eval_gocalendar_6's own sample is
                      a Jul 17, 11 AM PDT = 18:00Z pick-up)
    "Monday morning"  July 15 (gocalendar-8, 12)
    "tonight"         July 14 (gocalendar-11)
    September 20      a Friday, 7:45 PM PDT = 2024-09-21T02:45Z (gocalendar-4)
    July 21-27        next week, Sunday to Saturday (gocalendar-13)

What the deletion tasks look for is seeded once, with look-alikes that a careless agent could pick
instead (they are what the wrong attempts delete):

    Dinner with friends       Wed Jul 17, 7-9 PM      (gocalendar-10; look-alike: Dinner with Mom and Dad, Fri)
    Reading time              Wed Jul 17, 9:30-10:30 PM (gocalendar-16; also Mon Jul 15, 8-9 PM, which ends before 10)
    Coffee with sister        Thu Jul 18, 8:30 AM     (gocalendar-18; look-alike: Coffee with Jordan, Tue)
    Project Sync              Wed Jul 17, 10 AM       (gocalendar-23; also Mon Jul 15, 2 PM)

and nothing seeded matches what the creation tasks' scripts search for (an event or task about
emailing Ashley, gym clothes, picking up a sister, math camp, a gym workout).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from zoneinfo import ZoneInfo

TZ = ZoneInfo("America/Los_Angeles")
TZ_LABEL = "GMT-07"
TODAY = date(2024, 7, 14)
NOW = datetime(2024, 7, 14, 10, 0, tzinfo=TZ)


@dataclass(frozen=True)
class Person:
    name: str
    email: str


USER = Person("Sam Parker", "sam.parker@gomail.com")

#: who can be invited (the guests box autocompletes from these; first names resolve when unique)
CONTACTS: tuple[Person, ...] = (
    Person("Ashley Campbell", "ashley.campbell@example.com"),
    Person("Barbara Thomas", "barbara.thomas@example.com"),
    Person("Emma Parker", "emma.parker@example.com"),
    Person("Jordan Lee", "jordan.lee@example.com"),
    Person("Kevin Moore", "kevin.moore@example.com"),
    Person("Linda Parker", "linda.parker@example.com"),
    Person("Marcus Allen", "marcus.allen@example.com"),
    Person("Nina Lopez", "nina.lopez@example.com"),
    Person("Priya Shah", "priya.shah@example.com"),
    Person("Robert Johnson", "robert.johnson@example.com"),
    Person("Tom Parker", "tom.parker@example.com"),
)

#: Google Calendar's event colours (name -> hex); "" is the calendar's own colour
EVENT_COLORS: dict[str, str] = {
    "Tomato": "#d50000", "Flamingo": "#e67c73", "Tangerine": "#f4511e", "Banana": "#f6bf26",
    "Sage": "#33b679", "Basil": "#0b8043", "Peacock": "#039be5", "Blueberry": "#3f51b5",
    "Lavender": "#7986cb", "Grape": "#8e24aa", "Graphite": "#616161",
}

#: the calendars in the sidebar: (id, name, colour, section)
CALENDARS: tuple[tuple[str, str, str, str], ...] = (
    ("primary", USER.name, "#039be5", "My calendars"),
    ("birthdays", "Birthdays", "#33b679", "My calendars"),
    ("tasks", "Tasks", "#3f51b5", "My calendars"),
    ("holidays", "Holidays in United States", "#0b8043", "Other calendars"),
)


@dataclass(frozen=True)
class SeedEvent:
    id: int
    title: str
    day: str                 # local start date, YYYY-MM-DD
    start: str = ""          # local HH:MM ("" for all-day)
    end: str = ""            # local HH:MM ("" for all-day)
    last_day: str = ""       # all-day events: the last day (inclusive); default: `day`
    location: str = ""
    description: str = ""
    guests: tuple[str, ...] = ()     # contact names
    recurrence: str = ""             # RRULE, e.g. "RRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR"
    calendar: str = "primary"
    color: str = ""
    created: str = "2024-07-01T16:00:00.000Z"
    extra: dict = field(default_factory=dict)


SEED_EVENTS: tuple[SeedEvent, ...] = (
    # --- recurring ------------------------------------------------------------------------
    SeedEvent(1, "Team standup", "2024-07-01", "09:30", "09:45", location="Zoom",
              guests=("Robert Johnson", "Kevin Moore", "Barbara Thomas"),
              description="Yesterday, today, blockers. Keep it to 15 minutes.",
              recurrence="RRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR", created="2024-06-20T16:00:00.000Z"),
    SeedEvent(2, "Yoga class", "2024-06-01", "09:00", "10:00", location="Mission Yoga Studio, 2390 Mission St",
              recurrence="RRULE:FREQ=WEEKLY;BYDAY=SA", color="Sage", created="2024-05-28T18:00:00.000Z"),
    SeedEvent(3, "Pay rent", "2024-01-01", recurrence="RRULE:FREQ=MONTHLY;BYMONTHDAY=1", color="Banana",
              description="Transfer to the landlord's account.", created="2023-12-20T18:00:00.000Z"),
    # --- last week ------------------------------------------------------------------------
    SeedEvent(10, "Dentist appointment", "2024-07-09", "15:00", "16:00", location="Bright Smile Dental, 450 Sutter St"),
    SeedEvent(11, "Atlas kickoff", "2024-07-10", "13:00", "14:00", location="Conference Room A",
              guests=("Robert Johnson", "Kevin Moore", "Barbara Thomas")),
    SeedEvent(12, "Movie night", "2024-07-12", "20:00", "22:30", location="Castro Theatre", guests=("Priya Shah",)),
    SeedEvent(13, "Hike at Mission Peak", "2024-07-13", "08:00", "11:00", guests=("Jordan Lee",)),
    # --- this week (Sun Jul 14 - Sat Jul 20) ---------------------------------------------------
    SeedEvent(20, "Brunch with Priya", "2024-07-14", "11:00", "12:30", location="Zazie, 941 Cole St", guests=("Priya Shah",)),
    SeedEvent(21, "Call Mom", "2024-07-14", "17:00", "17:30", guests=("Linda Parker",)),
    SeedEvent(22, "1:1 with Robert", "2024-07-15", "11:00", "11:30", guests=("Robert Johnson",)),
    SeedEvent(23, "Project Sync", "2024-07-15", "14:00", "14:30", location="Conference Room B",
              guests=("Robert Johnson", "Kevin Moore", "Barbara Thomas"),
              description="Weekly check-in on the Atlas project: status, risks, next steps."),
    SeedEvent(24, "Reading time", "2024-07-15", "20:00", "21:00", description="Next chapters of The Overstory."),
    SeedEvent(25, "Design review", "2024-07-16", "13:00", "14:00", location="Conference Room A",
              guests=("Barbara Thomas", "Kevin Moore")),
    SeedEvent(26, "Coffee with Jordan", "2024-07-16", "15:30", "16:00", location="Philz Coffee, 3101 24th St",
              guests=("Jordan Lee",)),
    SeedEvent(27, "Project Sync", "2024-07-17", "10:00", "10:30", location="Conference Room B",
              guests=("Robert Johnson", "Kevin Moore", "Barbara Thomas"),
              description="Weekly check-in on the Atlas project: status, risks, next steps."),
    SeedEvent(28, "Lunch with Kevin", "2024-07-17", "12:30", "13:30", location="Tartine Manufactory", guests=("Kevin Moore",)),
    SeedEvent(29, "Dinner with friends", "2024-07-17", "19:00", "21:00", location="Nopa, 560 Divisadero St",
              guests=("Priya Shah", "Marcus Allen", "Nina Lopez"), color="Tangerine",
              description="Table for four under Sam's name."),
    SeedEvent(30, "Reading time", "2024-07-17", "21:30", "22:30", description="Next chapters of The Overstory."),
    SeedEvent(31, "Coffee with sister", "2024-07-18", "08:30", "09:30", location="Blue Bottle Coffee, 315 Linden St",
              guests=("Emma Parker",), description="Catch up with Emma before her trip."),
    SeedEvent(32, "Quarterly planning", "2024-07-18", "13:00", "15:00", location="Conference Room A",
              guests=("Robert Johnson", "Barbara Thomas")),
    SeedEvent(33, "Dinner with Mom and Dad", "2024-07-19", "18:30", "20:30", location="Mom and Dad's place",
              guests=("Linda Parker", "Tom Parker")),
    SeedEvent(34, "Marcus's birthday", "2024-07-19", calendar="birthdays"),
    SeedEvent(35, "Farmers market", "2024-07-20", "10:30", "11:30", location="Ferry Building"),
    # --- later ------------------------------------------------------------------------------
    SeedEvent(40, "Sprint planning", "2024-07-22", "10:00", "11:00", location="Conference Room A",
              guests=("Robert Johnson", "Kevin Moore", "Barbara Thomas")),
    SeedEvent(41, "Book club", "2024-07-25", "19:00", "20:30", location="Green Apple Books", guests=("Nina Lopez",)),
    SeedEvent(42, "Summer vacation", "2024-08-05", last_day="2024-08-09", location="Lake Tahoe", color="Basil"),
    SeedEvent(43, "Team offsite", "2024-09-12", "09:00", "17:00", location="Presidio Officers' Club",
              guests=("Robert Johnson", "Kevin Moore", "Barbara Thomas")),
    # --- holidays ---------------------------------------------------------------------------
    SeedEvent(50, "Independence Day", "2024-07-04", calendar="holidays", description="Public holiday"),
    SeedEvent(51, "Labor Day", "2024-09-02", calendar="holidays", description="Public holiday"),
)


@dataclass(frozen=True)
class SeedTask:
    id: int
    title: str
    day: str
    time: str = ""           # "" for an all-day task
    description: str = ""
    completed: bool = False


SEED_TASKS: tuple[SeedTask, ...] = (
    SeedTask(1, "Call the plumber", "2024-07-14", "09:00", completed=True),
    SeedTask(2, "Submit expense report", "2024-07-16", description="Receipts from the Atlas kickoff."),
    SeedTask(3, "Renew car registration", "2024-07-19", "17:00"),
)

#: ids of new events and tasks start here (seed ids are never reused)
FIRST_NEW_ID = 100
