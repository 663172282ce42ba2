r"""JSON exactly as JavaScript's ``JSON.stringify(value, null, 2)`` writes it, at msgspec's speed.

MemoryBench writes checkpoint.json and report.json with ``JSON.stringify(…, null, 2)``; a file bench_nb writes
in its place must be the same bytes. msgspec encodes and indents (``msgspec.json.format``) the way
``JSON.stringify`` does except for numbers and three corner cases, which ``to_js`` rewrites first:

- numbers: an integral float prints as an integer (``1.0`` -> ``1``, ``-0.0`` -> ``0``, ``1e21`` -> ``1e+21``,
  ``2.0**60`` -> JavaScript's digits), NaN and infinities as ``null``, an integer beyond 2**53 as the double
  JavaScript would hold; non-integral floats are msgspec's own text (the same shortest round-trip digits as
  JavaScript) except below 1e-4, where the notations differ (msgspec ``4.8e-6``, JavaScript
  ``0.0000048``) and the JavaScript text is spliced in as a ``msgspec.Raw``;
- object keys that are array indexes (``"0"``, ``"17"``) come first, in ascending order, as JavaScript orders
  an object's own keys;
- a lone surrogate in a string prints as ``\udXXX`` (msgspec cannot encode one at all).

``decode_js_floats`` decodes JSON text (a provider's raw search results, retrieval metrics) straight into such
values as far as numbers go: its float hook applies the number rule while decoding. What the hook cannot see,
an index key or an integer beyond 2**53, ``js_list_items`` looks for in the compact text of each batch it
encodes (shorter than the indented text, and searched once per batch), and re-encodes a batch through
``to_js`` where one may be. tests/runformat/test_jsjson.py checks all of it against ``JSON.stringify`` in
node.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import msgspec

_MAX_SAFE = 2**53
# An object key JavaScript treats as an array index (canonical decimal, below 2**32 - 1).
_INDEX_KEY = re.compile(r"0|[1-9][0-9]{0,9}")
_SIXTEEN_ZEROS = b"0" * 16


def js_number(x: float | int) -> str:
    """A number as JavaScript's ``String(x)`` / ``JSON.stringify`` prints it (``null`` for NaN and infinities)."""
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        if -_MAX_SAFE <= x <= _MAX_SAFE:
            return str(x)
        x = float(x)
    if math.isnan(x) or math.isinf(x):
        return "null"
    if x == 0:
        return "0"
    # Python's repr and JavaScript both print the shortest digits that round-trip; only the layout differs.
    text = repr(x)
    sign = ""
    if text[0] == "-":
        sign, text = "-", text[1:]
    mantissa, _, exp = text.partition("e")
    whole, _, frac = mantissa.partition(".")
    if frac == "0":
        frac = ""
    all_digits = whole + frac
    digits = all_digits.lstrip("0")
    # n: where the decimal point goes (ECMAScript's Number::toString), value = 0.DIGITS x 10**n
    n = int(exp or 0) + len(whole) - (len(all_digits) - len(digits))
    digits = digits.rstrip("0")
    k = len(digits)
    if k <= n <= 21:
        out = digits + "0" * (n - k)
    elif 0 < n <= 21:
        out = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        out = "0." + "0" * -n + digits
    else:
        e = n - 1
        out = digits[0] + ("." + digits[1:] if k > 1 else "") + ("e+" if e >= 0 else "e-") + str(abs(e))
    return sign + out


def js_float(x: float) -> float | int | msgspec.Raw | None:
    """``x`` as a value msgspec encodes to JavaScript's text for it."""
    if x.is_integer():
        return int(x) if -_MAX_SAFE <= x <= _MAX_SAFE else msgspec.Raw(js_number(x).encode())
    if 1e-4 <= abs(x) < math.inf:
        return x
    if math.isnan(x) or math.isinf(x):
        return None
    return msgspec.Raw(js_number(x).encode())


