"""Token masks on real torch tensors: ``apply_token_bitmask_inplace`` and
``fill_next_token_bitmask_batch`` on tensors, transformers' ``generate`` with
``ResponseTemplateLogitsProcessor`` on a tiny random-weight model, vLLM 0.33's ``Sampler`` with
the v1 logits processor, and SGLang 0.5.23's ``SamplingBatchInfo`` with the grammar backend.

Expected values never come from the code under test: masked entries from the bitmask layout
(bit ``i`` of word ``w`` is token ``32 w + i``) computed bit by bit in Python, the allowed sets
from a `Matcher` walked along the same tokens, generated outputs checked by ``parse_response``
with ``strict_tools=True`` and by ``jsonschema`` on the arguments.

Needs torch (``pip install torch numpy``; PyPI's build is CUDA's, it runs on the CPU); the
module skips without it. The vLLM tests need vLLM (``python/scripts/install-vllm.sh`` into the
same environment, plus ``llguidance``, which vLLM's sampler module imports); the SGLang tests
need SGLang (``python/scripts/install-sglang.sh``, plus ``dill``); each skips without them.
"""

import importlib.util
import json
import os
from types import SimpleNamespace

import pytest

# A stand-in for torch (test_sglang.py's, when SGLang is installed without torch) has no file.
_spec = importlib.util.find_spec("torch")
if _spec is None or not _spec.origin:
    pytest.skip(
        "torch is not installed (pip install torch numpy: these tests run real tensors)",
        allow_module_level=True,
    )

import numpy as np  # noqa: E402
import torch  # noqa: E402

import response_templates as rt  # noqa: E402
from response_templates.masks import (  # noqa: E402
    Matcher,
    Vocabulary,
    allocate_token_bitmask,
    apply_token_bitmask_inplace,
    fill_next_token_bitmask_batch,
)
from test_masks import WEATHER, bits, format_checker  # noqa: E402

jsonschema = pytest.importorskip("jsonschema")

# Schemas whose strings have no pattern or format: random weights finish them quickly.
ALARM = {
    "type": "function",
    "function": {
        "name": "set_alarm",
        "parameters": {
            "type": "object",
            "properties": {
                "hour": {"type": "integer"},
                "days": {"type": "array", "items": {"enum": ["mon", "tue", "wed"]}},
                "loud": {"type": "boolean"},
                "label": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            },
            "required": ["hour", "days"],
            "additionalProperties": False,
        },
    },
}
TOOLS = [WEATHER, ALARM]
DTYPES = [torch.float32, torch.float16, torch.bfloat16]
DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """One torch thread: on a busy 2-core machine two threads spin against each other (the
    generate test took 17 s with two, 0.9 s with one)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


# --- apply_token_bitmask_inplace on tensors ------------------------------------------------


def random_bitmask(rng, rows, words):
    """Random int32 words, with all-zero and all-one words mixed in."""
    mask = rng.integers(-(2**31), 2**31, size=(rows, words), dtype=np.int64).astype(np.int32)
    mask[:, 1] = 0
    mask[:, 2] = -1
    return mask


def expected_finite(mask_row, width):
    """Which of `width` logits stay finite under one bitmask row, by the layout's formula:
    token t is allowed iff t < 32 * words and bit t % 32 of word t // 32 is set."""
    allowed = set(bits(mask_row, 32 * len(mask_row)))
    return [t in allowed for t in range(width)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d).split(".")[-1])
@pytest.mark.parametrize("width", [1000, 1024, 1050])  # under, at and past 32 * words
@pytest.mark.parametrize("mask_kind", ["torch", "numpy"])
def test_apply_masks_2d_logits_by_the_formula(device, dtype, width, mask_kind):
    rng = np.random.default_rng(width)
    mask = random_bitmask(rng, 3, 32)  # 1024 tokens
    original = torch.randn(3, width, generator=torch.Generator().manual_seed(width)).to(dtype)
    logits = original.clone().to(device)
    pointer = logits.data_ptr()
    bitmask = torch.from_numpy(mask) if mask_kind == "torch" else mask
    assert apply_token_bitmask_inplace(logits, bitmask) is None
    assert logits.data_ptr() == pointer and logits.dtype == dtype and logits.device.type == device
    logits = logits.cpu()
    for row in range(3):
        keep = torch.tensor(expected_finite(mask[row], width))
        assert torch.equal(logits[row][keep], original[row][keep]), row
        assert torch.isneginf(logits[row][~keep]).all(), row
    # numpy's path of the same function gives the same float32 values.
    reference = original.float().numpy()
    apply_token_bitmask_inplace(reference, mask)
    assert np.array_equal(logits.float().numpy(), reference)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d).split(".")[-1])
