"""What GoCalendar's pages show: the day/week time grid, the month grid, the schedule list, the mini
calendar, and how each chip is named for the accessibility tree.

Chips are named the way a person reads them: "Dinner with friends, 7 – 9pm, Wednesday, July 17"
(all-day: "Summer vacation, All day, Monday, August 5 – Friday, August 9"; tasks start with
"Task: "), so an agent can tell two "Project Sync" chips apart by their day.
"""

from __future__ import annotations

import calendar as stdcal
from dataclasses import dataclass, field
from datetime import date, timedelta

from halo.sites.gocalendar.clock import clock, local, long_day, time_range, week_start
from halo.sites.gocalendar.data import EVENT_COLORS, NOW, TODAY
from halo.sites.gocalendar.events import Occurrence, State, occurrences

VIEWS = ("day", "week", "month", "schedule")
VIEW_NAMES = {"day": "Day", "week": "Week", "month": "Month", "schedule": "Schedule"}
VIEW_KEYS = {"day": "D", "week": "W", "month": "M", "schedule": "A"}
HOUR_PX = 48
SCHEDULE_DAYS = 14
MONTH_CELL_ITEMS = 4


def view_path(view: str, day: date) -> str:
    return f"/r/{view}/{day.year}/{day.month}/{day.day}"


def item_color(state: State, occ: Occurrence) -> str:
    item = occ.item
    if item.get("color"):
        return EVENT_COLORS.get(item["color"], "#039be5")
    calendar_id = "tasks" if occ.kind == "task" else item.get("calendarId", "primary")
    return next((c["color"] for c in state["calendar"]["calendars"] if c["id"] == calendar_id), "#039be5")


def calendar_id(occ: Occurrence) -> str:
    return "tasks" if occ.kind == "task" else occ.item.get("calendarId", "primary")


def when_text(occ: Occurrence) -> str:
    """The chip's and the card's date/time line."""
    if occ.all_day:
        if occ.last_day > occ.first_day:
            return f"All day, {long_day(occ.first_day)} – {long_day(occ.last_day)}"
        return f"All day, {long_day(occ.first_day)}"
    if occ.kind == "task":
        return f"{clock(occ.start, always_minutes=False)}, {long_day(occ.first_day)}"
    if occ.last_day > occ.first_day:
        return f"{long_day(occ.first_day)}, {clock(occ.start)} – {long_day(occ.last_day)}, {clock(occ.end)}"
    return f"{time_range(occ.start, occ.end)}, {long_day(occ.first_day)}"


def title_of(occ: Occurrence) -> str:
    return occ.item["title"] or "(No title)"


def chip_name(occ: Occurrence) -> str:
    prefix = "Task: " if occ.kind == "task" else ""
    done = ", completed" if occ.kind == "task" and occ.item.get("completed") else ""
    return f"{prefix}{title_of(occ)}, {when_text(occ)}{done}"


@dataclass
class Chip:
    occ: Occurrence
    name: str
    title: str
    time: str
    color: str
    calendar: str
    past: bool
    top: float = 0.0
    height: float = 0.0
    left: float = 0.0        # percent of the column
    width: float = 100.0
    col: int = 0             # first column (all-day bars, month bars)
    span: int = 1
    lane: int = 0
    continues_before: bool = False
    continues_after: bool = False

    @property
    def start_text(self) -> str:
        """"7pm", "10:30am" (month cells); "" for all-day items."""
        return "" if self.occ.all_day else clock(self.occ.start, always_minutes=False)

    @property
    def item_id(self) -> str:
        return self.occ.item["id"]

    @property
    def on(self) -> str:
        return self.occ.on.isoformat()

    @property
    def kind(self) -> str:
        return self.occ.kind

    @property
    def completed(self) -> bool:
        return bool(self.occ.item.get("completed"))


def _chip(state: State, occ: Occurrence) -> Chip:
    if occ.all_day:
        time_text = ""
    elif occ.kind == "task":
        time_text = clock(occ.start, always_minutes=False)
    else:
        time_text = time_range(occ.start, occ.end)
    return Chip(occ, chip_name(occ), title_of(occ), time_text, item_color(state, occ), calendar_id(occ),
                past=occ.end <= NOW if not occ.all_day else occ.last_day < TODAY)