def _js_string(s: str) -> str | msgspec.Raw:
    try:
        s.encode("utf-8")
        return s
    except UnicodeEncodeError:
        pass
    # Join surrogate pairs into their code points (JavaScript sees a pair as one character), then escape the
    # lone ones as JSON.stringify does.
    s = s.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    # msgspec.json.format rejects the escape of a lone surrogate: it is written as the escape of a private-use
    # character 0x1000 above it (an escape msgspec itself never writes), put right by ``_unmark`` after layout.
    global _marked
    _marked = True
    text = json.dumps(s, ensure_ascii=False)
    text = "".join(f"\\u{ord(c) + 0x1000:04x}" if 0xD800 <= ord(c) <= 0xDFFF else c for c in text)
    return msgspec.Raw(text.encode("utf-8"))


# A marked lone surrogate: the escape of U+E800..U+EFFF not preceded by an escaping backslash.
_MARK = re.compile(rb"(?<!\\)((?:\\\\)*)\\u(e[89a-f][0-9a-f]{2})")
# Whether ``_js_string`` has marked a surrogate in this process yet: until then no text can hold a mark
# (msgspec writes no \u escape but a control character's), and ``_unmark`` need not search it.
_marked = False


def _unmark(text: bytes) -> bytes:
    if not _marked or b"\\ue" not in text:
        return text
    return _MARK.sub(lambda m: m[1] + b"\\u" + b"%04x" % (int(m[2], 16) - 0x1000), text)


def _js_key(k: Any) -> str:
    if isinstance(k, str):
        return k
    if k is None:
        return "null"
    if isinstance(k, (bool, int, float)):
        return js_number(k)
    raise TypeError(f"cannot use a {type(k).__name__} as a JSON object key")


def to_js(value: Any) -> Any:
    """``value`` rewritten so that ``msgspec.json.encode`` writes what ``JSON.stringify`` writes for it."""
    if value is None or value is True or value is False:
        return value
    if isinstance(value, str):
        return _js_string(value)
    if isinstance(value, float):
        return js_float(value)
    if isinstance(value, int):
        return value if -_MAX_SAFE <= value <= _MAX_SAFE else msgspec.Raw(js_number(value).encode())
    if isinstance(value, dict):
        items = [(_js_key(k), to_js(v)) for k, v in value.items()]
        index = [(k, v) for k, v in items if _INDEX_KEY.fullmatch(k) and int(k) < 2**32 - 1]
        if index:
            rest = [(k, v) for k, v in items if not (_INDEX_KEY.fullmatch(k) and int(k) < 2**32 - 1)]
            items = sorted(index, key=lambda kv: int(kv[0])) + rest
        if any(not isinstance(_js_string(k), str) for k, _ in items):
            # msgspec takes only str keys: a key with a lone surrogate needs the object spliced in raw.
            body = b",".join(_encode_str(k) + b":" + msgspec.json.encode(v) for k, v in items)
            return msgspec.Raw(b"{" + body + b"}")
        return dict(items)
    if isinstance(value, (list, tuple)):
        return [to_js(v) for v in value]
    if isinstance(value, msgspec.Raw):
        return value
    raise TypeError(f"cannot serialise {type(value).__name__} as JSON")


def _encode_str(s: str) -> bytes:
    js = _js_string(s)
    return msgspec.json.encode(js) if isinstance(js, str) else bytes(js)


def encode_js(value: Any, indent: int = 2) -> bytes:
    """``JSON.stringify(value, null, indent)`` as UTF-8 bytes."""
    return _unmark(msgspec.json.format(msgspec.json.encode(to_js(value)), indent=indent))


def dumps_js(value: Any, indent: int = 2) -> str:
    """``JSON.stringify(value, null, indent)``: JavaScript's number formatting, key order and layout."""
    return encode_js(value, indent).decode("utf-8")


def _float_hook(
    text: str,
    float: type[float] = float,
    abs: Callable[[float], float] = abs,
    js_float: Callable[[float], float | int | msgspec.Raw | None] = js_float,
) -> float | int | msgspec.Raw | None:
    # Called for every float in the search results (a million at 100,000 questions): the names it uses are
    # bound as defaults (local lookups), the bound 2**53 written out, and js_float's commonest case inlined.
    x = float(text)
    if 1e-4 <= abs(x) < 9007199254740992.0 and not x.is_integer():
        return x
    return js_float(x)


_JS_DECODER = msgspec.json.Decoder(float_hook=_float_hook)