def test_apply_masks_1d_logits_and_row_views(dtype):
    rng = np.random.default_rng(7)
    mask = random_bitmask(rng, 2, 40)
    width = 40 * 32 - 5
    original = torch.randn(2, width, generator=torch.Generator().manual_seed(7)).to(dtype)
    # 1-D logits with a 1-D bitmask (torch and numpy).
    for row_mask in (torch.from_numpy(mask[0]), mask[0]):
        flat = original[0].clone()
        apply_token_bitmask_inplace(flat, row_mask)
        keep = torch.tensor(expected_finite(mask[0], width))
        assert torch.equal(flat[keep], original[0][keep])
        assert torch.isneginf(flat[~keep]).all()
    # A row of a batch, a transposed tensor and a strided slice: the caller's tensor is written.
    batch = original.clone()
    apply_token_bitmask_inplace(batch[1], mask[1])
    assert torch.equal(batch[0], original[0])
    keep1 = torch.tensor(expected_finite(mask[1], width))
    assert torch.isneginf(batch[1][~keep1]).all() and torch.equal(batch[1][keep1], original[1][keep1])
    transposed = original.t().contiguous().t()  # [2, width], column-major
    assert not transposed.is_contiguous()
    apply_token_bitmask_inplace(transposed, mask)
    assert torch.equal(transposed, batch_applied(original, mask))
    wide = torch.zeros(2, 2 * width, dtype=dtype)
    wide[:, ::2] = original
    strided = wide[:, ::2]
    apply_token_bitmask_inplace(strided, torch.from_numpy(mask))
    assert torch.equal(wide[:, ::2], batch_applied(original, mask))
    assert (wide[:, 1::2] == 0).all()  # the entries between untouched


def batch_applied(original, mask):
    """`original` with the formula's masked entries set to -inf (rows of a 2-D mask)."""
    out = original.clone()
    for row in range(out.shape[0]):
        keep = torch.tensor(expected_finite(mask[row], out.shape[1]))
        out[row][~keep] = float("-inf")
    return out


def test_apply_refuses_what_it_cannot_mask():
    logits = torch.zeros(2, 64)
    mask = allocate_token_bitmask(2, 64)
    with pytest.raises(TypeError, match="int32"):
        apply_token_bitmask_inplace(logits, torch.from_numpy(mask).to(torch.int64))
    with pytest.raises(TypeError, match="int32"):
        apply_token_bitmask_inplace(logits, torch.ones(2, 64, dtype=torch.bool))
    with pytest.raises(TypeError, match="int32"):
        apply_token_bitmask_inplace(logits, mask.astype(np.uint32))
    with pytest.raises(ValueError, match="batch"):
        apply_token_bitmask_inplace(logits, mask[:1])
    with pytest.raises(ValueError, match="batch"):
        apply_token_bitmask_inplace(logits, mask[0])
    # Three dimensions are refused (a [1, 2, vocab] tensor was masked by broadcasting token
    # 0's bit over everything), as numpy's path refuses them.
    for three in (torch.zeros(1, 2, 64), np.zeros((1, 2, 64), np.float32)):
        before = three.copy() if isinstance(three, np.ndarray) else three.clone()
        with pytest.raises(ValueError, match="dimensions"):
            apply_token_bitmask_inplace(three, np.zeros((1, 2), np.int32))
        assert (three == before).all()
    with pytest.raises(ValueError, match="dimensions"):
        apply_token_bitmask_inplace(logits, torch.zeros(2, 1, 2, dtype=torch.int32))


def test_apply_takes_read_only_and_reversed_numpy_bitmasks():
    mask = random_bitmask(np.random.default_rng(3), 2, 4)
    ro = mask.copy()
    ro.flags.writeable = False
    reversed_rows = mask[::-1].copy()[::-1]  # negative strides, the same values
    for bitmask in (ro, reversed_rows):
        logits = torch.zeros(2, 128)
        apply_token_bitmask_inplace(logits, bitmask)
        assert torch.equal(logits, batch_applied(torch.zeros(2, 128), mask))


