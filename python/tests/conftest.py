"""Shared helpers of the parsing tests: the repository's paths, the vendored fixtures, and the
reference (transformers, when importable in this interpreter)."""

import json
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TEMPLATES = REPO / "templates"
FIXTURES = TEMPLATES / "fixtures"
UPSTREAM = TEMPLATES / "upstream"
# ../shared beside the checkout (RT_SHARED overrides it, e.g. for a git worktree).
SHARED_CASES = Path(os.environ.get("RT_SHARED", REPO.parent / "shared")) / "cases"

# Content parsers of this project that transformers does not have (its loader refuses them).
OWN_PARSERS = {"json-call-list"}


def read_text(path):
    with open(path, encoding="utf-8", newline="") as f:
        return f.read()


def reference():
    """transformers' chat_parsing module, or None when transformers is not importable."""
    try:
        from transformers.utils import chat_parsing
    except Exception:  # not installed, or broken without torch: the tests that need it skip
        return None
    return chat_parsing


def parsers_of(spec):
    """Every content parser a template dict names (also nested value parsers)."""
    found = set()

    def walk(v):
        if isinstance(v, dict):
            for k, x in v.items():
                if k in ("content", "value_parser") and isinstance(x, str):
                    found.add(x)
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    walk(spec)
    return found


class Fixture:
    """One fixture: template file, output, prefix, tools and the expected message (or
    expect_error)."""

    def __init__(self, template_path, stem_path, ident):
        self.id = ident
        self.template_path = template_path
        self.template = json.loads(read_text(template_path))
        self.text = read_text(Path(str(stem_path) + ".txt"))
        prefix = Path(str(stem_path) + ".prefix")
        self.prefix = read_text(prefix) if prefix.exists() else ""
        tools = Path(str(stem_path) + ".tools.json")
        self.tools = json.loads(read_text(tools)) if tools.exists() else None
        self.expected = json.loads(read_text(Path(str(stem_path) + ".expected.json")))
        self.expect_error = self.expected == {"expect_error": True}
        self.reference_loads = not (parsers_of(self.template) & OWN_PARSERS)


def fixtures():
    out = []
    for template_path in sorted(TEMPLATES.glob("*.json")):
        for expected in sorted((FIXTURES / template_path.stem).glob("*.expected.json")):
            stem = expected.with_name(expected.name[: -len(".expected.json")])
            out.append(Fixture(template_path, stem, f"{template_path.stem}/{stem.name}"))
    for template_path in sorted(UPSTREAM.glob("*.json")):
        for expected in sorted((UPSTREAM / "fixtures" / template_path.stem).glob("*.expected.json")):
            stem = expected.with_name(expected.name[: -len(".expected.json")])
            out.append(Fixture(template_path, stem, f"upstream/{template_path.stem}/{stem.name}"))
    return out


FIXTURE_LIST = fixtures()


# Adjacent region_chunk events of one field merged (chunk boundaries are free): the same
# function as the conformance runner's.
from conformance import merge  # noqa: E402


def stream(parser, text, size):
    """Feeds `text` in pieces of `size` characters; returns (message, events)."""
    events = []
    for i in range(0, len(text), size):
        events.extend(parser.feed(text[i : i + size]))
    message, final = parser.finalize()
    return message, events + final


@pytest.fixture(scope="session")
def ref():
    module = reference()
    if module is None:
        pytest.skip("transformers is not importable here (the reference runs need it)")
    return module