def decode_js_floats(raw: bytes | msgspec.Raw) -> Any:
    """Decode JSON text with JavaScript's number rule for floats only, for ``js_list_items``, which finds what
    is left (an integer beyond 2**53, an array-index key) in the compact text it encodes: shorter than
    ``raw``'s indented text, and searched 256 items at a time."""
    return _JS_DECODER.decode(raw)


# For ``_encoded_as_js``: digits made "0" and the characters after which a number can start in compact text,
# other than ":" (",", "[", "-"), made "!", in one C pass.
_JS_CHECK = bytes.maketrans(b"123456789,[-", b"000000000!!!")
_BIG_AFTER_COLON = b":" + _SIXTEEN_ZEROS
_BIG_AFTER_OTHER = b"!" + _SIXTEEN_ZEROS


def _encoded_as_js(text: bytes) -> bool:
    r"""Whether msgspec's compact ``text`` of ``decode_js_floats`` values (or ``to_js`` ones) holds no integer
    beyond 2**53 (16 digits or more) and no object key of digits only (JavaScript puts an array index first):
    False when it may (``to_js`` then rewrites the values). Only an escaped quote (``\"``) can put a ``"`` in
    a string in compact text, so digits between quotes followed by ``:`` are a key."""
    zeros = text.translate(_JS_CHECK)
    i = zeros.find(b'0":')
    while i >= 0:  # a key ending in a digit: all digits?
        if zeros[max(0, i - 16) : i].rstrip(b"0")[-1:] in (b'"', b""):
            return False
        i = zeros.find(b'0":', i + 3)
    # 16+ digits where a number starts (after ":", ",", "[" or "-"): an integer beyond 2**53. A fraction's
    # digits come after its point (msgspec writes 1e16 and beyond with an exponent), and digits in a string
    # (an id of 16 hex digits that are all decimal) mostly follow a letter; a string with such digits right
    # after a "," or "-" only costs the slower path.
    return _BIG_AFTER_COLON not in zeros and _BIG_AFTER_OTHER not in zeros


def js_object_opening(head: dict[str, Any], key: str, indent: int = 2) -> bytes:
    """The first part of ``JSON.stringify({**head, key: [...items]}, null, indent)`` written in parts (``head``
    not empty): ``head``'s members and ``key``'s opening bracket; then ``js_list_items``, then
    ``js_object_closing``."""
    pad = b" " * indent
    return encode_js(head, indent)[:-2] + b",\n" + pad + msgspec.json.encode(key) + b": ["  # drop "\n}"


def js_object_closing(indent: int = 2, *, empty: bool) -> bytes:
    """The last part (``js_object_opening``): the list's closing bracket (``empty``: it had no items) and the
    object's."""
    return b"]\n}" if empty else b"\n" + b" " * indent + b"]\n}"


def js_list_items(
    items: Iterable[Any], indent: int = 2, chunk: int = 256, *, first: bool
) -> Iterator[bytes | memoryview]:
    """The text of ``items`` as the items of a list in an object (two levels deep), ``chunk`` at a time (one
    msgspec call each for encoding and layout), a separator before each batch (none before the list's first
    item when ``first``; ``False`` continues a list whose earlier items another writer wrote).

    Items may be ``to_js`` or ``decode_js_floats`` values: a batch goes through ``to_js`` only when its
    encoding may hold what those leave to it (``_encoded_as_js``) or msgspec cannot encode it (a lone
    surrogate)."""
    for batch in _batches(items, chunk):
        try:
            encoded = msgspec.json.encode([batch])
            if not _encoded_as_js(encoded):
                encoded = msgspec.json.encode([[to_js(item) for item in batch]])
        except UnicodeEncodeError:
            encoded = msgspec.json.encode([[to_js(item) for item in batch]])
        # Laid out as [[items]], the items are two levels deep, as in the object: drop the brackets' lines.
        text = _unmark(msgspec.json.format(encoded, indent=indent))
        yield b"\n" if first else b",\n"
        yield memoryview(text)[4 + indent : -(4 + indent)]  # no copy of the batch's text
        first = False


def _batches(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    batch: list[Any] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch
