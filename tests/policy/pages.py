"""A small signup page as the env service would observe it (screenshot + elements + AXTree)."""

from __future__ import annotations

import io

from PIL import Image, ImageDraw

from halo.agent import actions as A
from halo.agent.context import PageElement, PageView, PastStep, PolicyContext
from halo.v1 import common_pb2 as cpb
from halo.v1 import policy_pb2 as ppb

GOAL = 'Sign up for the newsletter with the e-mail "bob@example.com".'

ELEMENTS = (
    PageElement(bid="1", role="link", name="Home", x=20, y=20, width=60, height=20),
    PageElement(bid="2", role="heading", name="Newsletter", x=20, y=80, width=300, height=40, interactive=False),
    PageElement(bid="3", role="textbox", name="Email", x=400, y=250, width=480, height=40),
    PageElement(bid="4", role="button", name="Sign up", x=560, y=300, width=160, height=40),
    PageElement(bid="5", role="combobox", name="Frequency", x=400, y=360, width=200, height=30),
    PageElement(bid="6", role="option", name="Weekly", visible=False),
    PageElement(bid="7", role="option", name="Monthly", visible=False),
)


def screenshot(fmt: str = "PNG") -> bytes:
    image = Image.new("RGB", (1280, 720), "white")
    draw = ImageDraw.Draw(image)
    for e in ELEMENTS:
        if e.visible:
            draw.rectangle([e.x, e.y, e.x + e.width, e.y + e.height], outline="black")
            draw.text((e.x + 4, e.y + 4), e.name, fill="black")
    out = io.BytesIO()
    image.save(out, fmt)
    return out.getvalue()


def axtree() -> str:
    return "\n".join(f'[{e.bid}] {e.role} "{e.name}"' for e in ELEMENTS)


def context(history: tuple[PastStep, ...] = ()) -> PolicyContext:
    page = PageView(screenshot=screenshot(), axtree=axtree(), elements=ELEMENTS, url="http://127.0.0.1:8100/playground/",
                    title="Playground")
    return PolicyContext(goal=GOAL, page=page, history=history)


def policy_input(history: tuple[PastStep, ...] = ()) -> ppb.PolicyInput:
    from halo.agent.context import context_to_proto

    return context_to_proto(context(history))


SIGNUP_CLICK = A.ClickElement("4")
FILL_EMAIL = A.Fill("3", "bob@example.com")