# --- fill_next_token_bitmask_batch into tensors --------------------------------------------


@pytest.fixture(scope="module")
def o200k():
    return Vocabulary.builtin("o200k_base")


def test_batch_fill_writes_cpu_tensors_in_place(o200k):
    ms = [Matcher("qwen3", o200k, tools=TOOLS, tool_choice=c) for c in ("required", "auto")]
    assert ms[0].consume_tokens(o200k.encode('<tool_call>{"name":"'))
    words = (o200k.vocab_size + 31) // 32
    tensor = torch.full((3, words + 2), -1, dtype=torch.int32)  # wider rows, as padded logits
    pointer = tensor.data_ptr()
    fill_next_token_bitmask_batch(ms, tensor, [2, 0])
    assert tensor.data_ptr() == pointer
    for row, m in ((2, ms[0]), (0, ms[1])):
        assert bits(tensor[row].numpy(), o200k.vocab_size) == m.allowed_token_ids()
        assert (tensor[row, words:] == 0).all()
    assert (tensor[1] == -1).all()
    with pytest.raises(ValueError, match="contiguous"):
        fill_next_token_bitmask_batch(ms, torch.zeros(words + 1, 3, dtype=torch.int32).t()[:2])
    with pytest.raises(TypeError, match="int32"):
        fill_next_token_bitmask_batch(ms, torch.zeros(2, words, dtype=torch.int64))
    # A single matcher takes buffers; a tensor is refused with the way out named.
    with pytest.raises(TypeError, match="numpy"):
        ms[0].fill_next_token_bitmask(tensor, 0)
    ms[0].fill_next_token_bitmask(tensor.numpy(), 1)
    assert torch.equal(tensor[1], tensor[2])


# --- checking generated outputs --------------------------------------------------------------


def keeps_the_contract(text, tools, tool_choice):
    """Parses a generated output with the qwen3 template and strict tools (ContractViolation
    if a call breaks its schema) and checks tool_choice and the arguments with jsonschema.
    Returns the message."""
    message = rt.parse_response(text, rt.Template.vendored("qwen3"), prefix="", tools=tools,
                                strict_tools=True)
    calls = message.get("tool_calls") or []
    if tool_choice != "auto":
        assert calls, text
    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in tools}
    checker = format_checker(jsonschema)
    for call in calls:
        name = call["function"]["name"]
        if tool_choice not in ("auto", "required"):
            assert name == tool_choice, text
        arguments = call["function"]["arguments"]
        if isinstance(arguments, str):
            arguments = json.loads(arguments)
        jsonschema.validate(arguments, schemas[name], format_checker=checker)
    return message


def check_masked(logits_row, matcher, width):
    """The finite entries of a masked row are exactly the tokens `matcher` (a reference walked
    along the same tokens) allows, read from its bitmask with numpy's bit order."""
    row = allocate_token_bitmask(1, matcher.vocab_size)
    matcher.fill_next_token_bitmask(row)
    allowed = np.unpackbits(row[0].view(np.uint8), bitorder="little")[: matcher.vocab_size]
    expected = np.zeros(width, dtype=bool)
    expected[: min(width, matcher.vocab_size)] = allowed[:width].astype(bool)
    assert np.array_equal(torch.isfinite(logits_row).cpu().numpy(), expected)


# --- transformers: generate with ResponseTemplateLogitsProcessor ------------------------------


@pytest.fixture(scope="module")
def tiny_model():
    transformers = pytest.importorskip("transformers")
    from test_install import byte_level_tokenizer

    tok = byte_level_tokenizer(rt.Template.vendored("qwen3").to_dict())
    tok.eos_token = "<|im_end|>"
    config = transformers.LlamaConfig(
        vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=1,
        num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=1024,
        eos_token_id=tok.eos_token_id, pad_token_id=tok.eos_token_id, bos_token_id=None,
    )
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(config).eval()
    return tok, model


