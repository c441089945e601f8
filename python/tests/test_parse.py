"""Every vendored fixture through the package: one-shot, streamed in 1/3/7-character pieces,
and batched; the expected messages are the fixtures' expected files, and where transformers is
importable and accepts the template, its own ResponseParser runs on the same input in this
process and must give the same message and the same merged events."""

import pytest

import response_templates as rt
from conftest import FIXTURE_LIST, merge, stream

IDS = [f.id for f in FIXTURE_LIST]


def test_fixtures_found():
    # The suite must not pass by finding nothing.
    assert len(FIXTURE_LIST) >= 200
    assert sum(f.expect_error for f in FIXTURE_LIST) >= 10


@pytest.mark.parametrize("fx", FIXTURE_LIST, ids=IDS)
def test_one_shot(fx):
    if fx.expect_error:
        with pytest.raises(rt.ResponseParseError):
            rt.parse_response(fx.text, fx.template, prefix=fx.prefix, tools=fx.tools)
        return
    message = rt.parse_response(fx.text, fx.template, prefix=fx.prefix, tools=fx.tools)
    assert message == fx.expected
    # The same through a Template object, loaded from the file.
    template = rt.Template.from_file(fx.template_path)
    assert rt.parse_response(fx.text, template, prefix=fx.prefix, tools=fx.tools) == fx.expected


@pytest.mark.parametrize("size", [1, 3, 7])
@pytest.mark.parametrize("fx", FIXTURE_LIST, ids=IDS)
def test_streamed(fx, size):
    parser = rt.ResponseParser(fx.template, prefix=fx.prefix, tools=fx.tools)
    if fx.expect_error:
        with pytest.raises(rt.ResponseParseError):
            stream(parser, fx.text, size)
        return
    message, events = stream(parser, fx.text, size)
    assert message == fx.expected
    # The same events as one feed, chunk boundaries aside.
    whole = rt.ResponseParser(fx.template, prefix=fx.prefix, tools=fx.tools)
    _, whole_events = stream(whole, fx.text, max(len(fx.text), 1))
    assert merge(events) == merge(whole_events)
    assert merge(parser.initial_events) == merge(whole.initial_events)


def test_batched_per_template():
    by_template = {}
    for fx in FIXTURE_LIST:
        if not fx.expect_error:
            by_template.setdefault(fx.template_path, []).append(fx)
    assert len(by_template) >= 20
    for path, group in by_template.items():
        template = rt.Template.from_file(path)
        texts = [fx.text for fx in group]
        prefixes = [fx.prefix for fx in group]
        tools = group[0].tools if all(fx.tools == group[0].tools for fx in group) else None
        if tools is None and any(fx.tools for fx in group):
            # Tools differ between fixtures: batch those that share the first one's.
            group = [fx for fx in group if fx.tools == group[0].tools]
            texts, prefixes, tools = [fx.text for fx in group], [fx.prefix for fx in group], group[0].tools
        messages = rt.parse_response(texts, template, prefix=prefixes, tools=tools)
        assert messages == [fx.expected for fx in group], path


def test_batch_of_many_runs_in_parallel_and_keeps_order():
    fx = next(f for f in FIXTURE_LIST if f.id == "qwen3/tool-call")
    texts = [fx.text] * 50 + ["plain text"] * 50
    out = rt.parse_response(texts, fx.template, prefix=fx.prefix, tools=fx.tools)
    assert out[:50] == [fx.expected] * 50
    assert out[50:] == [rt.parse_response("plain text", fx.template, prefix=fx.prefix)] * 50


def test_batch_raises_the_first_failing_text():
    bad = [f for f in FIXTURE_LIST if f.expect_error and f.id.startswith("hermes/")][0]
    good = next(f for f in FIXTURE_LIST if f.template_path == bad.template_path and not f.expect_error)
    with pytest.raises(rt.ResponseParseError) as info:
        rt.parse_response([good.text, bad.text, good.text], bad.template, prefix=[good.prefix, bad.prefix, good.prefix])
    # The error is the bad text's own, as a one-shot parse of it gives.
    with pytest.raises(rt.ResponseParseError) as alone:
        rt.parse_response(bad.text, bad.template, prefix=bad.prefix)
    assert (info.value.field, info.value.offset, info.value.kind) == (alone.value.field, alone.value.offset, alone.value.kind)


