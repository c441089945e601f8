"""Shared by the corpus scripts: the file shape the corpus runner reads, and `$ref` checks.

A corpus file is `{"schema": ..., "tests": [{"data": ..., "valid": bool, ...}], ...}` (the
JSONSchemaBench/MaskBench shape); other keys are for people and are ignored by the runner.
"""

import json
import shutil
from urllib.parse import urljoin

REF_KEYS = {"$ref", "$dynamicRef", "$recursiveRef"}
ID_KEYS = {"$id", "id"}


def _walk(node, base, refs, ids):
    """Collects, resolved against the base URI in scope (each `$id`/`id` sets it for its
    subschema), the documents of the `$ref`-like strings and of the `$id`/`id` strings
    anywhere in `node`."""
    if isinstance(node, dict):
        for key in ID_KEYS:
            if isinstance(node.get(key), str):
                base = urljoin(base, node[key]).split("#")[0]
                ids.add(base)
        for key, value in node.items():
            if key in REF_KEYS and isinstance(value, str) and value.split("#")[0]:
                refs.append((value, urljoin(base, value.split("#")[0])))
            _walk(value, base, refs, ids)
    elif isinstance(node, list):
        for item in node:
            _walk(item, base, refs, ids)


def remote_refs(schema):
    """The `$ref`s into documents the schema does not hold itself (an engine that loads no
    remote documents cannot resolve them): refs whose document part (before `#`), resolved
    against the `$id`s in scope, is none of the schema's own `$id`s. Values under `const`,
    `enum`, `default` or `examples` are read as schemas too, so this can err on odd data."""
    refs, ids = [], set()
    _walk(schema, "", refs, ids)
    out = []
    for ref, document in refs:
        if document not in ids and ref not in out:
            out.append(ref)
    return out


def fresh_dir(path):
    """`path`, emptied (created if missing)."""
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    return path


def write_entry(path, schema, tests, **extra):
    """Writes one corpus file: the schema, its tests, then `extra` keys."""
    entry = {"schema": schema, "tests": tests, **extra}
    path.write_text(json.dumps(entry, ensure_ascii=False), encoding="utf-8")
