"""Canonical JSON against RFC 8785's own examples, and receipts beside runs left alone by the run loaders."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from bench_nb.receipts.canonical import canonical_json
from bench_nb.runformat.load import load_runs


def test_rfc8785_example_of_section_3_2_2() -> None:
    """The RFC's sample input (numbers, string escapes, literals) and its canonical output, byte for byte."""
    text = (
        '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],'
        ' "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",'
        ' "literals": [null, true, false]}'
    )
    expected = (
        '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],'
        '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}'
    )
    assert canonical_json(json.loads(text)) == expected.encode("utf-8")


def test_rfc8785_member_order_of_section_3_2_3() -> None:
    """Members sort by their keys' UTF-16 code units: an emoji (a surrogate pair) before U+FB33."""
    value = {
        "€": "Euro Sign",
        "\r": "Carriage Return",
        "\ufb33": "Hebrew Letter Dalet With Dagesh",
        "1": "One",
        "\U0001f600": "Emoji: Grinning Face",
        "\u0080": "Control",
        "ö": "Latin Small Letter O With Diaeresis",
    }
    keys = list(json.loads(canonical_json(value)))
    assert keys == ["\r", "1", "\u0080", "\u00f6", "\u20ac", "\U0001f600", "\ufb33"]
    assert (
        canonical_json({"10": 1, "9": 2, "a": [1.0, -0.0, float("nan")]}) == b'{"10":1,"9":2,"a":[1,0,null]}'
    )


def test_a_receipt_beside_runs_is_not_read_as_a_run(mb_example: Path, tmp_path: Path) -> None:
    shutil.copytree(mb_example / "data" / "runs" / "fx-compare-supermemory", tmp_path / "run-a")
    (tmp_path / "run-a.receipt.json").write_bytes(b'{"receipt":{}}')
    runs = load_runs(str(tmp_path / "*"))
    assert [r.run_id for r in runs] == ["fx-compare-supermemory"] and runs.problems == []
