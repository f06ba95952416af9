"""The observation's protobuf form: the elements and AXTree text of a reading are converted once and
reused for as long as the page gives the same reading back (the same tuple), never for another one."""

from __future__ import annotations

from halo.env.observe import ElementInfo, PageObservation
from halo.env.server import _ElementForms, observation_to_proto


def _element(bid: str, name: str, focused: bool = False) -> ElementInfo:
    return ElementInfo(bid=bid, role="button", name=name, value="", x=1, y=2, width=30, height=40, visible=True,
                       interactive=True, focused=focused, depth=1, states=("pressed",))


def _observation(elements: tuple[ElementInfo, ...]) -> PageObservation:
    return PageObservation(url="http://site.test/", title="t", width=1280, height=720, screenshot=b"\xff\xd8jpeg",
                           image_format="jpeg", elements=elements, step_index=3, goal="do it")


def test_the_message_carries_every_field_of_the_observation():
    elements = (_element("1", "Save"), _element("2", "Cancel", focused=True))
    message = observation_to_proto(_observation(elements))
    assert [e.bid for e in message.elements] == ["1", "2"] and message.elements[1].focused
    assert message.elements[0].bbox.width == 30 and list(message.elements[0].states) == ["pressed"]
    assert message.axtree == _observation(elements).axtree
    assert (message.url, message.title, message.step_index, message.goal, message.screenshot) == (
        "http://site.test/", "t", 3, "do it", b"\xff\xd8jpeg")


def test_a_reading_is_converted_once_and_another_reading_never_gets_its_form():
    forms = _ElementForms(size=2)
    first = (_element("1", "Save"),)
    assert forms.of(first) is forms.of(first)                        # the same reading: its form reused
    changed = (_element("1", "Saved"),)
    assert forms.of(changed).elements[0].name == "Saved"             # another reading: converted anew
    equal_but_new = (_element("1", "Save"),)
    assert forms.of(equal_but_new) is not forms.of(first)            # by identity, not by value
    assert forms.of(first).elements[0].name == "Save"


def test_the_forms_kept_are_bounded_and_an_evicted_reading_is_converted_again():
    forms = _ElementForms(size=2)
    readings = [(_element(str(n), f"button {n}"),) for n in range(3)]
    kept = [forms.of(r) for r in readings]
    assert len(forms._forms) == 2
    again = forms.of(readings[0])                                    # evicted: rebuilt, still right
    assert again is not kept[0] and again.elements[0].name == "button 0"


def test_a_message_does_not_share_its_elements_with_the_cache():
    elements = (_element("1", "Save"),)
    message = observation_to_proto(_observation(elements))
    message.elements[0].name = "changed by a caller"
    assert observation_to_proto(_observation(elements)).elements[0].name == "Save"