def test_batch_prefix_rules():
    fx = next(f for f in FIXTURE_LIST if f.id == "qwen3/tool-call")
    one = rt.parse_response(fx.text, fx.template, prefix=fx.prefix)
    assert rt.parse_response([fx.text, fx.text], fx.template, prefix=fx.prefix) == [one, one]
    assert rt.parse_response([fx.text], fx.template, prefix=[fx.prefix]) == [one]
    assert rt.parse_response([], fx.template, prefix="") == []
    with pytest.raises(ValueError, match="prefix"):
        rt.parse_response([fx.text, fx.text], fx.template, prefix=[fx.prefix])
    with pytest.raises(ValueError, match="prefix"):
        rt.parse_response([fx.text], fx.template)


@pytest.mark.parametrize("fx", [f for f in FIXTURE_LIST if f.reference_loads], ids=[f.id for f in FIXTURE_LIST if f.reference_loads])
def test_same_as_transformers(fx, ref):
    def run(parse_module):
        try:
            parser = parse_module.ResponseParser(fx.template, prefix=fx.prefix, tools=fx.tools)
            initial = list(parser.initial_events)
            events = parser.feed(fx.text)
            message, final = parser.finalize()
            return "ok", message, initial, events + final
        except ValueError as e:
            return "error", type(e).__name__, None, None

    theirs = run(ref)
    ours = run(rt)
    assert ours[0] == theirs[0], (ours, theirs)
    if theirs[0] == "ok":
        assert ours[1] == theirs[1]
        if merge(ours[2]) != merge(theirs[2]):
            # README deliberate difference 2: a delimiter at the very end of the prefix is
            # committed with the prefix's events; the stream as a whole is the same.
            assert merge(ours[2] + ours[3]) == merge(theirs[2] + theirs[3])
        else:
            assert merge(ours[3]) == merge(theirs[3])
    # And the fixture's expectation is the reference's.
    assert (theirs[0] == "error") == fx.expect_error
    if theirs[0] == "ok":
        assert theirs[1] == fx.expected


def test_vendored_templates():
    names = rt.vendored_names()
    assert "qwen3" in names and "smollm3" in names and names == sorted(names)
    for name in names:
        t = rt.Template.vendored(name)
        assert t.name == name
        from_file = rt.Template.from_file(f"{__import__('conftest').TEMPLATES}/{name}.json")
        assert t.to_dict() == from_file.to_dict()
        assert t.fields == list(t.to_dict()["fields"])
    fx = next(f for f in FIXTURE_LIST if f.id == "smollm3/tool-call")
    assert rt.parse_response(fx.text, rt.Template.vendored("smollm3"), prefix=fx.prefix, tools=fx.tools) == fx.expected


def test_initial_events_of_a_prefilled_prefix(ref):
    fx = next(f for f in FIXTURE_LIST if f.id == "qwen3-thinking/tool-call") if any(
        f.id == "qwen3-thinking/tool-call" for f in FIXTURE_LIST
    ) else next(f for f in FIXTURE_LIST if f.id.startswith("qwen3-thinking/") and not f.expect_error)
    ours = rt.ResponseParser(fx.template, prefix=fx.prefix, tools=fx.tools)
    theirs = ref.ResponseParser(fx.template, prefix=fx.prefix, tools=fx.tools)
    assert theirs.initial_events, "the fixture's prefix must open a region"
    assert merge(ours.initial_events) == merge(theirs.initial_events)
    assert ours.initial_events is ours.initial_events


def test_tools_as_functions(ref):
    fx = next(f for f in FIXTURE_LIST if f.id == "qwen3/tool-call")

    def get_weather(city: str, unit: str = "celsius"):
        """Get the weather.

        Args:
            city: The city.
            unit: The unit.
        """

    ours = rt.parse_response(fx.text, fx.template, prefix=fx.prefix, tools=[get_weather])
    theirs = ref.parse_response(fx.text, fx.template, prefix=fx.prefix, tools=[get_weather])
    assert ours == theirs


def _chunk(text):
    """A content chunk event as transformers writes it (keys in this order)."""
    return {"type": "region_chunk", "field": "content", "text": text, "dirty": False}


def _content_parser():
    parser = rt.ResponseParser(rt.Template.vendored("smollm3"), prefix="<|im_start|>assistant\n")
    assert parser.feed("Hello") == [{"type": "region_open", "field": "content"}, _chunk("Hello")]
    return parser


