"""Oracle and wrong attempts of marrisuite-8: "stay in Goleta, California next weekend; show me available hotels".

The script reads the store as text: Goleta plus a hotel or listing word passes, a booking or a
multi-room search fails. The wrong attempts are the mistakes an agent could make: a neighbouring
city, booking instead of showing, two rooms instead of one.
"""

from __future__ import annotations

from halo.agent import actions as A
from halo.sites.oracle import OracleStep, Target, WrongAttempts


def search(destination: str, rooms: str = "1 Room") -> list[OracleStep]:
    return [
        A.Fill(Target("textbox", "Destination"), destination),
        A.Fill(Target("textbox", "Check-in"), "2024-07-26"),
        A.Fill(Target("textbox", "Check-out"), "2024-07-28"),
        A.SelectOption(Target("combobox", "Rooms"), (rooms,)),
        A.ClickElement(Target("button", "Find Hotels")),
    ]


ORACLES: dict[str, list[OracleStep]] = {
    "marrisuite-8": search("Goleta"),
}

WRONG_ATTEMPTS: dict[str, WrongAttempts] = {
    "marrisuite-8": {
        "Santa Barbara instead of Goleta": search("Santa Barbara"),
        "books a Goleta hotel instead of showing them": [
            *search("Goleta"), A.ClickElement(Target("link", "Hotel Goleta Beach")),
            A.ClickElement(Target("button", "Book now"))],
        "two rooms": search("Goleta", rooms="2 Rooms"),
    },
}
