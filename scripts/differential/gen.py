#!/usr/bin/env python3
"""Seeded random generator of differential cases (JSON Lines on stdout).

usage: gen.py [--seed N] [--count N] [--avoid TAG,TAG] [--only TAG,TAG] [--no-twins]
              [--python-call-list]

Each case follows the schema of ../shared/README.md (id, origin, template, prefix,
text, chunks, tools) plus "tags": the risky features it uses (regex edges, known
deliberate differences, Python-isms of the reference). A case fed in chunks is
followed by its one-shot twin (same case, "chunks": null, "twin_of": the base id):
our engine must give the same result for both (DESIGN: streaming == one-shot).

Templates are built from the features of the format: defaults, start_anchor
(literal / list / pattern), 1-4 fields, literal / literal-list / regex delimiters
(drawn from pools of realistic ones), at most one implicit field, fields without a
close, every content parser and its arguments, repeats, join, optional, transforms
with {content}, {content.x} and named groups, transform_each. The python-call-list
parser (transformers >= 5.24.0) is drawn only with --python-call-list, so that the
cases of a seed stay the same without it (and the 5.23.0 reference, which does not know
the parser, sees none). Texts are assembled
from the template's delimiters (complete, partial, doubled, nested, adjacent,
near misses) around bodies that fit (or break) the content parsers, and kept
below 2 KB because the reference is slow on big inputs.

Tags (a case may have several):
  dollar_alt        a close with a `|$` alternative, also in a trailing group
                    (`</answer>(?:<\\|end\\|>|$)`; deliberate streaming difference)
  optional_suffix   a delimiter ending in an optional part (`\\s*`, `\\n?`)
  lookahead         a (trailing) look-ahead;  zero_width: a delimiter that can match ""
  unbounded         a delimiter of unbounded length (`[^<]*`, `.*?`);  lazy: `.*?`
  named_group       (?P<name>...) captures;  alternation;  regex_edge: ^ / $ / other anchors
  dup_name          a group name defined twice in a delimiter or tag_pattern (the regex module
                    merges the copies: the one that closed last is the value)
  close_group       named groups in a close pattern (transformers 5.24: they join the open's
                    captures and win over them; a group that did not take part is not added;
                    compare with the 5.24 reference: ORACLE_TRANSFORMERS=5.24.0)
  prefix_literals   a literal list where one literal is a prefix of another
  multibyte         non-ASCII delimiters;  unsupported_regex: outside the DFA dialect
  invalid_template  the template must fail to load;  loose_typing / lazy_validation:
                    template values the reference accepts or checks only when used
  py_whitespace     \\x1c-\\x1f (whitespace for Python's str.strip, not for Rust)
  py_numeric_edge   int()/float() inputs only Python takes (1_000, unicode digits)
  nonfinite         NaN / Infinity values;  bigint: integers beyond 64 bits
  deep_json         JSON nested deeper than serde_json's default limit (128)
  backref           a back-reference in an xml-inline tag_pattern
  json_quirk        JSON that Python's json module treats specially (-0, dup keys)
  defaults_edge     defaults that collide with repeats/join fields
  tools             tool schemas given (argument casting);  null_prefix: prefix is null
  python_call_list  a python-call-list field (--python-call-list; needs reference >= 5.24.0)
  prefill_split     the prefix ends inside the assistant message (prefilled open)
  chunks_1char / chunks_random / chunks_delims / chunks_empty: how the text is split
"""
import argparse
import json
import random
import re

# --------------------------------------------------------------------------- pools


def lit(v, tags=()):
    return {"kind": "lit", "v": v, "samples": [v], "tags": list(tags)}


def lits(vs, tags=()):
    t = list(tags)
    if any(a != b and a.startswith(b) for a in vs for b in vs):
        t.append("prefix_literals")
    return {"kind": "list", "v": list(vs), "samples": list(vs), "tags": t}


def rx(v, samples, tags=(), follow=None, groups=()):
    return {"kind": "re", "v": v, "samples": list(samples), "tags": list(tags),
            "follow": follow, "groups": list(groups)}


# (open, close) pairs of generic regions; close None = the field runs to the end.
GENERIC_PAIRS = [(lit(o), lit(c)) for o, c in [
    ("<think>", "</think>"), ("<|START_THINKING|>", "<|END_THINKING|>"),
    ("<|START_RESPONSE|>", "<|END_RESPONSE|>"), ("<answer>", "</answer>"),
    ("<x>", "</x>"), ("<a>", "</a>"), ("<meta>", "</meta>"), ("<<", ">>"), ("[", "]"),
    ("<|channel|>analysis<|message|>", "<|end|>"), ("<|channel|>final<|message|>", "<|return|>"),
    ("<|channel>thought\n", "<channel|>"),
]] + [
    (lit("🔧", ["multibyte"]), lit("🔚", ["multibyte"])),
    (lit("<｜think▁begin｜>", ["multibyte"]), lit("<｜think▁end｜>", ["multibyte"])),
    (lit("```json\n"), lit("\n```")),
    (lit("<response>\n"), lit("</response>")),
    (lits(["<think>", "<thinking>"]), lits(["</think>", "</thinking>"])),
    (lits(["<a>", "<bb>"]), lits(["</a>", "</bb>"])),
    (lits(["<t", "<tt"]), lits(["END", "ENDX"])),
    (lits(["<response>", "<response>\n"]), lits(["</response>", "\n</response>"])),
    (lit("<response>"), rx(r"\n?</response>", ["</response>", "\n</response>"])),
    (rx(r"<(?:think|thinking)>", ["<think>", "<thinking>"], ["alternation"]),
     rx(r"</(?:think|thinking)>", ["</think>", "</thinking>"], ["alternation"])),
    (rx(r"<think>\s*", ["<think>", "<think>\n", "<think> \n "], ["optional_suffix"]),
     rx(r"\s*</think>", ["</think>", "\n</think>", " \n</think>"])),
    (lit("<think>"), rx(r"</think>\s*", ["</think>", "</think>\n\n"], ["optional_suffix"])),
    (rx(r"(?=[\s\S]*?</think>)", [""], ["lookahead", "zero_width", "unbounded", "lazy"]), lit("</think>")),
    (rx(r"(?:<\|a\|>)?[^<]*<\|b\|>", ["<|a|><|b|>", "<|b|>", "<|a|>model<|b|>", "junk <|b|>"], ["unbounded"]),
     lit("<|e|>")),
    (rx(r"<\|start\|>.*?<\|message\|>", ["<|start|><|message|>", "<|start|>assistant<|channel|>final<|message|>"],
        ["unbounded", "lazy"]), rx(r"<\|end\|>|<\|return\|>", ["<|end|>", "<|return|>"], ["alternation"])),
    (lit("<x>"), rx(r"</x>|$", ["</x>", ""], ["dollar_alt", "regex_edge"])),
    (lit("<note>"), rx(r"(?:\n|$)", ["\n", ""], ["dollar_alt", "regex_edge"])),
    # `$` / a look-ahead ending an alternative of a trailing group (split into DFA branches).
    (lit("<x>"), rx(r"(?:</x>|$)", ["</x>", ""], ["dollar_alt", "regex_edge"])),
    (lit("<a>"), rx(r"<b>(?:</b>|$)", ["<b></b>", "<b>"], ["dollar_alt", "regex_edge"])),
    (lit("<answer>"), rx(r"</answer>(?:<\|end\|>|$)", ["</answer><|end|>", "</answer>"],
                         ["dollar_alt", "regex_edge"])),
    (lit("<b>"), rx(r"</b>(?:\n|(?=\s*<))", ["</b>\n", "</b><", "</b> <"], ["lookahead"])),
    (rx(r"(?:^|<think>\s*)", ["<think>", "<think>\n"], ["regex_edge", "zero_width", "optional_suffix"]),
     lit("</think>")),
    (lit("<b>"), rx(r"</b>(?=\s*<)", ["</b><", "</b>\n<"], ["lookahead"])),
    (lit("<c>"), rx(r"</c>$", ["</c>"], ["regex_edge"])),
    (lit("<answer>"), rx(r"</answer>(?:<\|end\|>)?", ["</answer>", "</answer><|end|>"], ["optional_suffix"])),
    (rx(r"<think>(?:\n\n)?", ["<think>", "<think>\n\n"], ["optional_suffix"]), lit("</think>")),
    # Split branches whose later branch is longer: each delimiter contributes only its
    # preferred (first-branch) match; pairs with the literal `<t>\n` opens below overlap it.
    (rx(r"<t>|<t>\n(?=\n)", ["<t>", "<t>\n\n"], ["lookahead", "alternation"]), lit("</t>")),
    (lits(["<t>\n"]), lit("</t2>")),
    (rx(r"x(|y$)", ["x", "xy"], ["dollar_alt", "regex_edge"]), lit("</x>")),
    # The rest of the Python dialect: POSIX classes, ASCII mode (ASCII case folding and word
    # boundaries next to non-ASCII word characters), named characters.
    (rx(r"<[[:alpha:]_]+>", ["<think>", "<a_b>", "<é>"], ["posix"]),
     rx(r"</[[:alpha:]_]+>", ["</think>", "</a_b>", "</é>"], ["posix"])),
    (rx(r"(?ai)<answer>", ["<answer>", "<ANSWER>", "<AnSwEr>"], ["ascii_mode"]), lit("</answer>")),
    (lit("<x>"), rx(r"(?a)\bEND\b", ["END", " END", "END "], ["ascii_mode", "word_boundary"])),
    (rx(r"(?a)\bTHINK:", ["THINK:", " THINK:"], ["ascii_mode", "word_boundary"]), lit("\n\n")),
    # Unicode word boundaries (the regex module's word characters; NOISE puts é, 東, digits
    # and `_` next to them).
    (rx(r"\bTHINK:", ["THINK:", " THINK:"], ["word_boundary"]), lit("\n\n")),
    (lit("<y>"), rx(r"\bEND\b", ["END", " END", "END "], ["word_boundary"])),
    (rx(r"<invoke\b[^>]*?\bname=\"[^\"]+\">", ['<invoke name="f">', '<invoke id="1" name="g">'],
        ["word_boundary", "lazy"]), lit("</invoke>")),
    # One-character look-behinds at the start of a delimiter (the DFAs' context slot): the
    # sample's first character is the one looked at (it stays in the text before the match).
    (rx(r"(?<![\w])THINK:", ["THINK:", " THINK:", "éTHINK:", "_THINK:"], ["look_behind"]), lit("\n\n")),
    (lit("<q>\""), rx(r'(?<!\\)"', ['"', '\\""'], ["look_behind"])),
    (lit("<v>"), rx(r"(?<=\])>>|<<", ["]>>", "<<", "x>><<"], ["look_behind", "alternation"])),
    (rx(r"(?<=\w)@", ["a@", "東@", "@"], ["look_behind"]), rx(r"(?<!-)\bEND\b", ["END", "-END END"],
                                                          ["look_behind", "word_boundary"])),
    (rx(r"\N{LEFT-POINTING DOUBLE ANGLE QUOTATION MARK}", ["«"], ["named_char", "multibyte"]),
     rx(r"\N{RIGHT-POINTING DOUBLE ANGLE QUOTATION MARK}", ["»"], ["named_char", "multibyte"])),
]

# (open, close) pairs of tool-call regions (bodies are JSON calls).
TOOL_PAIRS = [
    (lit("<tool_call>"), lit("</tool_call>")),
    (lit("<|START_ACTION|>"), lit("<|END_ACTION|>")),
    (lit("<｜tool▁call▁begin｜>", ["multibyte"]), lit("<｜tool▁call▁end｜>", ["multibyte"])),
    (lit("[TOOL_CALLS]"), None),
    (rx(r"\[TOOL_CALLS\]\s*", ["[TOOL_CALLS]", "[TOOL_CALLS] "], ["optional_suffix"]), lit("</s>")),
    (lits(["<tool_call>", "<tool_call>\n"]), lits(["</tool_call>", "</tool_call>\n"])),
    (rx(r"<tool_call>\s*", ["<tool_call>", "<tool_call>\n", "<tool_call>  \n"], ["optional_suffix"]),
     rx(r"\s*</tool_call>", ["</tool_call>", "\n</tool_call>"])),
    (rx(r"\s*<tool_call>", ["<tool_call>", "\n<tool_call>", " <tool_call>"]), lit("</tool_call>")),
    (rx(r"(?<=\n)<tool_call>", ["\n<tool_call>", "<tool_call>"], ["look_behind"]), lit("</tool_call>")),
    (rx(r"<tool_call>\s*", ["<tool_call>\n"], ["optional_suffix"]),
     rx(r"</tool_call>|$", ["</tool_call>", ""], ["dollar_alt", "regex_edge"])),
    (lit("<tools>"), lits(["</tools>", "<|im_end|>", "<eos>"])),
    (lit("<tool_call>"), rx(r"</tool_call>(?:\n<\|im_end\|>)?", ["</tool_call>", "</tool_call>\n<|im_end|>"],
                           ["optional_suffix"])),
]

# (open, close) pairs of python-call-list regions (bodies are `[name(key=value, ...), ...]`).
PCL_PAIRS = [
    (lit("<|tool_call_start|>"), lit("<|tool_call_end|>")),
    (lit("<tool_call>"), lit("</tool_call>")),
    (rx(r"<\|python_start\|>\s*", ["<|python_start|>", "<|python_start|>\n"], ["optional_suffix"]),
     lit("<|python_end|>")),
]

# Names the python-call-list grammar accepts (`[A-Za-z_][A-Za-z0-9_]*(?:[-.][A-Za-z0-9_]+)*`).
PCL_FUNCS = ["get_weather", "search", "read_file", "add", "f", "calc_2", "tools.search-web", "get-time"]
PCL_STRINGS = ["Paris", "", "a b", "naïve", "東京", "🙂 ok", "line\nbreak", "tab\t", "it's", 'say "hi"',
               "back\\slash", "a)] b, g(x=1)", "x,y:z", "{}", "3", "2.5", "true", "None", "[1, 2]", "/path/to"]

# Opens with a named group (the field gets a transform using {name}).
NAMED_PAIRS = [
    (rx(r"<f=(?P<name>\w+)>", ["<f={name}>"], ["named_group"], groups=["name"]), lit("</f>")),
    (rx(r"<tool_call>\s*<function=(?P<name>\w+)>\n?", ["<tool_call>\n<function={name}>\n", "<tool_call><function={name}>"],
        ["named_group", "optional_suffix"], groups=["name"]),
     rx(r"</function>\s*</tool_call>", ["</function>\n</tool_call>", "</function></tool_call>"])),
    (rx(r"<\|tool_call>call:(?P<name>\w+)", ["<|tool_call>call:{name}"], ["named_group", "optional_suffix"],
        groups=["name"]), lit("<tool_call|>")),
    (rx(r"<\|channel\|>commentary to=functions\.(?P<name>\w+).*?<\|message\|>",
        ["<|channel|>commentary to=functions.{name}<|message|>",
         "<|channel|>commentary to=functions.{name} <|constrain|>json<|message|>"],
        ["named_group", "unbounded", "lazy"], groups=["name"]), lit("<|call|>")),
    (rx(r"<cite source=(?P<name>\w+)>", ["<cite source={name}>"], ["named_group"], groups=["name"]), lit("</cite>")),
    (rx(r"<function=(?P<name>[\w.]+)>", ["<function={name}>"], ["named_group"], groups=["name"]),
     rx(r"</function>|$", ["</function>", ""], ["dollar_alt", "regex_edge"])),
    # A name defined twice: in two alternatives, or twice in a row (the later copy wins).
    (rx(r"<f=(?P<name>\w+)>|<call:(?P<name>\w+)>", ["<f={name}>", "<call:{name}>"],
        ["named_group", "dup_name", "alternation"], groups=["name"]), lit("</f>")),
    (rx(r"<use:(?P<name>\w+)(?: as (?P<name>\w+))?>", ["<use:{name}>", "<use:tmp as {name}>"],
        ["named_group", "dup_name", "optional_suffix"], groups=["name"]), lit("</use>")),
]

# Closes with named groups (transformers 5.24): the field's transform uses them. An optional
# group left out ("</f>") makes its placeholder undefined: a parse error in both engines.
CLOSE_NAMED = [
    rx(r"</call id=\"(?P<cid>\d+)\">", ['</call id="7">', '</call id="42">'], ["named_group", "close_group"],
       groups=["cid"]),
    rx(r"</f(?: tag=(?P<tag>\w+))?>", ["</f tag=red>", "</f tag=x1>", "</f>"], ["named_group", "close_group"],
       groups=["tag"]),
    # The same name as the NAMED_PAIRS opens' group: the close's value wins.
    rx(r"</f=(?P<name>\w+)>", ["</f=final>", "</f=x>"], ["named_group", "close_group"], groups=["name"]),
    rx(r"</x(?P<n>\d)(?=\n)", ["</x5\n"], ["named_group", "close_group", "lookahead"], groups=["n"]),
    rx(r"</f(?: tag=(?P<tag>\w+)| id=(?P<tag>\d+))?>", ["</f tag=red>", "</f id=7>", "</f>"],
       ["named_group", "close_group", "dup_name"], groups=["tag"]),
]

# An implicit field's close with a named group.
IMPLICIT_CLOSE_NAMED = rx(r"<\|end(?: reason=(?P<reason>\w+))?\|>", ["<|end reason=stop|>", "<|end reason=length|>"],
                          ["named_group", "close_group"], groups=["reason"])

# A delimiter the look-ahead of which needs a body that starts in a certain way.
LOOKAHEAD_TOOL_OPEN = rx(r"\{\s*(?=\"tool\"\s*:)", ["{", "{ "], ["lookahead"], follow='"tool"')

# Delimiters outside the DFA dialect (DESIGN: rejected at load with a clear error).
UNSUPPORTED_OPENS = [
    rx(r"(?<=\n)<tool_call>", ["<tool_call>"], ["unsupported_regex"]),
    rx(r"(?>ab|a)<x>", ["ab<x>"], ["unsupported_regex"]),
    rx(r"<(t)>(?:\1)?", ["<t>"], ["unsupported_regex"]),
    rx(r"<x>\s*+", ["<x>"], ["unsupported_regex"]),
]

# Closes for the implicit field.
IMPLICIT_CLOSES = [
    lit("</think>"), lit("<|im_end|>"), lit("<|END_THINKING|>"), lits(["<eos>", "<eos>\n"]),
    rx(r"</think>\s*", ["</think>", "</think>\n\n"], ["optional_suffix"]),
    rx(r"<\|end\|>|<\|return\|>", ["<|end|>", "<|return|>"], ["alternation"]),
    rx(r"\n\n", ["\n\n"]),
    rx(r"</think>(?:\n\n)?", ["</think>", "</think>\n\n"], ["optional_suffix"]),
    rx(r"(?:<\|END_RESPONSE\|>|$)", ["<|END_RESPONSE|>", ""], ["dollar_alt", "regex_edge"]),
]

ANCHORS = [
    ("start_anchor", "<|im_start|>assistant\n", ["<|im_start|>assistant\n"], []),
    ("start_anchor", "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>", ["<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>"], []),
    ("start_anchor", "<|start|>assistant", ["<|start|>assistant"], []),
    ("start_anchor", "Assistant:", ["Assistant:"], []),
    ("start_anchor", "<｜Assistant｜>", ["<｜Assistant｜>"], ["multibyte"]),
    ("start_anchor", ["<|turn>model\n", "<tool_response|>"], ["<|turn>model\n", "<tool_response|>"], []),
    ("start_anchor", ["<|assistant|>", "<|assistant|>\n"], ["<|assistant|>", "<|assistant|>\n"], ["prefix_literals"]),
    ("start_anchor_pattern", r"<\|im_start\|>assistant\n?", ["<|im_start|>assistant\n", "<|im_start|>assistant"], []),
    ("start_anchor_pattern", r"<start_of_turn>model\s", ["<start_of_turn>model\n"], []),
    ("start_anchor_pattern", r"(?:User|Assistant):\s*", ["Assistant: ", "Assistant:"], []),
]

FUNCS = ["get_weather", "search", "read_file", "add", "noop", "f", "calc_2", "météo"]
ARG_KEYS = ["city", "days", "unit", "path", "max_lines", "flag", "ratio", "items", "opts", "note"]

NOISE = ["Hello", "world", "Let me think.", "OK.", "안녕하세요", "数学は楽しい", "émoji 🎉", "👩‍👩‍👧 family",
         "Straße", "Ünïcödé", "ok", " ", "  ", "\n", "\n\n", "\t", "x", "42", "<", ">", "</", "{", "}", "|",
         "$", "\\", "<|", "|>", "[", "]", ":", "\"", "'", "é", "\u00a0", "\u3000", "\u2028", "—", "a<b", "1 < 2"]

TEXT_WORDS = ["The answer is 4.", "I should call a tool.", "Let me check.", "Bonjour !", "こんにちは",
              "¿Qué tal?", "🙂", "🇫🇷", "x", "Step 1: add.", "a", "Done", "ß", "Ω≈ç√", "tab\there",
              "quote \"q\"", "back\\slash", "{not json}", "<not a tag>", "line1\nline2"]


