"""The embedded policy's candidate generator reads the goal and the observation, nothing else.

A model sees the goal and the page; so must the candidates the embedded policy chooses from. The
generator is run in a fresh interpreter where the task registry, the replicas (and their
oracles), the reward service (and agisdk's eval scripts) cannot be imported, with an audit hook
that records every file, socket, process or import the call makes: it must make none, and return
exactly what it returns here. A generator that looked a task up, read an oracle or a file, or
asked a service, fails one of these. (`lint-imports` checks the same boundary statically: the
"embedded policy sees the goal and the observation only" contract in pyproject.toml.)
"""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
import textwrap
from pathlib import Path

from halo.agent import actions as A
from halo.agent.context import PageElement, PageView
from halo.embedded.candidates import candidates_for, goal_texts

REPO = Path(__file__).resolve().parents[2]

GOAL = "GoMail: Send an email to Carol Adams saying that the meeting moved to 8:30 AM on July 18, budget $1,200"
ELEMENTS = (
    PageElement(bid="a1", role="textbox", name="To recipients", x=10, y=10, width=300, height=30),
    PageElement(bid="a2", role="textbox", name="Message Body", x=10, y=60, width=600, height=200, value="Hi", focused=True),
    PageElement(bid="a3", role="button", name="Send", x=10, y=280, width=80, height=30),
    PageElement(bid="a4", role="link", name="Older", x=10, y=900, width=80, height=30, visible=False),
    PageElement(bid="a5", role="combobox", name="Priority", x=400, y=10, width=100, height=30),
    PageElement(bid="a6", role="option", name="High", visible=False),
)

BLOCKED = ("halo.sites", "halo.tasks", "halo.reward", "halo.env", "halo.trainer", "halo.trainers", "halo.cli", "agisdk")

CHILD = textwrap.dedent("""
    import importlib.abc, json, sys
    BLOCKED = {blocked!r}

    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if any(name == b or name.startswith(b + ".") for b in BLOCKED):
                raise ImportError(f"blocked for this test: {{name}}")
            return None

    sys.meta_path.insert(0, Block())
    from halo.agent.context import PageElement, PageView
    from halo.embedded.candidates import candidates_for

    elements = tuple(PageElement(**e) for e in json.loads(sys.argv[2]))
    page = PageView(elements=elements, url="http://127.0.0.1:1/gomail/", title="Inbox")
    touched = []
    sys.addaudithook(lambda event, args: touched.append(event) if event.split(".")[0] in
                     ("open", "socket", "subprocess", "os", "import", "urllib", "http", "sqlite3") else None)
    out = candidates_for(sys.argv[1], page)
    touched = list(touched)
    print(json.dumps({{"candidates": [[c.kind, c.description, repr(c.action)] for c in out],
                      "touched": touched, "loaded": sorted(m for m in sys.modules if m.split(".")[0] == "agisdk"
                                                           or any(m.startswith(b) for b in BLOCKED))}}))
""")


def _candidates_here(goal: str) -> list[list]:
    page = PageView(elements=ELEMENTS, url="http://127.0.0.1:1/gomail/", title="Inbox")
    return [[c.kind, c.description, repr(c.action)] for c in candidates_for(goal, page)]


def test_candidates_take_the_goal_and_the_page_and_nothing_else():
    assert list(inspect.signature(candidates_for).parameters) == ["goal", "page", "max_candidates"]


def test_candidates_need_no_task_registry_replica_oracle_evaluator_file_or_socket():
    elements = json.dumps([e.__dict__ for e in ELEMENTS])
    done = subprocess.run([sys.executable, "-c", CHILD.format(blocked=BLOCKED), GOAL, elements],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    child = json.loads(done.stdout.strip().splitlines()[-1])
    assert child["loaded"] == []
    assert child["touched"] == [], f"the generator opened, imported or called out: {child['touched']}"
    assert child["candidates"] == _candidates_here(GOAL)


def test_candidates_carry_text_from_the_goal_and_act_on_the_page():
    texts = goal_texts(GOAL)
    for expected in ("Carol Adams", "8:30 AM", "July 18", "1200"):
        assert expected in texts
    assert any(t.startswith("The meeting moved to 8:30 AM") for t in texts)   # free text for the message
    page = PageView(elements=ELEMENTS)
    actions = [c.action for c in candidates_for(GOAL, page)]
    assert A.Fill("a1", "Carol Adams") in actions and A.ClickElement("a3") in actions
    assert A.KeyPress("Enter") in actions                    # the focused field holds text
    assert A.ClickElement("a4") not in actions              # below the fold: scroll first
    assert A.Scroll(delta_y=400.0) in actions and A.Scroll(delta_y=-400.0) in actions
    assert A.SelectOption("a5", ("High",)) in actions
    # another goal, same page: different texts, so the candidates depend on the goal
    other = [c.action for c in candidates_for("Reply to Dan Brown", page)]
    assert A.Fill("a1", "Dan Brown") in other and A.Fill("a1", "Carol Adams") not in other