def steer_processor(tok):
    """A bias toward closing quotes and brackets, the call's delimiters and EOS, so that random
    weights finish calls within a few hundred tokens. The masks decide what is allowed; the
    bias only shortens the samples."""
    from transformers import LogitsProcessor

    pieces = ['"', '"}', "}", "}}", "]", "</tool_call>", "<tool_call>", "\n"]
    ids = [i for piece in pieces for i in tok.encode(piece, add_special_tokens=False)]
    bias = torch.zeros(len(tok))
    bias[sorted(set(ids + [tok.eos_token_id]))] = 4.0

    class Steer(LogitsProcessor):
        def __call__(self, input_ids, scores):
            return scores + bias.to(scores.device, scores.dtype)

    return Steer()


@pytest.mark.parametrize("tool_choice", ["required", "set_alarm"])
def test_transformers_generate_keeps_the_contract(tiny_model, tool_choice):
    """Sampled batches from a random-weight Llama under the processor (one processor for every
    generate call): every processed score row is masked to the allowed set of a Matcher walked
    along the row's tokens, and every finished output parses and keeps the contract."""
    from response_templates.masks import ResponseTemplateLogitsProcessor

    tok, model = tiny_model
    assert ResponseTemplateLogitsProcessor is not None
    processor = ResponseTemplateLogitsProcessor("qwen3", tok, tools=TOOLS, tool_choice=tool_choice)
    reference = Matcher("qwen3", tok, tools=TOOLS, tool_choice=tool_choice)
    eos = tok.eos_token_id
    prompt = torch.tensor([tok.encode("<|im_start|>assistant\n", add_special_tokens=False)] * 3)
    finished = 0
    for seed, sample in ((0, True), (1, True), (2, True), (3, False)):
        torch.manual_seed(seed)
        out = model.generate(
            prompt, attention_mask=torch.ones_like(prompt), do_sample=sample, top_k=0,
            max_new_tokens=160, logits_processor=[steer_processor(tok), processor],
            output_scores=True, return_dict_in_generate=True,
        )
        for row, ids in enumerate(out.sequences[:, prompt.shape[1]:].tolist()):
            m = reference.copy()
            for step, token in enumerate(ids):
                check_masked(out.scores[step][row], m, len(tok))
                if m.is_stopped():
                    break
                assert m.consume_token(token), (seed, row, step)
            if eos in ids:
                finished += 1
                keeps_the_contract(tok.decode(ids[: ids.index(eos) + 1]), TOOLS, tool_choice)
    assert finished >= 6, f"only {finished} of 12 rows finished"


# --- vLLM 0.33: the v1 logits processor inside vLLM's Sampler --------------------------------


class Scripted:
    """Logits of a model that has learned the format: random N(0, 1) over o200k's 200,000
    tokens, plus a bias on the next token of a script (a valid output) for each scripted row.
    A sampled token that is not the script's next one is a deviation: the script goes on from
    where it was, so outputs are the script with random tokens mixed in wherever the masks
    allow them. The masks decide what is allowed; the script only makes outputs finish."""

    def __init__(self, o200k, width, scripts, seed, weight=16.0):
        self.width, self.weight = width, weight
        self.scripts = {row: o200k.encode(text) + o200k.eos_token_ids[:1] for row, text in scripts.items()}
        self.at = dict.fromkeys(scripts, 0)
        self.gen = torch.Generator().manual_seed(seed)

    def logits(self, rows):
        out = torch.randn(rows, self.width, generator=self.gen)
        for row, script in self.scripts.items():
            out[row, script[min(self.at[row], len(script) - 1)]] += self.weight
        return out

    def advance(self, row, token):
        script = self.scripts.get(row)
        if script is not None and self.at[row] < len(script) and token == script[self.at[row]]:
            self.at[row] += 1


# Valid outputs in the form the constrained grammar writes calls (compact JSON).
SCRIPTS = {
    "required": '<tool_call>\n{"name":"get_weather","arguments":{"city":"Oslo"}}\n</tool_call><|im_end|>',
    "set_alarm": '<tool_call>\n{"name":"set_alarm","arguments":{"hour":7,"days":["mon","wed"],'
                 '"loud":true,"label":null}}\n</tool_call><|im_end|>',
}


def response_text(o200k, ids):
    """An output's text before its EOS (o200k's <|endoftext|>; qwen3's <|im_end|> is text
    there)."""
    eos = [n for n, t in enumerate(ids) if t in o200k.eos_token_ids]
    return o200k.decode(ids[: eos[0]] if eos else ids).decode("utf-8")


