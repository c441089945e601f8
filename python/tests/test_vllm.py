"""The vLLM plugin (``response_templates.vllm``) against vLLM 0.33's own ``hf`` parsers.

Both are driven the way vLLM's chat serving drives a parser (``vllm_harness``): one parser per
request built by ``ParserManager``, ``adjust_request`` and ``set_prompt_token_ids``, then
``Parser.parse`` + ``assemble_chat_message_fields`` (non-streaming) or one
``ChatStreamProcessor.step`` per token or per three tokens (streaming). Expected values come
from vLLM's ``hf`` parser on the same fixture, or, where that parser refuses the template or
its older copy of the parsing code disagrees with transformers 5.24, from the fixture's
``expected.json`` (transformers 5.24's message) and transformers' own events.

Needs vLLM (``python/scripts/install-vllm.sh``); skipped without it.
"""

from __future__ import annotations

import importlib
import json
import logging
import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import vllm_harness as h  # noqa: E402

try:
    V = h.load_vllm()
except ImportError as exc:  # pragma: no cover - depends on the environment
    pytest.skip(f"vLLM is not installed: {exc}", allow_module_level=True)

def _load_plugin():
    """This checkout's ``vllm.py`` (loaded by path, so that the code under test is the
    checkout's even when an older wheel is installed), on the installed native package."""
    try:
        import response_templates  # noqa: F401 - the native backend the plugin prefers
    except ImportError as exc:  # pragma: no cover - CI installs the wheel
        pytest.skip(f"the native response_templates package is not installed: {exc}", allow_module_level=True)
    path = HERE.parent / "response_templates" / "vllm.py"
    spec = importlib.util.spec_from_file_location("response_templates_vllm", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


plugin = _load_plugin()
BACKEND = "native"

from transformers.utils.chat_parsing import ResponseParser as RefParser  # noqa: E402
from transformers.utils.chat_parsing import parse_response as ref_parse  # noqa: E402

OURS = "response_templates"
CONFIGS = {
    "both": (("hf", "hf"), (OURS, OURS)),
    "tool": (("hf", None), (OURS, None)),
    "reasoning": ((None, "hf"), (None, OURS)),
}
CASES = h.fixture_cases()
logging.getLogger("response_templates").setLevel(logging.ERROR)


# ---------------------------------------------------------------------------- helpers


def reference(case: h.Case, prefix: str | None = None):
    """transformers 5.24's message for the case, or the exception it raises."""
    try:
        return ref_parse(case.text, case.template, prefix=case.prefix if prefix is None else prefix, tools=case.tools)
    except Exception as exc:  # noqa: BLE001 - the reference's failure is data here
        return exc


def hf_accepts(template: dict) -> bool:
    try:
        V["hf_validate"](h.as_hf_template(template))
    except (TypeError, ValueError):
        return False
    return True


def normalized(result: h.Result) -> tuple:
    """A result as compared: vLLM's DelegatingParser (which runs plugin parsers) turns a
    whitespace-only content beside tool calls into None in non-streaming responses, vLLM's
    unified hf parser does not; both sides are compared with that folded."""
    reasoning, content, calls = result.comparable()
    if calls and content is not None and not content.strip():
        content = None
    return reasoning, content, calls


def stripped(value: tuple) -> tuple:
    reasoning, content, calls = value
    return ((reasoning or "").strip() or None, (content or "").strip() or None, calls)


def from_message(message: dict) -> tuple:
    """transformers' message as (reasoning, content, calls) with stripped text."""
    reasoning = message.get("thinking", message.get("reasoning_content"))
    calls = [
        {"name": call["function"]["name"], "arguments": call["function"]["arguments"]}
        for call in message.get("tool_calls") or ()
    ]
    return stripped((reasoning, message.get("content"), calls))


def run_all(case: h.Case, names: tuple, template: dict, per_step: int, **request_extra):
    tokenizer = h.FixtureTokenizer(template)
    parser_cls = h.parser_class(V, tokenizer, *names)
    oneshot = h.run_oneshot(
        V, parser_cls, tokenizer, case.prefix, case.text, h.make_request(V, case.tools, **request_extra)
    )
    streamed, deltas = h.run_stream(
        V, parser_cls, tokenizer, case.prefix, case.text, h.make_request(V, case.tools, **request_extra), per_step
    )
    return oneshot, streamed, deltas


def call_shapes(deltas) -> list[tuple]:
    """How each tool call arrives: (index, has id, type, has name, has arguments) per delta."""
    return [
        (call.index, bool(call.id), call.type, bool(call.function and call.function.name),
         bool(call.function and call.function.arguments))
        for delta in deltas
        for call in delta.tool_calls or ()
    ]


def assert_calls_fit_tools(case: h.Case, result: h.Result) -> None:
    """Each call names one of the fixture's tools and has that tool's required arguments."""
    tools = {t["function"]["name"]: t["function"].get("parameters") or {} for t in case.tools or ()}
    for call in result.calls:
        assert call["name"] in tools
        assert set(tools[call["name"]].get("required", ())) <= set(call["arguments"])


def reference_stream_splits(case: h.Case, per_step: int) -> bool:
    """Whether transformers 5.24's own ResponseParser, fed the output in the chunks the
    harness streams (``per_step`` tokens of the fixture tokenizer), ends with another
    message than its one-shot ``parse_response``."""
    tokenizer = h.FixtureTokenizer(case.template)
    pieces = tokenizer.tokenize(case.text)
    parser = RefParser(case.template, prefix=case.prefix, tools=case.tools)
    try:
        for i in range(0, len(pieces), per_step):
            parser.feed("".join(pieces[i : i + per_step]))
        streamed = parser.finalize()[0]
    except Exception:  # noqa: BLE001 - a failing stream is a split too
        return True
    return streamed != reference(case)


def hf_prompt_ends_reasoning(case: h.Case) -> bool:
    """hf's reasoning parser's answer: does the prompt already end reasoning? (vLLM then never
    calls a plugin reasoning parser and passes the output through as content.)"""
    tokenizer = h.FixtureTokenizer(h.as_hf_template(case.template))
    cls = h.parser_class(V, tokenizer, None, "hf")
    parser = cls(tokenizer, None, chat_template_kwargs={}, model_config=None)
    return parser.is_reasoning_end(tokenizer.encode(case.prefix))


# Open differences from vLLM's hf parser, named (strict: each must still fail).
KNOWN = {
    "qwen3/chatter-after-call-both": "content before a call is streamed; the message keeps only the last stretch",
    "qwen3-coder/tag-in-answer-both": "content before a literal </tool_call> is streamed; the message keeps only the text after it",
    "seed-oss/plain-both": "the prefilled <seed:cot_budget_reflect> opener: hf counts the held prompt tail as reasoning",
    "granite-4/list-in-tool-call-both": "a call list in one region: open",
    "granite-4/list-in-tool-call-tool": "a call list in one region: open",
    "glm-4.5/plain-tool": "tool parser alone: open",
}


def comparable_cases():
    """(case, config, per_step) where vLLM's hf parser is the expected value, with the
    reason a pair is left out of the comparison decided by transformers or hf, never by
    our output."""
    params = []
    for case in CASES:
        if not hf_accepts(case.template):
            continue
        ref = reference(case)
        if isinstance(ref, Exception):
            continue  # test_unparsable_output_is_kept
        for config in CONFIGS:
            if config == "both" and "thinking" not in h.as_hf_template(case.template)["fields"]:
                continue  # hf refuses --reasoning-parser without thinking: test_no_thinking_field
            if config == "reasoning" and "thinking" not in h.as_hf_template(case.template)["fields"]:
                continue
            if (config == "reasoning" or not case.tools) and ref.get("tool_calls"):
                continue  # tool parsing off: test_tool_parsing_off_keeps_call_text
            if config == "reasoning" and hf_prompt_ends_reasoning(case):
                continue  # vLLM passes the rest through raw for any plugin reasoning parser
            if config == "tool" and reference(case, prefix="") != ref:
                continue  # a tool parser alone never sees the prompt: test_tool_parser_alone_has_no_prompt
            for per_step in (1, 3):
                marks = ()
                if f"{case.id}-{config}" in KNOWN:
                    marks = pytest.mark.xfail(strict=True, reason=KNOWN[f"{case.id}-{config}"])
                params.append(pytest.param(case, config, per_step, id=f"{case.id}-{config}-{per_step}", marks=marks))
    return params


# ---------------------------------------------------------------------------- tests


@pytest.mark.parametrize(("case", "config", "per_step"), comparable_cases())
def test_matches_vllm_hf(case: h.Case, config: str, per_step: int) -> None:
    """Same message and same merged stream as vLLM's hf parsers, on the same fixture."""
    hf_names, our_names = CONFIGS[config]
    hf_one, hf_stream, hf_deltas = run_all(case, hf_names, h.as_hf_template(case.template), per_step)
    our_one, our_stream, our_deltas = run_all(case, our_names, case.template, per_step)
    expected_one, expected_stream = normalized(hf_one), normalized(hf_stream)
    ref = from_message(reference(case))
    if config == "both" and stripped(expected_one) != ref and stripped(expected_stream) != ref:
        # vLLM 0.33 carries an older copy of transformers' parsing code: where it disagrees
        # with transformers 5.24, the reference is transformers 5.24.
        assert stripped(normalized(our_one)) == ref
        assert stripped(normalized(our_stream)) == ref
        return
    if expected_stream != expected_one and reference_stream_splits(case, per_step):
        # Deliberate difference 1 (README): streaming equals one-shot for every chunking.
        # transformers' streaming parser, fed these very chunks, ends a delimiter with an
        # optional suffix early (lfm2.5's `)` before `]<|tool_call_end|>`) and so does vLLM's
        # copy; ours waits, so its stream is hf's one-shot message.
        expected_stream = expected_one
    assert normalized(our_one) == expected_one
    assert normalized(our_stream) == expected_stream
    assert call_shapes(our_deltas) == call_shapes(hf_deltas)
    for result in (our_one, our_stream):
        assert all(result.ids) and len(set(result.ids)) == len(result.ids)


def _hf_refused_cases():
    params = []
    for case in CASES:
        if hf_accepts(case.template):
            continue
        marks = ()
        if case.id == "deepseek-r1/text-after-calls":
            marks = pytest.mark.xfail(strict=True, reason="content joined around calls: open")
        params.append(pytest.param(case, id=case.id, marks=marks))
    return params


@pytest.mark.parametrize("case", _hf_refused_cases())
@pytest.mark.filterwarnings("ignore")
def test_templates_hf_refuses(case: h.Case) -> None:
    """Templates vLLM's hf parser refuses at startup (content `join`, parsers its copy does
    not know): ours serves them, with transformers 5.24's message."""
    with pytest.raises((TypeError, ValueError)):
        tokenizer = h.FixtureTokenizer(h.as_hf_template(case.template))
        h.parser_class(V, tokenizer, "hf", "hf")
    ref = reference(case)
    if isinstance(ref, Exception):
        # transformers 5.24 cannot load the template (json-call-list, python-call-list are
        # this project's parsers): the fixture's expected.json is the expected message.
        ref = case.expected
        if "expect_error" in ref:
            # The reference fails the whole output; served, the request does not fail and
            # the lenient reading's calls are calls of the request's tools.
            for per_step in (1, 3):
                one, stream, _ = run_all(case, (OURS, OURS), case.template, per_step)
                assert stream.calls == one.calls
                assert_calls_fit_tools(case, one)
            return
    for per_step in (1, 3):
        one, stream, _ = run_all(case, (OURS, OURS), case.template, per_step)
        assert stripped(normalized(one)) == from_message(ref)
        assert stripped(normalized(stream)) == from_message(ref)


def test_extra_field_refused_by_hf_routed_by_ours(monkeypatch) -> None:
    """A field other than thinking/content/tool_calls: hf refuses the template; ours sends a
    text field to the content (default), or where RESPONSE_TEMPLATES_VLLM_FIELDS says."""
    template = json.loads(json.dumps(h.load_template("qwen3")))
    template["fields"]["citations"] = {"open": "<cite>", "close": "</cite>", "content": "text"}
    text = "<think>\nlook it up\n</think>\n\nBern is the capital<cite>admin.ch</cite>. Done.<|im_end|>"
    prefix = "<|im_start|>user\nCapital?<|im_end|>\n<|im_start|>assistant\n"
    case = h.Case("qwen3", "extra-field", template, prefix, text, None, {})
    with pytest.raises((TypeError, ValueError), match="unsupported semantic fields"):
        h.parser_class(V, h.FixtureTokenizer(h.as_hf_template(template)), "hf", "hf")

    # The reference: transformers' own events, chunk text in order, per destination.
    parser = RefParser(template, prefix=prefix)
    events = parser.feed(text) + parser.finalize()[1]
    by_field: dict[str, str] = {}
    for event in events:
        if event["type"] == "region_chunk":
            by_field[event["field"]] = by_field.get(event["field"], "") + event["text"]
    order = [e["field"] for e in events if e["type"] == "region_chunk"]
    content_like = "".join(e["text"] for e in events if e["type"] == "region_chunk" and e["field"] in ("content", "citations"))
    assert "citations" in order

    for per_step in (1, 3):
        one, stream, _ = run_all(case, (OURS, OURS), template, per_step)
        for result in (one, stream):
            assert result.reasoning == by_field["reasoning_content"]
            assert result.content == content_like
    monkeypatch.setenv(plugin.FIELDS_ENV, "citations=drop")
    one, stream, _ = run_all(case, (OURS, OURS), template, 1)
    assert one.content == stream.content == by_field["content"]
    monkeypatch.setenv(plugin.FIELDS_ENV, "citations=reasoning")
    one, stream, _ = run_all(case, (OURS, OURS), template, 1)
    assert one.reasoning == stream.reasoning == by_field["reasoning_content"] + by_field["citations"]
    monkeypatch.setenv(plugin.FIELDS_ENV, "citations=elsewhere")
    with pytest.raises((TypeError, ValueError), match="target one of"):
        h.parser_class(V, h.FixtureTokenizer(template), OURS, OURS)


def _cases_where(predicate):
    return [pytest.param(c, id=c.id) for c in CASES if predicate(c)]


@pytest.mark.parametrize(
    "case",
    _cases_where(
        lambda c: hf_accepts(c.template)
        and "thinking" not in h.as_hf_template(c.template)["fields"]
        and not isinstance(reference(c), Exception)
    ),
)
def test_no_thinking_field(case: h.Case) -> None:
    """Templates without reasoning: hf refuses `--reasoning-parser hf`; ours takes both
    flags and gives hf's tool-parser-only result."""
    with pytest.raises(TypeError, match="thinking field"):
        h.parser_class(V, h.FixtureTokenizer(case.template), "hf", "hf")
    for per_step in (1, 3):
        hf_one, hf_stream, _ = run_all(case, ("hf", None), case.template, per_step)
        if not case.tools and reference(case).get("tool_calls"):
            continue  # tool parsing off: covered by test_tool_parsing_off_keeps_call_text
        one, stream, _ = run_all(case, (OURS, OURS), case.template, per_step)
        if reference(case, prefix="") == reference(case):
            assert normalized(one) == normalized(hf_one)
            assert normalized(stream) == normalized(hf_stream)
        else:
            assert stripped(normalized(one)) == from_message(reference(case))


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(c, id=c.id)
        for c in CASES
        if hf_accepts(c.template) and isinstance(reference(c), Exception)
    ],
)
def test_unparsable_output_is_kept(case: h.Case) -> None:
    """Outputs transformers fails to parse (e.g. a close delimiter inside a JSON string): the
    request does not fail, and the plugin reads them in the native lenient mode, which loses
    nothing vLLM's hf parser keeps: every call hf returns is returned too, and every call
    returned names one of the request's tools and has its required arguments (hf drops such
    a call, or cuts it at the delimiter inside the string and sends the rest as content)."""
    hf_names = ("hf", "hf") if "thinking" in h.as_hf_template(case.template)["fields"] else ("hf", None)
    hf_one, hf_stream, _ = run_all(case, hf_names, h.as_hf_template(case.template), 1)
    one, stream, _ = run_all(case, (OURS, OURS), case.template, 1)
    assert stream.calls == one.calls
    for hf_result, result in ((hf_one, one), (hf_stream, stream)):
        assert all(call in result.calls for call in hf_result.calls)
    assert_calls_fit_tools(case, one)


# Open: with tool_choice "none", a call that opens in the delta where reasoning ends is parsed
# (and then dropped by vLLM) before the tool parser sees the request; each must still fail.
TOOL_OFF_OPEN = {"deepseek-v3.1/tool-call", "gemma-4/hyphen-name", "glm-4.5/glm45-zero-arg", "glm-4.5/glm47-zero-arg", "granite-4/list-in-tool-call", "granite-4/tool-call", "hermes/args-first", "hermes/tool-call", "kimi-k2/hyphen-name", "kimi-k2/tool-call", "kimi-k2/variant-tokens", "lfm2.5/apostrophe", "lfm2.5/close-in-string", "lfm2.5/tool-call", "nemotron-3/close-in-string", "nemotron-3/code-indent", "nemotron-3/parallel", "phi-4-mini/functools", "phi-4-mini/tool-call", "qwen3-coder/close-in-string", "qwen3-coder/code-indent", "qwen3-coder/missing-opener-no-close", "qwen3-coder/tool-call", "qwen3-coder/truncated", }


@pytest.mark.parametrize(
    "case",
    _cases_where(
        lambda c: hf_accepts(c.template)
        and not isinstance(reference(c), Exception)
        and bool(reference(c).get("tool_calls"))
    ),
)
def test_tool_parsing_off_keeps_call_text(case: h.Case) -> None:
    """tool_choice "none": no calls, and each call's text (between its delimiters; the
    parser's events carry no delimiter text) stays in the content, the same in both modes."""
    def check() -> None:
        one, stream, _ = run_all(case, (OURS, OURS), case.template, 1, tool_choice="none")
        assert one.calls == stream.calls == []
        assert one.content == stream.content
        assert one.content  # the calls' text is not lost

    if case.id in TOOL_OFF_OPEN:  # named open difference: must still fail until fixed
        with pytest.raises(AssertionError):
            check()
        return
    check()


@pytest.mark.parametrize(
    "case",
    _cases_where(
        lambda c: hf_accepts(c.template)
        and "thinking" in h.as_hf_template(c.template)["fields"]
        and c.prefix
    ),
)
def test_is_reasoning_end_on_prompts(case: h.Case) -> None:
    """Whether the prompt leaves reasoning behind (structured outputs start there): same
    answer as hf's reasoning parser."""
    hf_tok = h.FixtureTokenizer(h.as_hf_template(case.template))
    our_tok = h.FixtureTokenizer(case.template)
    hf_cls = h.parser_class(V, hf_tok, None, "hf")
    our_cls = h.parser_class(V, our_tok, None, OURS)
    hf_parser = hf_cls(hf_tok, None, chat_template_kwargs={}, model_config=None)
    our_parser = our_cls(our_tok, None, chat_template_kwargs={}, model_config=None)
    assert our_parser.is_reasoning_end(our_tok.encode(case.prefix)) == hf_parser.is_reasoning_end(
        hf_tok.encode(case.prefix)
    )


def test_plugin_loads_by_file_path() -> None:
    """`--tool-parser-plugin` / `--reasoning-parser-plugin` with the path of vllm_plugin.py
    register both parsers under `response_templates`; the path of vllm.py is refused with a
    message (vLLM would import it as `vllm`), and vLLM stays importable."""
    import vllm
    from vllm.reasoning import ReasoningParserManager
    from vllm.tool_parsers import ToolParserManager
    from vllm.utils.import_utils import import_plugin

    ToolParserManager.tool_parsers.pop(OURS, None)
    ReasoningParserManager.reasoning_parsers.pop(OURS, None)
    with pytest.raises(KeyError):
        ToolParserManager.get_tool_parser(OURS)
    assert import_plugin(str(Path(plugin.__file__).with_name("vllm_plugin.py"))) is not None
    assert ToolParserManager.get_tool_parser(OURS).__name__ == "ResponseTemplateToolParser"
    assert ReasoningParserManager.get_reasoning_parser(OURS).__name__ == "ResponseTemplateReasoningParser"
    assert "hf" in ToolParserManager.list_registered()

    try:
        assert import_plugin(str(Path(plugin.__file__))) is None  # refused, logged by vLLM
    finally:
        sys.modules["vllm"] = vllm
    plugin.register()
    assert ToolParserManager.get_tool_parser(OURS) is plugin.ResponseTemplateToolParser
    assert ReasoningParserManager.get_reasoning_parser(OURS) is plugin.ResponseTemplateReasoningParser