def _in_bar_row(occ: Occurrence) -> bool:
    """All-day items and timed events of 24 hours or more sit in the row above the grid."""
    return occ.all_day or occ.multi_day


def _assign_lanes(chips: list[Chip]) -> int:
    """Stack spanning bars in the fewest lanes (first fit); returns the number of lanes."""
    lanes: list[int] = []   # last column used by each lane
    for chip in sorted(chips, key=lambda c: (c.col, -c.span)):
        for i, last in enumerate(lanes):
            if last < chip.col:
                chip.lane, lanes[i] = i, chip.col + chip.span - 1
                break
        else:
            chip.lane = len(lanes)
            lanes.append(chip.col + chip.span - 1)
    return len(lanes)


def _layout_columns(chips: list[Chip]) -> None:
    """Side by side when they overlap (each cluster of overlapping chips shares the column's width)."""
    chips.sort(key=lambda c: (c.top, -c.height))
    cluster: list[Chip] = []
    cluster_end = -1.0

    def flush() -> None:
        ends: list[float] = []
        for chip in cluster:
            for i, end in enumerate(ends):
                if end <= chip.top:
                    chip.lane, ends[i] = i, chip.top + chip.height
                    break
            else:
                chip.lane = len(ends)
                ends.append(chip.top + chip.height)
        for chip in cluster:
            chip.width = 100.0 / len(ends)
            chip.left = chip.lane * chip.width

    for chip in chips:
        if cluster and chip.top >= cluster_end:
            flush()
            cluster, cluster_end = [], -1.0
        cluster.append(chip)
        cluster_end = max(cluster_end, chip.top + chip.height)
    if cluster:
        flush()


@dataclass
class DayColumn:
    day: date
    chips: list[Chip] = field(default_factory=list)

    @property
    def is_today(self) -> bool:
        return self.day == TODAY


@dataclass
class TimeGrid:
    """The day or week view."""

    days: list[DayColumn]
    bars: list[Chip]
    lanes: int
    now_top: float | None      # the red line, when today is shown
    now_col: int

    @property
    def hours(self) -> list[int]:
        return list(range(1, 24))


def time_grid(state: State, days: list[date]) -> TimeGrid:
    found = occurrences(state, days[0], days[-1])
    columns = [DayColumn(d) for d in days]
    bars: list[Chip] = []
    for occ in found:
        if _in_bar_row(occ):
            chip = _chip(state, occ)
            first, last = max(occ.first_day, days[0]), min(occ.last_day, days[-1])
            chip.col, chip.span = (first - days[0]).days, (last - first).days + 1
            chip.continues_before, chip.continues_after = occ.first_day < days[0], occ.last_day > days[-1]
            bars.append(chip)
            continue
        for column in columns:
            day_start, day_end = local(column.day), local(column.day + timedelta(days=1))
            if not (occ.start < day_end and occ.end > day_start):
                continue
            chip = _chip(state, occ)
            begin, finish = max(occ.start, day_start), min(occ.end, day_end)
            minutes = (begin - day_start).total_seconds() / 60
            length = (finish - begin).total_seconds() / 60
            chip.top = minutes * HOUR_PX / 60
            chip.height = max(length * HOUR_PX / 60, 20.0 if occ.kind == "task" else 18.0) - 2
            column.chips.append(chip)
    for column in columns:
        _layout_columns(column.chips)
    lanes = _assign_lanes(bars)
    now_col = next((i for i, d in enumerate(days) if d == TODAY), -1)
    now_top = (NOW.hour * 60 + NOW.minute) * HOUR_PX / 60 if now_col >= 0 else None
    return TimeGrid(columns, bars, lanes, now_top, now_col)


@dataclass
class MonthWeek:
    days: list[date]
    bars: list[Chip]
    lanes: int
    cells: list[list[Chip]]    # timed items per day, shown
    more: list[int]            # how many more per day (the "+N more" link)