def vllm_classes():
    try:
        from vllm import SamplingParams
        from vllm.v1.sample.logits_processor import BatchUpdateBuilder, LogitsProcessors
        from vllm.v1.sample.metadata import SamplingMetadata
        from vllm.v1.sample.sampler import Sampler

        from response_templates import vllm as plugin
        from response_templates import vllm_logits
    except ImportError as exc:
        pytest.skip(f"vLLM's sampler does not import here ({exc}): install-vllm.sh and llguidance")
    return SimpleNamespace(
        SamplingParams=SamplingParams, BatchUpdateBuilder=BatchUpdateBuilder,
        LogitsProcessors=LogitsProcessors, SamplingMetadata=SamplingMetadata, Sampler=Sampler,
        plugin=plugin, logits=vllm_logits,
    )


def test_vllm_sampler_masks_constrained_rows(monkeypatch, o200k):
    """vLLM's Sampler (CPU) with the processor in its LogitsProcessors: requests added through
    vLLM's BatchUpdateBuilder (required, unconstrained, named; three rounds in the same slots),
    output lists grown in place as vLLM grows them. Each step the processor's apply masks the
    constrained rows of a float32 tensor to the allowed set of a Matcher walked along the same
    tokens and leaves the other row as it was; finished outputs keep the contract."""
    v = vllm_classes()
    monkeypatch.setenv(v.logits.TOKENIZER_ENV, "o200k_base")
    proc = v.logits.ResponseTemplateLogitsProcessor(SimpleNamespace(model_config=None),
                                                     torch.device("cpu"), False)
    procs = v.LogitsProcessors([proc])
    assert procs.non_argmax_invariant == [proc]
    sampler = v.Sampler()
    template = rt.Template.vendored("qwen3").to_dict()
    width = o200k.vocab_size + 45  # vLLM pads the logits past the tokenizer
    builder = v.BatchUpdateBuilder()
    choices = ["required", None, "set_alarm"]
    finished = 0
    for _round in range(3):
        model = Scripted(o200k, width, {0: SCRIPTS["required"], 2: SCRIPTS["set_alarm"]}, _round)
        outputs = [[] for _ in choices]
        refs = {}
        torch.manual_seed(_round)  # the sampler's draws (no per-request generators)
        for row, choice in enumerate(choices):
            extra = {}
            if choice is not None:
                extra = {v.plugin.EXTRA_ARGS_KEY: v.plugin.constraint_extra_args(template, TOOLS, choice)}
                refs[row] = Matcher("qwen3", o200k, tools=TOOLS, tool_choice=choice)
            builder.added.append((row, v.SamplingParams(extra_args=extra), [1, 2, 3], outputs[row]))
        ended = set()
        for _step in range(100):
            proc.update_state(builder.get_and_reset(len(choices)))
            live = {row: m for row, m in refs.items() if row not in ended}
            if not live:
                break
            logits = model.logits(len(choices))
            masked = logits.clone()
            assert proc.apply(masked) is masked
            for row, m in live.items():
                check_masked(masked[row], m, width)
            assert torch.equal(masked[1], logits[1])
            metadata = v.SamplingMetadata(
                temperature=torch.ones(len(choices)), all_greedy=False, all_random=True,
                top_p=None, top_k=None,
                generators={},
                max_num_logprobs=None, no_penalties=True, prompt_token_ids=None,
                frequency_penalties=torch.zeros(len(choices)),
                presence_penalties=torch.zeros(len(choices)),
                repetition_penalties=torch.ones(len(choices)), output_token_ids=outputs,
                allowed_token_ids_mask=None, bad_words_token_ids={}, logitsprocs=procs,
            )
            sampled = sampler(logits, metadata).sampled_token_ids.flatten().tolist()
            for row, token in enumerate(sampled):
                outputs[row].append(token)
                model.advance(row, token)
                if row in live:
                    assert live[row].consume_token(token), (row, token)
                    if token in o200k.eos_token_ids:  # vLLM finishes the request
                        ended.add(row)
                        builder.removed_append(row)
        for row in ended:
            finished += 1
            keeps_the_contract(response_text(o200k, outputs[row]), TOOLS, choices[row])
    assert finished >= 4, f"only {finished} of 6 constrained requests finished"