def test_template_from_environment(monkeypatch, tmp_path) -> None:
    """RESPONSE_TEMPLATES_VLLM_TEMPLATE names the template when the tokenizer has none;
    without either, startup fails with a message that says how to fix it."""
    case = next(c for c in CASES if c.id == "smollm3/tool-call")
    bare = h.FixtureTokenizer(None)
    with pytest.raises(TypeError, match=plugin.TEMPLATE_ENV):
        h.parser_class(V, bare, OURS, OURS)
    config = tmp_path / "tokenizer_config.json"
    config.write_text(json.dumps({"response_template": case.template}), encoding="utf-8")
    monkeypatch.setenv(plugin.TEMPLATE_ENV, str(config))
    one, stream, _ = run_all(case, (OURS, OURS), None, 1)
    hf_one, hf_stream, _ = run_all(case, ("hf", "hf"), case.template, 1)
    assert normalized(one) == normalized(hf_one)
    assert normalized(stream) == normalized(hf_stream)
    monkeypatch.setenv(plugin.TEMPLATE_ENV, str(tmp_path / "missing-name"))
    with pytest.raises(TypeError, match="(neither a file nor a vendored template|is not a file)"):
        h.parser_class(V, bare, OURS, OURS)


def test_include_reasoning_false_hides_reasoning() -> None:
    """include_reasoning=False (vLLM's request flag) hides reasoning in both modes, as hf."""
    case = next(c for c in CASES if c.id == "smollm3/tool-call")
    one, stream, _ = run_all(case, (OURS, OURS), case.template, 1, include_reasoning=False)
    hf_one, hf_stream, _ = run_all(case, ("hf", "hf"), case.template, 1, include_reasoning=False)
    assert one.reasoning is None and stream.reasoning is None
    assert normalized(one) == normalized(hf_one)
    assert normalized(stream) == normalized(hf_stream)


def test_torch_is_real_or_not_left_behind() -> None:
    """The torch stand-in used to import vLLM is gone after the import."""
    if V["stubbed_torch"]:
        assert "torch" not in sys.modules or not str(getattr(sys.modules["torch"], "__file__", "")).startswith("<torch stub")
        with pytest.raises(ImportError):
            importlib.import_module("torch")
    assert os.environ.get(plugin.TEMPLATE_ENV) in (None, "")


# ---------------------------------------------------------------------------- logits processor
#
# vLLM's logits-processor module imports torch; with the stub it imports (the interface and
# BatchUpdate are real vLLM classes). `apply` gets numpy logits here: it masks them with
# response_templates.apply_token_bitmask_inplace, which takes numpy or torch; test_torch.py
# runs the processor on torch tensors inside vLLM's Sampler.


def _load_logits_module():
    def load():
        from vllm.v1.sample import logits_processor as lp

        path = HERE.parent / "response_templates" / "vllm_logits.py"
        spec = importlib.util.spec_from_file_location("response_templates.vllm_logits", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return lp, module

    return h.with_torch_stub(load)


LP, LOGITS = _load_logits_module()
WEATHER_TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
VALID_CALL = '<tool_call>{"name":"get_weather","arguments":{"city":"Paris"}}</tool_call><|im_end|>'
SECOND_CLOSE = "<|endoftext|>"


def _processor(monkeypatch):
    from types import SimpleNamespace

    monkeypatch.setenv(LOGITS.TOKENIZER_ENV, "o200k_base")
    return LOGITS.ResponseTemplateLogitsProcessor(SimpleNamespace(model_config=None), "cpu", False)


def _params(tool_choice):
    from vllm import SamplingParams

    if tool_choice is None:
        return SamplingParams()
    value = plugin.constraint_extra_args(h.load_template("qwen3"), WEATHER_TOOLS, tool_choice)
    return SamplingParams(extra_args={plugin.EXTRA_ARGS_KEY: value})


def _masked(logits_row):
    import numpy as np

    return set(np.flatnonzero(np.isneginf(logits_row)).tolist())


def test_logits_processor_masks_only_constrained_rows(monkeypatch) -> None:
    """Row 0 (tool_choice required) is masked as a Matcher of the same request masks it,
    token by token along a valid call; row 1 (no constraint) is never touched."""
    import numpy as np
    from response_templates import Matcher, Vocabulary

    vocab = Vocabulary.builtin("o200k_base")
    proc = _processor(monkeypatch)
    assert proc.is_argmax_invariant() is False
    out0, out1 = [], []
    proc.update_state(LP.BatchUpdate(2, [], [(0, _params("required"), [1, 2], out0), (1, _params(None), [3], out1)], []))
    reference = Matcher(h.load_template("qwen3"), vocab, tools=WEATHER_TOOLS, tool_choice="required")
    auto = Matcher(h.load_template("qwen3"), vocab, tools=WEATHER_TOOLS, tool_choice="auto")
    width = reference.vocab_size + 45  # vLLM pads the logits past the tokenizer
    for n, token in enumerate(vocab.encode(VALID_CALL)):
        logits = np.zeros((2, width), dtype=np.float32)
        assert proc.apply(logits) is logits
        allowed = set(reference.allowed_token_ids())
        assert _masked(logits[0]) == set(range(width)) - allowed
        assert not _masked(logits[1])
        if n == 0:  # required forbids tokens that auto allows (an answer without a call)
            assert set(auto.allowed_token_ids()) - allowed
        assert token in allowed
        reference.consume_token(token)
        out0.append(token)
        out1.append(7)
        proc.update_state(None)
    assert proc.rows[0].matcher.is_accepting()
    # One "<|im_end|>" (text in o200k, not a special token) may end the turn, but the implicit
    # field's close may stand once more after the calls (the parser reads it wherever no region
    # is open; DeepSeek V3.1 and Kimi K2 write two alternatives there): write the second one.
    assert not reference.is_stopped()
    for token in vocab.encode(SECOND_CLOSE):
        logits = np.zeros((2, width), dtype=np.float32)
        proc.apply(logits)
        assert _masked(logits[0]) == set(range(width)) - set(reference.allowed_token_ids())
        assert token not in _masked(logits[0])
        assert reference.consume_token(token)
        out0.append(token)
        out1.append(7)
        proc.update_state(None)
    # The response is complete (only EOS can follow): EOS only until the row samples it, as
    # vLLM's structured outputs mask a stopped matcher; then the row is left alone (tokens past
    # EOS, with ignore_eos, are not read).
    assert reference.is_stopped()
    eos = vocab.eos_token_ids
    logits = np.zeros((2, width), dtype=np.float32)
    proc.apply(logits)
    assert _masked(logits[0]) == set(range(width)) - set(eos)
    out0.extend([eos[0], 7])
    proc.update_state(None)
    assert 0 in proc.rows
    logits = np.zeros((2, width), dtype=np.float32)
    proc.apply(logits)
    assert not _masked(logits[0]) and not _masked(logits[1])


def test_logits_processor_follows_the_batch(monkeypatch) -> None:
    """Removed, moved (one way) and swapped rows: the mask goes where vLLM moves the request."""
    import numpy as np

    proc = _processor(monkeypatch)
    outputs = {0: [], 1: [], 2: []}
    proc.update_state(LP.BatchUpdate(3, [], [(0, _params("required"), [], outputs[0]), (1, _params(None), [], outputs[1]), (2, _params("get_weather"), [], outputs[2])], []))

    def masked_rows(batch):
        logits = np.zeros((batch, 200100), dtype=np.float32)
        proc.apply(logits)
        return [bool(_masked(row)) for row in logits]

    assert masked_rows(3) == [True, False, True]
    proc.update_state(LP.BatchUpdate(3, [], [], [(0, 1, LP.MoveDirectionality.SWAP)]))
    assert masked_rows(3) == [False, True, True]
    proc.update_state(LP.BatchUpdate(2, [1], [], [(2, 1, LP.MoveDirectionality.UNIDIRECTIONAL)]))
    assert masked_rows(2) == [False, True]
    proc.update_state(LP.BatchUpdate(2, [], [(1, _params(None), [], [])], []))  # slot reused
    assert masked_rows(2) == [False, False]


def test_logits_processor_rejects_a_malformed_constraint() -> None:
    from vllm import SamplingParams

    with pytest.raises(ValueError, match="not JSON"):
        LOGITS.ResponseTemplateLogitsProcessor.validate_params(SamplingParams(extra_args={"response_templates": "{"}))
    with pytest.raises(ValueError, match="template"):
        LOGITS.ResponseTemplateLogitsProcessor.validate_params(SamplingParams(extra_args={"response_templates": "{}"}))
    LOGITS.ResponseTemplateLogitsProcessor.validate_params(SamplingParams())


@pytest.mark.parametrize("tool_choice", ["required", {"type": "function", "function": {"name": "get_weather"}}, "strict"])
def test_tool_parser_hands_guarantees_to_the_logits_processor(monkeypatch, tool_choice) -> None:
    """Strict tools and tool_choice required / named: refused (HTTP 400's ValueError) when no
    logits processor runs, passed to it through vllm_xargs -> SamplingParams.extra_args
    when one does; plain auto requests get nothing."""
    tools = json.loads(json.dumps(WEATHER_TOOLS))
    if tool_choice == "strict":
        tools[0]["function"]["strict"] = True
        tool_choice = "auto"
    tokenizer = h.FixtureTokenizer(h.load_template("qwen3"))
    cls = h.parser_class(V, tokenizer, OURS, OURS)
    parser = cls(tokenizer, tools, chat_template_kwargs={}, model_config=None)
    monkeypatch.setenv(plugin.LOGITS_PROCESSOR_ENV, "0")
    with pytest.raises(ValueError, match="logits processor"):
        parser.adjust_request(h.make_request(V, tools, tool_choice=tool_choice))
    monkeypatch.setenv(plugin.LOGITS_PROCESSOR_ENV, "1")
    request = parser.adjust_request(h.make_request(V, tools, tool_choice=tool_choice))
    params = request.to_sampling_params(64, {})
    LOGITS.ResponseTemplateLogitsProcessor.validate_params(params)
    args = json.loads(params.extra_args[plugin.EXTRA_ARGS_KEY])
    assert args["template"] == h.load_template("qwen3") and args["tools"] == tools
    assert args["tool_choice"] == ("get_weather" if isinstance(tool_choice, dict) else tool_choice)
    plain = parser.adjust_request(h.make_request(V, WEATHER_TOOLS, tool_choice="auto"))
    assert plugin.EXTRA_ARGS_KEY not in (plain.vllm_xargs or {})
    with pytest.raises(ValueError, match="parallel_tool_calls"):
        parser.adjust_request(h.make_request(V, WEATHER_TOOLS, parallel_tool_calls=False))
