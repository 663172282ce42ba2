"""Canonical JSON (RFC 8785, the JSON Canonicalization Scheme) and its sha256.

RFC 8785 writes a JSON value with no whitespace, object members sorted by their keys' UTF-16 code units,
strings and numbers exactly as ECMAScript's ``JSON.stringify`` writes them. ``runformat.jsjson`` already
writes ``JSON.stringify``'s bytes (tested against node), so a canonical text is its scalars with the members
sorted here. NaN and infinities (which JSON cannot hold) are written as ``null``, as ``JSON.stringify`` does:
a value that is undefined (an interval with too few haystacks) reads back as ``null``.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import msgspec

from bench_nb.runformat.jsjson import to_js


def canonical_json(value: Any) -> bytes:
    """``value`` (dicts with str keys, lists, str, int, float, bool, None) as RFC 8785 canonical UTF-8 bytes."""
    if isinstance(value, dict):
        for key in value:
            if not isinstance(key, str):
                raise TypeError(f"canonical JSON needs str object keys, not {type(key).__name__} ({key!r})")
        members = sorted(value.items(), key=lambda kv: kv[0].encode("utf-16-be", "surrogatepass"))
        return b"{" + b",".join(canonical_json(k) + b":" + canonical_json(v) for k, v in members) + b"}"
    if isinstance(value, (list, tuple)):
        return b"[" + b",".join(canonical_json(v) for v in value) + b"]"
    return msgspec.json.encode(to_js(value))


def sha256_hex(data: bytes) -> str:
    """The hex sha256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def canonical_value(value: Any) -> Any:
    """``value`` as it reads back from its canonical text (NaN becomes ``None``, tuples lists, integral
    floats ints): what a receipt holds, so that recomputed values compare equal to stored ones."""
    return json.loads(canonical_json(value))