class Gen:
    def __init__(self, rng, python_call_list=False):
        self.r = rng
        self.python_call_list = python_call_list
        self.tags = set()
        # Most cases are meant to parse: an error anywhere makes the whole case compare
        # only as "not ok", so bodies are broken on purpose in a quarter of the cases.
        self.strict = self.r.random() < 0.75

    def bad(self, p):
        """A chance of a deliberately broken body (never in strict cases)."""
        return not self.strict and self.r.random() < p

    def chance(self, p):
        return self.r.random() < p

    def pick(self, xs):
        return self.r.choice(xs)

    def edge(self, v, cases):
        """`v`, or an edge value: the first of `cases` (chance, values, tag) whose chance comes
        up gives one of its values (a list is picked from, a string taken as it is) and its
        tag; the chances are drawn in order, stopping at the first that comes up."""
        for p, values, tag in cases:
            if self.chance(p):
                self.tags.add(tag)
                return values if isinstance(values, str) else self.pick(values)
        return v

    def use(self, delim):
        if delim is not None:
            self.tags.update(delim["tags"])
        return delim

    # ----------------------------------------------------------------- bodies

    def noise(self, n=None):
        n = n if n is not None else self.r.randint(1, 4)
        out = []
        for _ in range(n):
            if self.chance(0.03):
                out.append(self.pick(["\x1c", "\x1f"]))
                self.tags.add("py_whitespace")
            else:
                out.append(self.pick(NOISE))
        return "".join(out)

    def ws(self):
        return self.pick(["", "", "", " ", "\n", "\n\n", "  \t", "\u3000"])

    def jws(self):
        """Blanks around JSON: JSON allows only ASCII ones (\u3000 makes the body invalid)."""
        return self.pick(["", "", " ", "\n", "\n\n", " \t"]) if self.chance(0.97) else "\u3000"

    def text_body(self):
        s = " ".join(self.pick(TEXT_WORDS) for _ in range(self.r.randint(0, 4)))
        return self.ws() + s + self.ws()

    def int_body(self):
        v = self.pick(["42", " 7 ", "-3", "0", "+5", "007", "\n12\n", "-0", "1234567890123"])
        if self.bad(0.3):
            v = self.pick(["abc", "", "3.5", "1e3"])
        return self.edge(v, [(0.04, ["1_000", "٣", "９"], "py_numeric_edge"),
                             (0.02, "99999999999999999999", "bigint")])

    def float_body(self):
        v = self.pick(["3.14", " 2.5 ", "-0.5", "1e3", "1E-2", ".5", "5.", "7", "0.1",
                       "123456789.123456789", "-0.0", "2.5e-3", "1e22", "+1.5"])
        if self.bad(0.3):
            v = self.pick(["abc", "", "1.2.3", "0x10"])
        return self.edge(v, [(0.03, ["nan", "inf", "-Infinity", "1e400"], "nonfinite"),
                             (0.03, ["1_0.5", "١.٥"], "py_numeric_edge")])

    def bool_body(self):
        return self.pick(["true", "True", "TRUE", "1", "false", "0", "yes", "", " true ", "\ntrue\n", "tRuE", "no"])

    def json_scalar(self):
        k = self.r.randint(0, 9)
        if k == 0:
            return self.r.randint(-1000, 100000)
        if k == 1:
            return self.pick([0.5, -2.25, 1e-7, 3.0, 12345.678])
        if k == 2:
            return self.pick([True, False, None])
        return self.pick(["Paris", "", "a b", "naïve", "東京", "🙂 ok", "line\nbreak", "tab\t", "quo\"te",
                          "back\\slash", "<tag>", "x,y:z", "{}", "1"])

    def json_value(self, depth=0):
        if depth >= 3 or self.chance(0.4):
            return self.json_scalar()
        if self.chance(0.5):
            return [self.json_value(depth + 1) for _ in range(self.r.randint(0, 3))]
        return {self.pick(ARG_KEYS + ["ключ", "a b"]): self.json_value(depth + 1) for _ in range(self.r.randint(0, 3))}

    def dump(self, v):
        style = self.r.randint(0, 3)
        if style == 0:
            return json.dumps(v, ensure_ascii=False)
        if style == 1:
            return json.dumps(v, ensure_ascii=True)
        if style == 2:
            return json.dumps(v, ensure_ascii=False, separators=(",", ":"))
        return json.dumps(v, ensure_ascii=False, indent=2)

    def break_json(self, s):
        k = self.r.randint(0, 5)
        if k == 0 and len(s) > 1:
            return s[: self.r.randint(1, len(s) - 1)]
        if k == 1:
            return s.replace('"', "'")
        if k == 2:
            return s.replace("true", "True").replace("null", "None") + " "
        if k == 3:
            return s.rstrip("}]") + ",}" if s.endswith("}") else s + ","
        if k == 4:
            return s + " trailing"
        return "{" + s

    def json_quirk(self):
        self.tags.add("json_quirk")
        v = self.pick(['-0', '{"a": 1, "a": 2}', '1E400', '[1.0, -0.0, 1e5]', '"\\ud83d\\ude00"',
                       '{"x": 1.5e300}', '  [ ]  ', '""', '"\\u0000"'])
        if v == "1E400":
            self.tags.add("nonfinite")  # Python reads it as inf
        return v

    def generic_json_body(self, args):
        if self.chance(0.03):
            self.tags.add("deep_json")
            d = self.r.randint(129, 300)
            return "[" * d + "]" * d
        if self.chance(0.03):
            self.tags.add("nonfinite")
            return self.pick(["NaN", '{"a": Infinity}', "[-Infinity]"])
        if self.chance(0.03):
            self.tags.add("bigint")
            return self.pick(["123456789012345678901234567890", '{"n": -99999999999999999999}'])
        if self.chance(0.05):
            return self.json_quirk()
        s = self.dump(self.json_value())
        if args.get("unquoted_keys") and self.chance(0.6):
            s = self.unquote_keys(s)
        if args.get("string_delims") and self.chance(0.6):
            s = self.delim_strings(s, args["string_delims"])
        if self.bad(0.3):
            s = self.break_json(s)
        return self.jws() + s + self.jws()

    def unquote_keys(self, s):
        """Unquotes object keys. The reference (5.24) quotes back keys right after "{" or ",",
        blanks around them allowed, and skips whole strings, so key-like text inside a string
        value (see arg_string) stays as it is."""
        if self.chance(0.3):
            s = json.dumps(json.loads(s), ensure_ascii=False, separators=(",", ":"))
        return re.sub(r'"(\w+)"(\s*):', r"\1\2:", s)

    def delim_strings(self, s, delims):
        o, c = delims[0]
        out = s.replace('"Paris"', o + "Paris, \"the\" city" + c).replace('"a b"', o + "a b" + c)
        if self.chance(0.05):
            self.tags.add("json_quirk")
            out += "\x01"
        return out

    def call_args(self, fn):
        args = {}
        for k in self.r.sample(ARG_KEYS, self.r.randint(0, 3)):
            if self.chance(0.5):
                args[k] = self.arg_string()
            else:
                args[k] = self.json_value(1)
        return args

    def arg_string(self):
        v = self.pick(["3", "3.0", "2.5", "1e3", "true", "False", "0", "1", "null", "None", "[1, 2]", '{"a": 1}',
                       "hello", " 42 ", "+7", "-0", "", "0.1", "Paris", "yes", "{a: 1, b:2}", "x, y: z"])
        return self.edge(v, [(0.03, ["1_000", "٣"], "py_numeric_edge"),
                             (0.03, ["nan", "inf", "1e400"], "nonfinite"),
                             (0.02, "1e20", "bigint")])

    def py_string(self, s):
        """`s` as a python-call-list string literal: either quote, escapes of every kind."""
        quote = self.pick(['"', "'"])
        out = []
        for ch in s:
            code = ord(ch)
            if ch == "\\":
                out.append("\\\\")
            elif ch == quote:
                out.append("\\" + quote)
            elif ch in "\n\r\b\f":
                out.append("\\" + "nrbf"["\n\r\b\f".index(ch)])
            elif ch == "\t" and self.chance(0.5):
                out.append("\\t")
            elif ch == "/" and self.chance(0.3):
                out.append("\\/")
            elif ch in "'\"" and self.chance(0.3):
                out.append("\\" + ch)
            elif code > 0xFFFF and self.chance(0.5):
                hi, lo = 0xD800 + ((code - 0x10000) >> 10), 0xDC00 + ((code - 0x10000) & 0x3FF)
                out.append(self.pick(["\\u%04x\\u%04x", "\\u%04X\\u%04X"]) % (hi, lo))
            elif code > 0x7F and self.chance(0.3):
                out.append(self.pick(["\\u%04x", "\\u%04X"]) % code)
            else:
                out.append(ch)
        return quote + "".join(out) + quote

    def py_literal(self, depth=0):
        """A value literal of the python-call-list grammar."""
        k = self.r.randint(0, 11)
        sep = self.pick([", ", ",", " , ", ",\n  "])
        if depth < 3 and k == 0:
            return "[" + sep.join(self.py_literal(depth + 1) for _ in range(self.r.randint(0, 3))) + "]"
        if depth < 3 and k == 1:
            keys = self.r.sample(ARG_KEYS, self.r.randint(0, 3))
            return "{" + sep.join(self.py_string(key) + self.pick([": ", ":", " : "]) + self.py_literal(depth + 1)
                                  for key in keys) + "}"
        if k in (2, 3):
            return self.pick(["0", "-0", "42", "-12", "9007199254740991", "-9007199254740991",
                              str(self.r.randint(-10 ** 6, 10 ** 6))])
        if k == 4:
            return self.pick(["2.5", "1e3", "1E5", "-0.25E-2", "1.5e-3", "0.1", "-0.0", "1e308", "1e-400", "3.0"])
        if k == 5:
            return self.pick(["True", "true", "False", "false", "None", "null"])
        return self.py_string(self.pick(PCL_STRINGS))

    def break_call_list(self, s):
        """One fault the python-call-list grammar rejects."""
        k = self.r.randint(0, 12)
        if k == 0:
            return s.replace("(", '("positional", ', 1)
        if k == 1:
            return s.replace(")", ",)", 1)
        if k == 2:
            return s[:-1] + ",]" if s.endswith("]") else s + ",]"
        if k == 3:
            return s.replace("(", "(a=1, a=2, ", 1)
        if k == 4:
            return s.replace("(", self.pick(["(n=9007199254740992, ", "(n=100000000000000000, ",
                                              "(n=1e400, ", "(n=-1e999, "]), 1)
        if k == 5:
            return s.replace("(", "(s=" + self.pick(['"\\x41"', '"\\ud800"', '"a\nb"', "'\\U0001F600'",
                                                      '"\\udc00\\ud800"']) + ", ", 1)
        if k == 6:
            return s.replace("(", "(d=" + "[" * 101 + "]" * 101 + ", ", 1)
        if k == 7:
            return s.replace("(", "(v=Paris, ", 1)
        if k == 8:
            return s + self.pick([" extra", "]", "\n[f()]"])
        if k == 9:
            return s.replace("(", '(d={1: 2, "k": 1, "k": 2}, ', 1)
        if k == 10:
            return "[météo(a=1)" + ("" if s == "[]" else ", ") + s[1:]
        if k == 11:
            return s[: self.r.randint(0, len(s))]
        return s.replace("[", "", 1)

    def py_call_list_body(self, fp):
        calls = []
        for _ in range(self.r.randint(0, 3)):
            fn = self.pick(PCL_FUNCS)
            fp["funcs"].add(fn)
            keys = self.r.sample(ARG_KEYS, self.r.randint(0, 3))
            fp["arg_keys"].update(keys)
            eq = self.pick(["=", "=", " = "])
            args = [k + eq + (self.py_string(self.arg_string()) if self.chance(0.4) else self.py_literal())
                    for k in keys]
            calls.append(fn + self.pick(["(", "( "]) + self.pick([", ", ","]).join(args) + ")")
        s = "[" + self.pick([", ", ",", ",\n"]).join(calls) + "]"
        if self.bad(0.4):
            s = self.break_call_list(s)
        return self.jws() + s + self.jws()

    # ---------------------------------------------------------------- template

    def content_for(self, kind):
        """Returns (content, content_args, transform, transform_each)."""
        if kind == "text":
            args = {}
            if self.chance(0.3):
                args["strip"] = self.chance(0.5)
            return "text", args, None, False
        if kind in ("int", "float", "bool"):
            args = {"strip": False} if self.chance(0.1) else {}
            return kind, args, None, False
        if kind == "json":
            args = {}
            if self.chance(0.25):
                args["unquoted_keys"] = True
            if self.chance(0.15):
                args["string_delims"] = [self.pick([["<|\"|>", "<|\"|>"], ["'''", "'''"], ["«", "»"]])]
            if self.chance(0.25):
                args["allow_non_json"] = True
                if self.chance(0.3):
                    args["strip"] = False
            return "json", args, None, False
        if kind == "json_call":
            args = {"unquoted_keys": True} if self.chance(0.15) else {}
            t = {"type": "function", "function": {"name": "{content.name}", "arguments": "{content.arguments}"}}
            if self.chance(0.2):
                t = {"type": "function", "function": "{content}"}
            return "json", args, t, False
        if kind == "json_each":
            self.tags.add("transform_each")
            t = {"type": "function", "function": {"name": "{tool_name}", "arguments": "{parameters}"}}
            return "json", {}, t, True
        if kind in ("xml_call", "xml"):
            pat = self.pick([
                r"<parameter=(?P<key>\w+)>\s*(?P<value>.*?)\s*</parameter>",
                r"<parameter=(?P<key>\w+)>\n?(?P<value>.*?)\n?</parameter>",
                r"<arg_key>(?P<key>.*?)</arg_key>\s*<arg_value>(?P<value>.*?)</arg_value>",
                r"(?P<key>\w+)=\"(?P<value>[^\"]*)\"",
                r"<parameter=(?P<key>\w+)>\s*(?P<value>.*?)\s*</parameter>|(?P<key>\w+)=\"(?P<value>[^\"]*)\"",
            ])
            if "|(?P<key>" in pat:
                self.tags.add("dup_name")
            if self.chance(0.08):
                pat = r"<(?P<key>\w+)>\s*(?P<value>.*?)\s*</\1>"
                self.tags.add("backref")
            args = {"tag_pattern": pat}
            if self.chance(0.4):
                args["value_parser"] = self.pick([{"name": "json", "args": {"allow_non_json": True}},
                                                  {"name": "text", "args": {"strip": False}}]
                                                 + ([] if self.strict else [{"name": "int"}]))
            if self.chance(0.3):
                args["merge_duplicates"] = True
            t = {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}} \
                if kind == "xml_call" else None
            return "xml-inline", args, t, False
        if kind == "kv":
            args = {}
            if self.chance(0.3):
                args["line_sep"] = self.pick([";", "\r\n", " | "])
            if self.chance(0.3):
                args["kv_sep"] = self.pick(["=", ": ", "->"])
            if self.chance(0.2):
                args["strip"] = False
            if self.chance(0.3):
                args["value_parser"] = self.pick([{"name": "json", "args": {"allow_non_json": True}},
                                                  {"name": "bool"}] + ([] if self.strict else [{"name": "int"}]))
            return "kv-lines", args, None, False
        if kind == "py_call":
            self.tags.add("python_call_list")
            t = None
            if self.chance(0.8):
                self.tags.add("transform_each")
                t = {"type": "function", "function": {"name": "{name}", "arguments": "{arguments}"}}
            return "python-call-list", {"strip": False} if self.chance(0.05) else {}, t, t is not None
        raise AssertionError(kind)

    def body_for(self, fp):
        kind, args = fp["kind"], fp["content_args"]
        if kind == "text":
            return self.text_body()
        if kind == "int":
            return self.int_body()
        if kind == "float":
            return self.float_body()
        if kind == "bool":
            return self.bool_body()
        if kind == "json":
            return self.generic_json_body(args)
        if kind == "json_call":
            fn = self.pick(FUNCS)
            fp["funcs"].add(fn)
            call = {"name": fn, "arguments": self.call_args(fn)}
            if self.bad(0.15):
                del call["arguments"]
            if self.chance(0.1):
                call = {"arguments": call.get("arguments", {}), "name": fn}
            s = self.dump(call)
            if args.get("unquoted_keys"):
                s = self.unquote_keys(s)
            if self.bad(0.15):
                s = self.break_json(s)
            return self.jws() + s + self.jws()
        if kind == "json_each":
            calls = []
            for _ in range(self.r.randint(0, 3)):
                fn = self.pick(FUNCS)
                fp["funcs"].add(fn)
                calls.append({"tool_call_id": str(len(calls)), "tool_name": fn, "parameters": self.call_args(fn)})
            v = calls
            if self.bad(0.15):
                v = calls[0] if calls else {}
            elif self.bad(0.15):
                v = [1, "x"]
            return self.jws() + self.dump(v) + self.jws()
        if kind in ("xml_call", "xml"):
            pat = args["tag_pattern"]
            parts = []
            keys = [self.pick(ARG_KEYS) for _ in range(self.r.randint(0, 3))]
            for k in keys:
                v = self.arg_string() if self.chance(0.7) else self.dump(self.json_value(1))
                if "|(?P<key>" in pat and self.chance(0.5):
                    parts.append(f'{k}="{v.replace(chr(34), "")}"')
                elif "parameter=" in pat:
                    parts.append(f"<parameter={k}>{self.pick(['', chr(10)])}{v}{self.pick(['', chr(10)])}</parameter>")
                elif "arg_key" in pat:
                    parts.append(f"<arg_key>{k}</arg_key>{self.pick(['', chr(10)])}<arg_value>{v}</arg_value>")
                elif "\\1" in pat:
                    parts.append(f"<{k}>{v}</{k}>")
                else:
                    parts.append(f'{k}="{v.replace(chr(34), "")}"')
            sep = self.pick(["\n", "", " "])
            if kind == "xml_call":
                fp["arg_keys"].update(keys)
            return self.ws() + sep.join(parts) + self.ws() + (self.pick(["", "</function>\n"]) if self.chance(0.2) else "")
        if kind == "kv":
            ls = args.get("line_sep", "\n")
            ks = args.get("kv_sep", ":")
            lines = []
            for _ in range(self.r.randint(0, 4)):
                k = self.pick(ARG_KEYS + [" spaced ", "ключ"])
                v = self.pick(["Paris", " 3 ", "true", "[1, 2]", "x" + ks + "y", "", "naïve", "-2"])
                lines.append(k + ks + v if self.chance(0.85) else self.pick(["junk line", "", "  "]))
            return self.ws() + ls.join(lines) + self.ws()
        if kind == "py_call":
            return self.py_call_list_body(fp)
        raise AssertionError(kind)

    def field_names(self, kinds):
        taken = set()
        out = []
        pools = {"text": ["content", "reasoning_content", "thinking", "answer", "note", "summary"],
                 "int": ["score", "count"], "float": ["confidence", "ratio"], "bool": ["flag", "done"],
                 "json": ["meta", "data", "result"], "kv": ["metadata", "kv"], "xml": ["args", "params"],
                 "json_call": ["tool_calls", "calls"], "json_each": ["tool_calls", "actions"],
                 "xml_call": ["tool_calls", "citations"], "py_call": ["tool_calls", "calls"]}
        for k in kinds:
            cands = [n for n in pools[k] if n not in taken] or [f"{k}_{len(out)}"]
            n = self.pick(cands)
            taken.add(n)
            out.append(n)
        return out

    def template(self):
        """Returns (template dict, plan) where plan lists the fields with their delimiter samples."""
        nfields = self.r.choices([1, 2, 3, 4], [2, 4, 3, 2])[0]
        has_implicit = self.chance(0.6)
        kinds = []
        for i in range(nfields):
            if i == 0 and has_implicit:
                # A structured implicit field gets all the loose text: it parses only by luck.
                kinds.append(self.r.choices(["text", "json", "int", "kv"], [14, 0, 0, 1] if self.strict else
                                            [12, 2, 1, 1])[0])
            else:
                # py_call last, weight 0 without --python-call-list: the other draws are unchanged.
                kinds.append(self.r.choices(
                    ["text", "int", "float", "bool", "json", "json_call", "json_each", "xml_call", "xml", "kv",
                     "py_call"],
                    [8, 1, 1, 1, 2, 4, 2, 3, 1, 1, 3 if self.python_call_list else 0])[0])
        names = self.field_names(kinds)
        plan = []
        fields = {}
        for i, (name, kind) in enumerate(zip(names, kinds)):
            implicit = i == 0 and has_implicit
            content, cargs, transform, each = self.content_for(kind)
            fp = {"name": name, "kind": kind, "content_args": cargs, "funcs": set(), "arg_keys": set(),
                  "implicit": implicit}
            if implicit:
                open_d = None
                close_d = self.use(self.pick(IMPLICIT_CLOSES)) if self.chance(0.35) else None
                if self.chance(0.04):
                    close_d = self.use(IMPLICIT_CLOSE_NAMED)
            else:
                if kind == "xml_call":
                    open_d, close_d = self.pick(NAMED_PAIRS)
                elif kind == "py_call":
                    open_d, close_d = self.pick(PCL_PAIRS)
                elif kind in ("json_call", "json_each"):
                    open_d, close_d = self.pick(TOOL_PAIRS)
                    if kind == "json_call" and self.chance(0.06):
                        # The open eats the "{": the body is no JSON, so keep it as text.
                        open_d, close_d = LOOKAHEAD_TOOL_OPEN, None
                        cargs, transform = {"allow_non_json": True}, {"type": "function", "function": "{content}"}
                else:
                    open_d, close_d = self.pick(GENERIC_PAIRS)
                    while self.strict and kind != "text" and "zero_width" in open_d["tags"]:
                        open_d, close_d = self.pick(GENERIC_PAIRS)  # it would take all the loose text
                    if self.chance(0.1):
                        open_d = self.pick(NAMED_PAIRS)[0]
                if self.chance(0.2):
                    close_d = self.pick([p[1] for p in GENERIC_PAIRS + TOOL_PAIRS if p[1] is not None])
                if self.chance(0.1):
                    close_d = None
                if self.chance(0.08):
                    close_d = self.pick(CLOSE_NAMED)
                if self.chance(0.03):
                    open_d = self.pick(UNSUPPORTED_OPENS)
                self.use(open_d)
                self.use(close_d)
            f = {}
            for key, d in (("open", open_d), ("close", close_d)):
                if d is None:
                    continue
                if d["kind"] == "re":
                    f[key + "_pattern"] = d["v"]
                else:
                    f[key] = d["v"]
            if content != "text" or self.chance(0.3):
                f["content"] = content
            if cargs:
                f["content_args"] = cargs
            groups = open_d.get("groups", []) if open_d else []
            if groups and transform is None:
                if kind == "text" and self.chance(0.5):
                    transform = {"label": "{name}", "body": "{content}"}
                elif kind == "text":
                    transform = {"source": "{name}", "n": 1, "nested": ["{content}", None, True]}
                else:
                    transform = {"name": "{name}", "value": "{content}"}
            close_groups = [g for g in (close_d.get("groups", []) if close_d else []) if g not in groups]
            if close_groups and transform is None:
                transform = {"body": "{content}"}
            if close_groups and isinstance(transform, dict):
                transform = dict(transform)
                for g in close_groups:
                    transform["close_" + g] = "{" + g + "}"
            if transform is not None:
                f["transform"] = transform
                if each:
                    f["transform_each"] = True
            repeats = kind in ("json_call", "xml_call") and self.chance(0.8) or \
                (kind != "json_each" and self.chance(0.15))
            if repeats:
                f["repeats"] = True
                if content == "text" and transform is None and self.chance(0.4):
                    f["join"] = self.pick(["\n", "", " | "])
            if self.chance(0.08):
                f["optional"] = False
            elif self.chance(0.05):
                f["optional"] = True
            fp["open"], fp["close"], fp["field"] = open_d, close_d, f
            fields[name] = f
            plan.append(fp)
        # Field order decides ties; shuffle so the implicit field is not always first.
        items = list(fields.items())
        self.r.shuffle(items)
        tpl = {}
        if self.chance(0.1):
            tpl["version"] = 1
        defaults = {"role": "assistant"}
        if self.chance(0.15):
            defaults = {}
        if self.chance(0.1):
            defaults[self.pick(names)] = self.pick(["", [], None, {"a": 1}, "x"])
            self.tags.add("defaults_edge")
        if self.chance(0.05):
            defaults["meta_info"] = {"a": [1, 2]}
        if defaults or self.chance(0.5):
            tpl["defaults"] = defaults
        akey, aval, asamples, atags = self.pick(ANCHORS)
        self.tags.update(atags)
        tpl[akey] = aval
        tpl["fields"] = dict(items)
        self.anchor_samples = asamples
        return tpl, plan

    def break_template(self, tpl, plan):
        """Turns the template into one the reference refuses to load (or accepts loosely)."""
        fields = tpl["fields"]
        name = self.pick(list(fields))
        f = fields[name]
        k = self.r.randint(0, 17)
        tag = "invalid_template"
        if k == 0:
            f["opn"] = "<x>"
        elif k == 1:
            f["open"], f["open_pattern"] = "<x>", "<x>"
        elif k == 2:
            f["open"] = self.pick(["", [], [1, 2], ["<a>", ""], {"foo": "bar"}])
        elif k == 3:
            f["join"] = ","
            f.pop("repeats", None)
        elif k == 4:
            f["transform_each"] = True
            f.pop("transform", None)
        elif k == 5:
            f.pop("transform", None)
            f.pop("transform_each", None)
            f.pop("open", None)
            f["open_pattern"] = r"<f=(?P<name>\w+)>"
        elif k == 6:
            for g in fields.values():
                g.pop("open", None)
                g.pop("open_pattern", None)
            if len(fields) < 2:
                fields["extra"] = {"close": "</e>"}
        elif k == 7:
            f["transform"] = {"v": "pre {content}"}
        elif k == 8:
            tpl["version"] = 2
        elif k == 9:
            f.pop("open", None)
            f["open_pattern"] = "<(unclosed"
        elif k == 10:
            f["content"] = "yaml"
        elif k == 11:
            tpl.pop("start_anchor", None)
            tpl.pop("start_anchor_pattern", None)
        elif k == 12:
            tpl["fields"] = {}
        elif k == 13:
            f["transform_each"] = "yes"
            f["transform"] = {"a": "{content}"}
        elif k == 14:
            tpl["defaults"] = ["role"]
        elif k == 15:
            tpl["start_anchor"], tpl["start_anchor_pattern"] = "A:", "A:"
        elif k == 16:
            tag = "loose_typing"
            f["repeats"] = self.pick([1, "yes"])
            f["optional"] = self.pick([0, 1, "no"])
        else:
            tag = "lazy_validation"
            f["content"] = "xml-inline"
            f["content_args"] = self.pick([{}, {"tag_pattern": "(?P<value>x)"}, {"value_parser": {"name": "nope"},
                                                                                   "tag_pattern": "(?P<key>a)"}])
        self.tags.add(tag)

    # ------------------------------------------------------------------- text

    def samples(self, d, fp):
        s = self.pick(d["samples"])
        if "{name}" in s:
            fn = self.pick(FUNCS) if fp["kind"] == "xml_call" else self.pick(["src1", "doc", "x"])
            if fp["kind"] == "xml_call":
                fp["funcs"].add(fn)
            s = s.replace("{name}", fn)
        return s

    def near(self, plan):
        """A near miss of some delimiter: a strict prefix, or one character changed."""
        ds = [d for fp in plan for d in (fp["open"], fp["close"]) if d]
        if not ds:
            return self.noise(n=1)
        s = self.pick(self.pick(ds)["samples"]).replace("{name}", "f")
        if len(s) < 2:
            return s
        if self.chance(0.6):
            return s[: self.r.randint(1, len(s) - 1)]
        i = self.r.randrange(len(s))
        return s[:i] + self.pick(["x", " ", "<", "|"]) + s[i + 1:]

    def region(self, fp, plan, depth=0):
        o = self.samples(fp["open"], fp) if fp["open"] else ""
        body = self.body_for(fp)
        if fp["open"] and fp["open"].get("follow"):
            body = fp["open"]["follow"] + ': "' + self.pick(FUNCS) + '", "args": {}}' + self.ws()
        c = self.samples(fp["close"], fp) if fp["close"] else ""
        fragile = fp["kind"] not in ("text", "bool", "kv")
        if fragile and self.strict:
            weights = [10, 0, 0, 0, 0, 1, 0]
        else:
            weights = [30 if fragile else 10, 1, 1, 2, 1, 1, 1]
        style = self.r.choices(["complete", "no_close", "doubled_open", "nested", "partial_close", "doubled_close",
                                "near_in_body"], weights)[0]
        if style == "no_close":
            c = ""
        elif style == "doubled_open":
            o = o + self.pick(["", " ", "\n"]) + o
        elif style == "nested" and depth < 2:
            others = [p for p in plan if p is not fp and p["open"]]
            if others:
                inner = self.region(self.pick(others), plan, depth + 1)
                k = self.r.randint(0, len(body))
                body = body[:k] + inner + body[k:]
        elif style == "partial_close" and len(c) > 1:
            c = c[: self.r.randint(1, len(c) - 1)] + self.noise(n=1) + c
        elif style == "doubled_close":
            c = c + c
        elif style == "near_in_body":
            body = body + self.near(plan) + body
        return o + body + c

    def message_text(self, plan):
        explicit = [fp for fp in plan if fp["open"]]
        implicit = [fp for fp in plan if fp["implicit"]]
        pieces = []
        n = self.r.randint(1, 6) if self.chance(0.9) else self.r.randint(6, 14)
        for _ in range(n):
            r = self.r.random()
            if r < 0.3 or not explicit:
                if implicit:
                    fp = implicit[0]
                    body = self.body_for(fp) if self.chance(0.6) else self.noise()
                    if fp["close"] and self.chance(0.5):
                        body += self.samples(fp["close"], fp)
                    pieces.append(body)
                else:
                    pieces.append(self.noise())
            elif r < 0.37:
                pieces.append(self.near(plan))
            else:
                fp = self.pick(explicit)
                pieces.append(self.region(fp, plan))
                if fp["close"] is None and self.strict and fp["kind"] not in ("text", "bool", "kv"):
                    break  # it runs to the end of the output: anything after it would break its body
            if self.chance(0.3):
                pieces.append(self.pick(["", "\n", " ", "\n\n", self.noise(n=1)]))
        text = "".join(pieces)
        fragile = any(fp["kind"] not in ("text", "bool", "kv") for fp in plan)
        if self.chance(0.15) and text and not (fragile and self.strict):
            text = text[: self.r.randint(0, len(text))]
        if self.chance(0.1):
            text += self.pick(["<|im_end|>", "<eos>", "\n", "<|end|>"])
        return text[:1800]

    def prefix(self, plan, full):
        """Returns (prefix, text)."""
        if self.chance(0.02):
            self.tags.add("null_prefix")
            return None, full
        r = self.r.random()
        anchor = self.pick(self.anchor_samples)
        if r < 0.35:
            return "", full
        if r < 0.45:
            return self.noise(), full
        pre = self.pick(["<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n",
                         "<bos>", "", "System: be brief.\n"])
        if r < 0.6:
            pre = pre + anchor + self.pick(["Earlier answer.", "<think>old</think>done", ""]) + "\nUser: more\n"
        pre += anchor
        explicit = [fp for fp in plan if fp["open"]]
        if self.chance(0.4) and explicit:
            # A prefilled open: the chat template already wrote the start of a region.
            fp = self.pick(explicit)
            o = self.samples(fp["open"], fp)
            self.tags.add("prefill_split")
            rest = self.body_for(fp) + (self.samples(fp["close"], fp) if fp["close"] else "")
            if fp["close"] is None:
                full = ""  # the region runs to the end
            if self.chance(0.7) or len(o) < 2:
                return pre + o, rest + full
            k = self.r.randint(1, len(o) - 1)
            return pre + o[:k], o[k:] + rest + full
        if self.chance(0.2) and full:
            self.tags.add("prefill_split")
            k = self.r.randint(0, min(len(full), 40))
            return pre + full[:k], full[k:]
        return pre, full

    def chunks(self, text, plan):
        r = self.r.random()
        if r < 0.2:
            return None
        if r < 0.4 and len(text) <= 700:
            self.tags.add("chunks_1char")
            return list(text)
        if r < 0.75 or not text:
            self.tags.add("chunks_random")
            k = self.r.randint(0, min(12, len(text)))
            cuts = sorted(self.r.sample(range(len(text) + 1), k)) if text else []
        else:
            self.tags.add("chunks_delims")
            cuts = set()
            for fp in plan:
                for d in (fp["open"], fp["close"]):
                    if not d:
                        continue
                    for s in d["samples"]:
                        s = s.split("{name}")[0]
                        if not s:
                            continue
                        i = text.find(s)
                        while i != -1 and len(cuts) < 40:
                            for off in (0, 1, len(s) - 1, len(s)):
                                if self.chance(0.5):
                                    cuts.add(min(len(text), i + off))
                            i = text.find(s, i + 1)
            cuts = sorted(cuts)
        out, last = [], 0
        for c in cuts:
            out.append(text[last:c])
            last = c
        out.append(text[last:])
        if self.chance(0.1):
            self.tags.add("chunks_empty")
            out.insert(self.r.randint(0, len(out)), "")
        else:
            out = [c for c in out if c] or [""]
        return out

    def tools(self, plan):
        funcs = sorted({fn for fp in plan for fn in fp["funcs"]})
        if not funcs or not self.chance(0.35):
            return None
        self.tags.add("tools")
        keys = sorted({k for fp in plan for k in fp["arg_keys"]} | set(self.r.sample(ARG_KEYS, 4)))
        types = [{"type": "integer"}, {"type": "number"}, {"type": "boolean"}, {"type": "null"}, {"type": "object"},
                 {"type": "array"}, {"type": "string"}, {"type": ["integer", "null"]},
                 {"anyOf": [{"type": "integer"}, {"type": "string"}]}, {"type": "number", "nullable": True},
                 {"oneOf": [{"type": "boolean"}, {"type": "array"}]}, {}, {"type": ["string", "number"]},
                 {"type": "array", "items": {"type": "integer"}}]
        out = []
        for fn in funcs:
            if self.chance(0.1):
                continue
            props = {k: self.pick(types) for k in keys if self.chance(0.7)}
            params = {"type": "object", "properties": props, "required": []}
            if self.chance(0.05):
                params = {"type": "object"}
            fdef = {"name": fn, "description": "d", "parameters": params}
            out.append({"type": "function", "function": fdef} if self.chance(0.85) else fdef)
        return out