# --- SGLang 0.5.23: the grammar backend's masks in SamplingBatchInfo --------------------------


def sglang_classes():
    try:
        from sglang.srt.constrained.base_grammar_backend import GRAMMAR_BACKEND_REGISTRY
        from sglang.srt.sampling.sampling_batch_info import SamplingBatchInfo

        from response_templates import sglang as rts
    except ImportError as exc:
        pytest.skip(f"SGLang's sampling modules do not import here ({exc}): install-sglang.sh and dill")
    return SimpleNamespace(registry=GRAMMAR_BACKEND_REGISTRY, SamplingBatchInfo=SamplingBatchInfo, rts=rts)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["float32", "bfloat16"])
def test_sglang_batch_info_masks_grammar_rows(monkeypatch, o200k, dtype):
    """SGLang's own SamplingBatchInfo.update_regex_vocab_mask and apply_logits_bias (device
    "cpu") with our grammars (required and named, from the structural tag our tool detector
    reports) beside a request without one: the mask is an int32 CPU tensor, constrained rows
    are masked to a Matcher's allowed set, the other row is untouched, and finished outputs
    keep the contract."""
    s = sglang_classes()
    s.rts.register()
    monkeypatch.setenv(s.rts.TEMPLATE_ENV, "qwen3")
    width = o200k.vocab_size + 45
    backend = s.registry["response_templates"](None, o200k, width, set(o200k.eos_token_ids))
    choices = ["required", None, {"type": "function", "function": {"name": "set_alarm"}}]
    finished = 0
    for _round in range(3):
        model = Scripted(o200k, width, {0: SCRIPTS["required"], 2: SCRIPTS["set_alarm"]}, 100 + _round)
        grammars, refs = [], {}
        for row, choice in enumerate(choices):
            if choice is None:
                grammars.append(None)
                continue
            tag = {"type": "structural_tag",
                   "format": {"type": s.rts.TAG_FORMAT, "tools": TOOLS, "tool_choice": choice}}
            grammar = backend._init_value_dispatch(("structural_tag", json.dumps(tag)), False)
            assert isinstance(grammar, s.rts.ResponseTemplatesGrammar), grammar
            grammars.append(grammar)
            refs[row] = Matcher("qwen3", o200k, tools=TOOLS, tool_choice=choice)
        n = len(choices)
        info = s.SamplingBatchInfo(
            temperatures=torch.ones(n, 1), top_ps=torch.ones(n), top_ks=torch.full((n,), width),
            min_ps=torch.zeros(n), is_all_greedy=False, is_any_greedy=False,
            need_top_p_sampling=False, need_top_k_sampling=False, need_min_p_sampling=False,
            vocab_size=width, grammars=grammars, device="cpu",
        )
        outputs = [[] for _ in choices]
        for _step in range(100):
            live = {row: m for row, m in refs.items() if not grammars[row].is_terminated()}
            if not live:
                break
            info.update_regex_vocab_mask()
            mask = info.grammar_mask.vocab_mask
            assert isinstance(mask, torch.Tensor) and mask.dtype == torch.int32
            assert mask.device.type == "cpu" and mask.shape == (n, (width + 31) // 32)
            logits = model.logits(n).to(dtype)
            before = logits.clone()
            info.apply_logits_bias(logits)
            for row, m in live.items():
                check_masked(logits[row], m, width)
                assert torch.equal(logits[row][torch.isfinite(logits[row])],
                                   before[row][torch.isfinite(logits[row])])
            assert torch.equal(logits[1], before[1])
            sampled = torch.multinomial(torch.softmax(logits.float(), -1), 1, generator=model.gen)
            for row, token in enumerate(sampled.flatten().tolist()):
                outputs[row].append(token)
                model.advance(row, token)
                if row in live:
                    grammars[row].accept_token(token)
                    assert live[row].consume_token(token), (row, token)
        for row in refs:
            if grammars[row].is_terminated():  # SGLang finishes the request
                finished += 1
                choice = choices[row]
                named = choice if isinstance(choice, str) else choice["function"]["name"]
                keeps_the_contract(response_text(o200k, outputs[row]), TOOLS, named)
    assert finished >= 4, f"only {finished} of 6 constrained requests finished"
