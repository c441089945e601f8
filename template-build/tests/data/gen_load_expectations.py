#!/usr/bin/env python3
"""Regenerates load_expectations.jsonl: for every distinct template of the conformance cases
(plus the extra probes below), whether the reference (transformers 5.24.0,
`load_response_template`) accepts it at load time, and its error if not.

Usage (from the workspace root; 5.24.0 knows the python-call-list parser, 5.23.0 does not):
  target/oracle-venv-5.24/bin/python template-build/tests/data/gen_load_expectations.py \
      ../shared/cases/conformance.jsonl > template-build/tests/data/load_expectations.jsonl

Only probes on which our loader is meant to agree with the reference belong here; where we are
deliberately stricter (non-bool `repeats`, bad content arguments, ...) the unit tests in
`template-build/src/model.rs` cover it.
"""
import json
import sys

from transformers.utils.chat_parsing.response_templates import load_response_template


def field(**kw):
    return {"start_anchor": "<s>", "fields": {"x": {"open": "<x>", "close": "</x>", **kw}}}


PROBES = {
    # root
    "root_list": [],
    "root_string": "template",
    "version_2": {"version": 2, **field()},
    "version_string": {"version": "1", **field()},
    "version_null": {"version": None, **field()},
    "version_true": {"version": True, **field()},
    "version_float": {"version": 1.0, **field()},
    "unknown_root_key": {"feilds": {}, **field()},
    "defaults_list": {"defaults": ["role"], **field()},
    "defaults_null": {"defaults": None, **field()},
    "fields_missing": {"start_anchor": "<s>"},
    "fields_empty": {"start_anchor": "<s>", "fields": {}},
    "fields_list": {"start_anchor": "<s>", "fields": [{"open": "<x>"}]},
    "fields_null": {"start_anchor": "<s>", "fields": None},
    "no_anchor": {"fields": {"x": {}}},
    "both_anchors": {"start_anchor": "a", "start_anchor_pattern": "a", "fields": {"x": {}}},
    "anchor_empty_list": {"start_anchor": [], "fields": {"x": {}}},
    "anchor_empty_string": {"start_anchor": "", "fields": {"x": {}}},
    "anchor_non_string_item": {"start_anchor": ["a", 1], "fields": {"x": {}}},
    "anchor_number": {"start_anchor": 1, "fields": {"x": {}}},
    "anchor_pattern_invalid": {"start_anchor_pattern": "a(", "fields": {"x": {}}},
    "anchor_pattern_not_string": {"start_anchor_pattern": ["a"], "fields": {"x": {}}},
    "anchor_pattern_lookbehind": {"start_anchor_pattern": "(?<=<s>)\\n", "fields": {"x": {}}},
    "anchor_list_dedup": {"start_anchor": ["a", "b", "a"], "fields": {"x": {}}},
    # fields
    "field_string": {"start_anchor": "<s>", "fields": {"x": "text"}},
    "field_null": {"start_anchor": "<s>", "fields": {"x": None}},
    "unknown_field_key": field(opne="<y>"),
    "content_unknown": field(content="yaml"),
    "content_null": field(content=None),
    "content_list": field(content=["text"]),
    "open_and_open_pattern": field(open_pattern="<x>"),
    "close_and_close_pattern": field(close_pattern="</x>"),
    "open_null": field(open=None),
    "open_dict": field(open={"a": 1}),
    "open_empty_list": field(open=[]),
    "open_empty_string": field(open=""),
    "open_list_with_empty": field(open=["<x>", ""]),
    "open_list_non_string": field(open=["<x>", None]),
    "close_list_duplicates": field(close=["</x>", "</x>", "<end>"]),
    "open_pattern_invalid": {"start_anchor": "<s>", "fields": {"x": {"open_pattern": "<(x"}}},
    "close_pattern_invalid": {"start_anchor": "<s>", "fields": {"x": {"open": "<x>", "close_pattern": "[a"}}},
    "open_pattern_number": {"start_anchor": "<s>", "fields": {"x": {"open_pattern": 5}}},
    "join_number": field(repeats=True, join=5),
    "join_without_repeats": field(join=","),
    "join_repeats_false": field(join=",", repeats=False),
    "join_null": field(join=None),
    "join_with_repeats": field(join="\n", repeats=True),
    "transform_each_string": field(transform="{content}", transform_each="yes"),
    "transform_each_null": field(transform="{content}", transform_each=None),
    "transform_each_without_transform": field(transform_each=True),
    "transform_each_transform_null": field(transform_each=True, transform=None),
    "transform_mixed": field(transform={"a": ["{content} x"]}),
    "transform_double_braces": field(transform="{{content}}"),
    "transform_two_placeholders": field(transform="{a}{b}"),
    "transform_unicode_mixed": field(transform="{contént} "),
    "transform_plain_and_whole": field(transform={"a": "{content.x.y}", "b": "{not one}", "c": "{}", "{k} key": 1, "d": 3}),
    "transform_false": field(transform=False),
    "named_group_no_transform": {"start_anchor": "<s>", "fields": {"x": {"open_pattern": "<f=(?P<name>\\w+)>"}}},
    "named_group_close_no_transform": {"start_anchor": "<s>", "fields": {"x": {"open": "<x>", "close_pattern": "</(?P<tag>x)>"}}},
    "named_group_transform_null": {"start_anchor": "<s>", "fields": {"x": {"open_pattern": "<f=(?P<name>\\w+)>", "transform": None}}},
    "named_group_with_transform": {"start_anchor": "<s>", "fields": {"x": {"open_pattern": "<f=(?P<name>\\w+)>", "transform": {"name": "{name}", "args": "{content}"}}}},
    "unnamed_group": {"start_anchor": "<s>", "fields": {"x": {"open_pattern": "<(f)>"}}},
    # Close-pattern groups (used by the transform from 5.24 on) load like open-pattern groups;
    # placeholders are not checked against the groups at load time (an unknown one fails when
    # a region closes). Their lines came from the 5.24.0 reference, whose load checks are
    # 5.23.0's.
    "named_group_close_with_transform": {"start_anchor": "<s>", "fields": {"x": {"open": "<x>", "close_pattern": "</x (?P<tag>\\w+)>", "transform": {"tag": "{tag}", "body": "{content}"}}}},
    "named_group_open_and_close_same_name": {"start_anchor": "<s>", "fields": {"x": {"open_pattern": "<x (?P<v>\\w+)>", "close_pattern": "</x(?: (?P<v>\\w+))?>", "transform": {"v": "{v}"}}}},
    "named_group_implicit_close": {"start_anchor": "<s>", "fields": {"x": {"close_pattern": "<end(?P<why>\\w*)>", "transform": {"why": "{why}", "text": "{content}"}}}},
    "placeholder_names_no_group": {"start_anchor": "<s>", "fields": {"x": {"open": "<x>", "close_pattern": "</x>", "transform": {"tag": "{tag}"}}}},
    "three_implicit": {"start_anchor": "<s>", "fields": {"a": {}, "b": {"close": "x"}, "c": {"open": "<c>"}, "d": {}}},
    "one_implicit_no_close": {"start_anchor": "<s>", "fields": {"content": {}}},
    # content args the reference accepts at load time and we accept too
    "xml_inline_without_tag_pattern": field(content="xml-inline"),
    "xml_inline_tag_pattern_null": field(content="xml-inline", content_args={"tag_pattern": None}),
    "unknown_content_args": field(content_args={"strip": False, "whatever": [1]}),
    "value_parser_extra_keys": field(content="kv-lines", content_args={"value_parser": {"name": "int", "note": "x"}}),
    "value_parser_null": field(content="kv-lines", content_args={"value_parser": None}),
    "json_all_args": field(content="json", content_args={"unquoted_keys": True, "string_delims": [["<q>", "</q>"]], "allow_non_json": True, "strip": False}),
    "kv_lines_all_args": field(content="kv-lines", content_args={"line_sep": ";", "kv_sep": "=", "strip": True, "value_parser": {"name": "json", "args": {"allow_non_json": True}}}),
    # python-call-list (5.24.0): no arguments of its own; others' keys are ignored unchecked
    "python_call_list": field(content="python-call-list"),
    "python_call_list_other_args": field(content="python-call-list", content_args={"strip": "no", "line_sep": "", "tag_pattern": 5}),
    "python_call_list_value_parser": field(content="kv-lines", content_args={"value_parser": {"name": "python-call-list", "args": {"x": 1}}}),
    "python_call_list_transform_each": field(content="python-call-list", transform_each=True, transform={"type": "function", "function": {"name": "{name}", "arguments": "{arguments}"}}),
    "python_call_list_misspelled": field(content="python_call_list"),
}


def main():
    seen = set()
    entries = []
    for line in open(sys.argv[1], encoding="utf-8"):
        case = json.loads(line)
        key = json.dumps(case["template"], sort_keys=True)
        if key not in seen:
            seen.add(key)
            entries.append((f"conformance:{case['id']}", case["template"]))
    for name, template in PROBES.items():
        entries.append((f"probe:{name}", template))
    for origin, template in entries:
        try:
            load_response_template(template)
            loads, error = True, ""
        except Exception as e:  # the reference raises ValueError, TypeError, ...
            loads, error = False, f"{type(e).__name__}: {e}"
        print(json.dumps({"origin": origin, "template": template, "loads": loads, "reference_error": error},
                         ensure_ascii=False))


if __name__ == "__main__":
    main()
