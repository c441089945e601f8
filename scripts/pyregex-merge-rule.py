#!/usr/bin/env python3
"""Checks the rule by which parser_runtime_core::groups merges a group name defined more than
once against the Python `regex` module itself, on randomly generated patterns.

In the module, groups of one name are one group; after a match the name's value
(`m.group(name)`) is the copy that closed last. Our translations (template-build's `pyregex`)
write every copy as a group of its own, leave out a copy nested inside a copy of its name
(written as a non-capturing group) and merge the rest by their spans: of the copies that took
part, the one that ends last, then the one that starts last. This script writes each random
pattern twice, as Python reads it and as we split it (copies renamed `name__k`, nested ones
non-capturing, run by the module too, so only the merge is tested), and compares the module's
value of each name with the merge of the copies' spans, for `search`, `match` and `fullmatch`
on random texts. Look-arounds are left out: we refuse a copy inside one.

Usage (from the workspace root):
  target/oracle-venv/bin/python scripts/pyregex-merge-rule.py [--seed N] [--patterns N]
Exits 1 on a difference, printing the first ones.
"""
import argparse
import random
import sys

import regex

NAMES = ["a", "b"]
QUANTIFIERS = ["?", "*", "+", "??", "*?", "+?", "{0,2}", "{1,2}", "{2}"]


def tree(depth):
    """A random pattern tree: ("lit", c), ("cat", [..]), ("alt", [..]), ("grp", name, child),
    ("rep", child, quantifier)."""
    r = random.random()
    if depth <= 0 or r < 0.25:
        return ("lit", random.choice("xyz") if random.random() < 0.85 else "")
    if r < 0.45:
        return ("cat", [tree(depth - 1) for _ in range(random.randint(2, 3))])
    if r < 0.6:
        return ("alt", [tree(depth - 1) for _ in range(random.randint(2, 3))])
    if r < 0.85:
        return ("grp", random.choice(NAMES), tree(depth - 1))
    return ("rep", tree(depth - 1), random.choice(QUANTIFIERS))


def write(node, split=None):
    """The pattern as Python reads it (`split` None) or split into copies: `split` collects
    the copies' names by name and tracks the names of the groups open around `node`."""
    kind = node[0]
    if kind == "lit":
        return node[1]
    if kind == "cat":
        return "".join(write(child, split) for child in node[1])
    if kind == "alt":
        return "(?:" + "|".join(write(child, split) for child in node[1]) + ")"
    if kind == "rep":
        return "(?:" + write(node[1], split) + ")" + node[2]
    name, child = node[1], node[2]
    if split is None:
        return f"(?P<{name}>" + write(child) + ")"
    if name in split["open"]:
        return "(?:" + write(child, split) + ")"
    copies = split["copies"].setdefault(name, [])
    copy = f"{name}__{len(copies)}"
    copies.append(copy)
    split["open"].add(name)
    body = write(child, split)
    split["open"].discard(name)
    return f"(?P<{copy}>" + body + ")"


def merged(match, copies):
    spans = [match.span(c) for c in copies if match.span(c) != (-1, -1)]
    return max(spans, key=lambda s: (s[1], s[0]), default=(-1, -1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--patterns", type=int, default=2000, help="patterns with a name defined twice")
    args = parser.parse_args()
    random.seed(args.seed)
    tried = checked = 0
    differences = []
    while tried < args.patterns:
        node = tree(4)
        python = write(node)
        if max(python.count(f"(?P<{n}>") for n in NAMES) < 2:
            continue
        split = {"open": set(), "copies": {}}
        ours = write(node, split)
        try:
            compiled, split_compiled = regex.compile(python), regex.compile(ours)
        except regex.error:
            continue
        tried += 1
        for _ in range(8):
            text = "".join(random.choice("xyz") for _ in range(random.randint(0, 6)))
            for how in ("search", "match", "fullmatch"):
                want, got = getattr(compiled, how)(text), getattr(split_compiled, how)(text)
                if (want is None) != (got is None) or (want and want.span() != got.span()):
                    differences.append(f"{how} {python!r} on {text!r}: the split pattern matches differently")
                    continue
                for name in compiled.groupindex if want else ():
                    checked += 1
                    value = merged(got, split["copies"].get(name, []))
                    if want.span(name) != value:
                        differences.append(f"{how} {python!r} on {text!r}: {name} is {want.span(name)}, "
                                           f"the merge of {ours!r} gives {value}")
    print(f"{tried} patterns, {checked} values compared, {len(differences)} differences")
    for line in differences[:20]:
        print(line)
    sys.exit(1 if differences else 0)


if __name__ == "__main__":
    main()