def month_weeks(state: State, month_day: date) -> list[MonthWeek]:
    first = month_day.replace(day=1)
    last = first.replace(day=stdcal.monthrange(first.year, first.month)[1])
    start = week_start(first)
    weeks: list[MonthWeek] = []
    while start <= last:
        days = [start + timedelta(days=i) for i in range(7)]
        found = occurrences(state, days[0], days[-1])
        bars, cells = [], [[] for _ in days]
        for occ in found:
            if _in_bar_row(occ) or occ.last_day > occ.first_day:
                chip = _chip(state, occ)
                a, b = max(occ.first_day, days[0]), min(occ.last_day, days[-1])
                chip.col, chip.span = (a - days[0]).days, (b - a).days + 1
                chip.continues_before, chip.continues_after = occ.first_day < days[0], occ.last_day > days[-1]
                bars.append(chip)
            else:
                cells[(occ.first_day - days[0]).days].append(_chip(state, occ))
        lanes = _assign_lanes(bars)
        shown_lanes = min(lanes, 2)
        more = [0] * 7
        for chip in [c for c in bars if c.lane >= shown_lanes]:
            for i in range(chip.col, chip.col + chip.span):
                more[i] += 1
        bars = [c for c in bars if c.lane < shown_lanes]
        room = max(1, MONTH_CELL_ITEMS - shown_lanes)
        shown_cells = []
        for i, cell in enumerate(cells):
            if len(cell) > room:
                keep = room - 1
                more[i] += len(cell) - keep
                cell = cell[:keep]
            shown_cells.append(cell)
        weeks.append(MonthWeek(days, bars, shown_lanes, shown_cells, more))
        start += timedelta(days=7)
    return weeks


@dataclass
class ScheduleDay:
    day: date
    chips: list[Chip]


def schedule(state: State, first: date, days: int = SCHEDULE_DAYS) -> list[ScheduleDay]:
    last = first + timedelta(days=days - 1)
    found = occurrences(state, first, last)
    out = []
    for i in range(days):
        day = first + timedelta(days=i)
        chips = [_chip(state, occ) for occ in found if occ.covers(day)]
        if chips:
            out.append(ScheduleDay(day, chips))
    return out


def chips_for(state: State, occs: list[Occurrence]) -> list[Chip]:
    return [_chip(state, occ) for occ in occs]


# --- navigation ----------------------------------------------------------------------------


def range_of(view: str, day: date) -> tuple[date, date]:
    if view == "day":
        return day, day
    if view == "week":
        start = week_start(day)
        return start, start + timedelta(days=6)
    if view == "month":
        first = day.replace(day=1)
        return first, first.replace(day=stdcal.monthrange(first.year, first.month)[1])
    return day, day + timedelta(days=SCHEDULE_DAYS - 1)


def headline(view: str, day: date) -> str:
    """The title next to the arrows: "July 17, 2024", "July 2024", "Jul – Aug 2024"."""
    if view == "day":
        return f"{day.strftime('%B')} {day.day}, {day.year}"
    first, last = range_of(view, day)
    if view == "month" or (first.month, first.year) == (last.month, last.year):
        return f"{first.strftime('%B')} {first.year}"
    if first.year == last.year:
        return f"{first.strftime('%b')} – {last.strftime('%b')} {first.year}"
    return f"{first.strftime('%b')} {first.year} – {last.strftime('%b')} {last.year}"


def _add_months(day: date, months: int) -> date:
    year, month = divmod(day.year * 12 + day.month - 1 + months, 12)
    return date(year, month + 1, 1)


def step(view: str, day: date, direction: int) -> date:
    if view == "day":
        return day + timedelta(days=direction)
    if view == "week":
        return day + timedelta(days=7 * direction)
    if view == "month":
        return _add_months(day, direction)
    return day + timedelta(days=SCHEDULE_DAYS * direction)


def step_label(view: str, direction: int) -> str:
    unit = {"day": "day", "week": "week", "month": "month", "schedule": "period"}[view]
    return f"{'Previous' if direction < 0 else 'Next'} {unit}"


@dataclass
class MiniMonth:
    month: date
    weeks: list[list[date]]
    previous: date
    following: date


def mini_month(month_day: date) -> MiniMonth:
    first = month_day.replace(day=1)
    start = week_start(first)
    weeks = [[start + timedelta(days=7 * w + i) for i in range(7)] for w in range(6)]
    return MiniMonth(first, weeks, _add_months(first, -1), _add_months(first, 1))
