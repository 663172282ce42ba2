"""``runformat.jsjson`` against the reference: ``JSON.stringify(value, null, 2)`` in a real node process."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench_nb.runformat.jsjson import (
    decode_js_floats,
    dumps_js,
    encode_js,
    js_list_items,
    js_number,
    js_object_closing,
    js_object_opening,
    to_js,
)
from needs import need


def stream_js_object(head: dict[str, Any], key: str, items: list[Any], chunk: int) -> bytes:
    """``JSON.stringify({**head, key: items}, null, 2)`` written in parts, as the report writes its evaluations."""
    parts = list(js_list_items(items, chunk=chunk, first=True))
    return js_object_opening(head, key) + b"".join(parts) + js_object_closing(empty=not parts)


# One node process answers every example: a line of ASCII JSON in (NaN and infinities as sentinel strings,
# which JSON cannot carry), JSON.stringify's text out as a JSON string.
_NODE = r"""
const rl = require('readline').createInterface({input: process.stdin});
const special = {'\u0000NaN': NaN, '\u0000Inf': Infinity, '\u0000-Inf': -Infinity};
rl.on('line', (line) => {
  const [mode, text] = JSON.parse(line);
  let out;
  if (mode === 'value') out = JSON.stringify(JSON.parse(text, (k, v) => (typeof v === 'string' && Object.hasOwn(special, v)) ? special[v] : v), null, 2);
  else if (mode === 'roundtrip') out = JSON.stringify(JSON.parse(text), null, 2);
  else out = JSON.stringify(Number(text));
  process.stdout.write(JSON.stringify(out) + '\n');
});
"""


class Node:
    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            ["node", "-e", _NODE], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, encoding="utf-8"
        )

    def ask(self, mode: str, text: str) -> str:
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(json.dumps([mode, text]) + "\n")
        self.proc.stdin.flush()
        answer: str = json.loads(self.proc.stdout.readline())
        return answer

    def stringify(self, value: Any) -> str:
        return self.ask("value", json.dumps(_transport(value)))

    def close(self) -> None:
        assert self.proc.stdin
        self.proc.stdin.close()
        self.proc.wait(timeout=10)


def _transport(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return "\u0000NaN" if math.isnan(v) else ("\u0000Inf" if v > 0 else "\u0000-Inf")
    if isinstance(v, dict):
        return {k: _transport(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_transport(x) for x in v]
    return v


@pytest.fixture(scope="module")
def node() -> Iterator[Node]:
    need(shutil.which("node") is not None, "node is not installed", env="BENCH_NB_REQUIRE_NODE")
    n = Node()
    yield n
    n.close()


# Keys that JavaScript orders first (array indexes), near-misses it does not ("01", "-1", 2**32 - 1), and text.
_keys = st.one_of(
    st.sampled_from(["0", "1", "2", "10", "01", "-1", "4294967294", "4294967295", "a", "__proto__", "é"]),
    st.text(max_size=6),
)
_floats = st.one_of(
    st.floats(),
    st.sampled_from(
        [0.0, -0.0, 1e21, 1e-7, 1e-6, 9.99e-7, 4.8e-6, 1.5e-5, 1e-4, 2.0**53, 2.0**60, 1.2345e20]
    ),
    st.integers(-(10**6), 10**6).map(lambda i: i / 1000),
)
_text = st.one_of(
    st.text(),  # includes lone surrogates
    st.sampled_from(["\u2028\u2029", "\x00\x1f\x7f", '"\\/', "\ud83d\ude00", "\ud800", "a\udfffb", "é😀"]),
)
_scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**64), 2**64), _floats, _text)
_values = st.recursive(
    _scalars,
    lambda children: st.one_of(st.lists(children, max_size=5), st.dictionaries(_keys, children, max_size=5)),
    max_leaves=30,
)

_SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS
@given(_values)
def test_dumps_js_is_byte_identical_to_node(node: Node, value: Any) -> None:
    assert dumps_js(value) == node.stringify(value)
    assert encode_js(value) == node.stringify(value).encode("utf-8", "surrogatepass")


@_SETTINGS
@given(_floats)
def test_js_number_is_javascripts_string_of_a_number(node: Node, x: float) -> None:
    assert js_number(x) == node.ask(
        "number", repr(x) if math.isfinite(x) else str(x).replace("inf", "Infinity")
    )


def test_number_corner_cases() -> None:
    assert [js_number(x) for x in (1.0, -0.0, 1e21, 1e-7, 1.5e-5, 2.0**60, 2**60, 1e20 + 2**20)] == [
        "1",
        "0",
        "1e+21",
        "1e-7",
        "0.000015",
        "1152921504606847000",
        "1152921504606847000",
        "100000000000001050000",
    ]
    assert dumps_js([math.nan, math.inf, -math.inf]) == "[\n  null,\n  null,\n  null\n]"
    assert dumps_js({"b": 1, "10": 2, "2": 3, "01": 4}) == '{\n  "2": 3,\n  "10": 2,\n  "b": 1,\n  "01": 4\n}'
    assert dumps_js("\ud800\u2028é") == '"\\ud800\u2028é"'
    assert dumps_js({"d": [], "e": {}}) == '{\n  "d": [],\n  "e": {}\n}'


# Raw JSON as some other writer left it: Python's floats ("1.0", "1e-05"), ASCII escapes, other layouts.
_raw_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**60), 2**60),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(alphabet=st.characters(exclude_categories=["Cs"])),
    ),
    lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(_keys, children, max_size=4)),
    max_leaves=20,
)


@_SETTINGS
@given(
    st.dictionaries(_keys, _values, min_size=1, max_size=3),
    st.lists(_values, max_size=5),
    st.integers(1, 3),
)
def test_streamed_object_equals_the_whole(
    node: Node, head: dict[str, Any], items: list[Any], chunk: int
) -> None:
    head.pop("items", None)
    head = head or {"x": 1}

    streamed = stream_js_object(to_js(head), "items", [to_js(i) for i in items], chunk=chunk)
    # the list goes last (JavaScript would move index-like keys of head before it, which "items" is not)
    whole = {**head, "items": items}
    assert streamed == node.stringify(whole).encode("utf-8", "surrogatepass")


_CORNER_RAWS = [
    '{"b": 1, "7" : 2, "01": 3}',  # an index key written with a space before the colon
    '{"id": 12345678901234567890, "n": -9007199254740993, "f": 0.7000000000000001}',
    '{"when": "2024-01-10T10:15:00.000Z", "v": [1.0, 1e-05, 1E21, -0.0, 5e-324]}',
    '{"s": "caf\\u00e9 \\/ \\ud83d\\ude00", "k10": 1, "10": 2}',
    '{"b": 1, "\\u0031": 2, "\\u0030" : 3, "x\\u0032": 4}',  # index keys written with escapes
    '[12345678901234567, "mem_5084174784793101", 0.30000000000000004, [9007199254740993]]',
]


@_SETTINGS
@given(st.lists(_raw_values, max_size=4), st.integers(1, 3), st.sampled_from([None, 2]))
def test_streamed_decode_js_floats_values_are_json_stringify_of_json_parse(
    node: Node, values: list[Any], chunk: int, indent: int | None
) -> None:
    """What the report does with search results: ``decode_js_floats`` leaves integers beyond 2**53 and
    array-index keys to ``js_list_items``' check of the encoded batch."""
    raws = [json.dumps(v, indent=indent) for v in values]
    items = [decode_js_floats(r.encode()) for r in raws]
    streamed = stream_js_object({"x": 1}, "items", items, chunk=chunk)
    expected = node.ask("roundtrip", '{"x": 1, "items": [' + ",".join(raws) + "]}")
    assert streamed == expected.encode("utf-8")


@pytest.mark.parametrize("raw", _CORNER_RAWS)
def test_streamed_decode_js_floats_corner_cases(node: Node, raw: str) -> None:
    items = [decode_js_floats(raw.encode()), {"k": [1]}]
    streamed = stream_js_object({"x": 1}, "items", items, chunk=1)
    assert streamed == node.ask("roundtrip", '{"x": 1, "items": [' + raw + ', {"k": [1]}]}').encode("utf-8")