def test_feed_results_kept_by_the_caller_never_change():
    # feed reuses the list and dicts it returned last only when nothing else refers to them:
    # whatever the caller kept must stay as it was.
    parser = _content_parser()
    kept = [parser.feed(piece) for piece in ("ab", "cd", "ef")]
    one_dict = parser.feed("gh")[0]
    parser.feed("ij")
    assert kept == [[_chunk("ab")], [_chunk("cd")], [_chunk("ef")]]
    assert one_dict == _chunk("gh")
    assert len({id(events) for events in kept}) == 3


def test_feed_results_changed_and_dropped_do_not_leak_into_later_feeds():
    parser = _content_parser()
    events = parser.feed("ab")
    events[0]["text"] = "changed"
    events[0]["extra"] = 1
    events.append("junk")
    del events
    assert parser.feed("cd") == [_chunk("cd")]
    events = parser.feed("cd")
    events[0]["extra"] = 1
    del events
    assert parser.feed("ef") == [_chunk("ef")]
    # The same keys in another order, then dropped: the next dict has transformers' order.
    event = parser.feed("ef")[0]
    del event["type"]
    event["type"] = "region_chunk"
    del event
    event = parser.feed("gh")[0]
    assert list(event) == ["type", "field", "text", "dirty"]
    assert event == _chunk("gh")
    # A value replaced by an equal but different object is not the parser's any more.
    event["dirty"] = 0
    del event
    event = parser.feed("ij")[0]
    assert event == _chunk("ij") and event["dirty"] is False
    # Feeds with no events and with several: every list has exactly its own events.
    assert parser.feed("") == []
    message, final = parser.finalize()
    assert message == {"role": "assistant", "content": "Helloabcdcdefefghij"}
    assert final[-1]["type"] == "region_close"


def test_feed_of_a_str_subclass_gives_plain_str_texts():
    class Piece(str):
        pass

    parser = _content_parser()
    (event,) = parser.feed(Piece("abcd"))
    assert event == _chunk("abcd") and type(event["text"]) is str


def test_template_dicts_are_compiled_once():
    from response_templates import _api

    fx = next(f for f in FIXTURE_LIST if f.id == "qwen3/tool-call")
    template = dict(fx.template)
    rt.parse_response(fx.text, template, prefix=fx.prefix)
    first = _api._template(template)
    rt.parse_response(fx.text, template, prefix=fx.prefix)
    assert _api._template(template) is first
    assert _api._template(dict(template)) is first  # an equal dict: same JSON text
    changed = dict(template, defaults={"role": "robot"})
    assert _api._template(changed) is not first
    assert rt.parse_response("hi", changed, prefix="")["role"] == "robot"


def steps_of_another_thread_during(call):
    """How many steps another Python thread made while `call` ran. The switch interval is set
    to 10 s, so the calling thread never hands the GIL over on its own: the other thread (which
    gives the GIL back after each step) only runs while the call has released the GIL."""
    import sys
    import threading
    import time

    counter = [0]
    stop = threading.Event()

    def side():
        while not stop.is_set():
            counter[0] += 1
            time.sleep(0)

    old = sys.getswitchinterval()
    sys.setswitchinterval(10.0)
    thread = threading.Thread(target=side)
    try:
        thread.start()
        time.sleep(0.05)
        before = counter[0]
        call()
        return counter[0] - before
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(old)


def test_parsing_releases_the_gil():
    import json

    # The measure itself: a C call that holds the GIL (json's decoder) gives the other thread
    # no step.
    data = json.dumps(["x" * 100] * 200_000)
    assert steps_of_another_thread_during(lambda: json.loads(data)) == 0
    fx = next(f for f in FIXTURE_LIST if f.id == "qwen3/tool-call")
    assert "</think>" in fx.text
    big = fx.text.replace("</think>", "x" * 2_000_000 + "</think>")

    # A parse takes a few ms; on a loaded machine the OS may not schedule the other thread
    # inside one of them, so each is tried up to 20 times (a call that holds the GIL gives
    # it no step in any try, as json's above).
    def released(call):
        return any(steps_of_another_thread_during(call) > 0 for _ in range(20))

    assert released(lambda: rt.parse_response(big, fx.template, prefix=fx.prefix))
    assert released(lambda: rt.parse_response([big] * 4, fx.template, prefix=fx.prefix))
