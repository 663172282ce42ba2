"""The lenient JSON-lines reader both judgments.jsonl and labels.jsonl are read with."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest

from bench_nb.runformat.jsonl import decode_lines, read_json_lines


def _even(rec: Any) -> int:
    if rec["n"] % 2:
        raise ValueError(f"{rec['n']} is odd")
    return int(rec["n"])


def test_each_line_is_read_in_order_and_a_bad_one_is_a_problem_naming_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'{"n": 2}\n\n  \n{"n": 3}\r\n"text"\n{"m": 1}\nnot json\n{"n": 4}\n{"n": 6')
    items, problems = read_json_lines(path, _even)
    assert items == [2, 4]  # the torn last line is a problem too
    assert [(p.path, p.field) for p in problems] == [(str(path), f"line {n}") for n in (4, 5, 6, 7, 9)]
    assert [p.message for p in problems] == [
        "line 4 skipped: 3 is odd",  # the reader refused it
        "line 5 skipped: string indices must be integers, not 'str'",  # JSON, not an object
        "line 6 skipped: 'n'",  # the field the reader needs is missing
        "line 7 skipped: JSON is malformed: invalid character (byte 4)",
        "line 9 skipped: Input data was truncated",
    ]


def test_a_missing_file_has_no_lines(tmp_path: Path) -> None:
    assert read_json_lines(tmp_path / "absent.jsonl", _even) == ([], [])


def test_decode_lines_decodes_the_lines_read_json_lines_reads_or_raises(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'{"n": 2}\n\n  \n{"n": 3}\r\n"text"\r{"n": 4}')
    assert decode_lines(path) == [{"n": 2}, {"n": 3}, "text", {"n": 4}]
    assert read_json_lines(path, lambda rec: rec)[0] == decode_lines(path)
    path.write_bytes(b'{"n": 2}\n{"n": 3')  # torn: read_json_lines names the line, decode_lines gives up
    with pytest.raises(msgspec.DecodeError):
        decode_lines(path)
    assert decode_lines(tmp_path / "absent.jsonl") == []