def make_case(rng, cid, python_call_list=False):
    g = Gen(rng, python_call_list)
    tpl, plan = g.template()
    if g.chance(0.05):
        g.break_template(tpl, plan)
    full = g.message_text(plan)
    prefix, text = g.prefix(plan, full)
    chunks = g.chunks(text, plan)
    tools = g.tools(plan)
    return {"id": cid, "origin": "differential", "template": tpl, "prefix": prefix, "text": text,
            "chunks": chunks, "tools": tools, "tags": sorted(g.tags)}


def generate(seed, count, avoid=(), only=(), twins=True, python_call_list=False):
    rng = random.Random(seed)
    i = made = 0
    while made < count:
        case = make_case(rng, f"s{seed}-{i:05d}", python_call_list)
        i += 1
        if avoid and set(case["tags"]) & set(avoid):
            continue
        if only and not set(case["tags"]) & set(only):
            continue
        made += 1
        yield case
        if twins and case["chunks"] is not None:
            yield dict(case, id=case["id"] + "~1shot", chunks=None, twin_of=case["id"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=300)
    ap.add_argument("--avoid", default="", help="comma-separated tags: skip cases using them")
    ap.add_argument("--only", default="", help="comma-separated tags: keep only cases using one of them")
    ap.add_argument("--no-twins", action="store_true", help="do not emit the one-shot twins")
    ap.add_argument("--python-call-list", action="store_true",
                    help="also draw python-call-list fields (the reference must be transformers >= 5.24.0)")
    a = ap.parse_args()
    avoid = [t for t in a.avoid.split(",") if t]
    only = [t for t in a.only.split(",") if t]
    for case in generate(a.seed, a.count, avoid, only, not a.no_twins, a.python_call_list):
        print(json.dumps(case, ensure_ascii=False))


if __name__ == "__main__":
    main()
