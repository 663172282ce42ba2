"""Appends to the JSON-lines files beside a run (``judgments.jsonl``, ``labels.jsonl``) never leave a damaged
line, nor append after one (issue 31: a disk full mid-append left a torn line, the resume appended after it,
and the run warned on every load and failed strict=True for good).

The short write is real: a child process appends under a file-size limit (``RLIMIT_FSIZE``, SIGXFSZ ignored,
so the kernel writes what fits and then refuses with EFBIG, as a full disk refuses with ENOSPC).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from bench_nb.judges.labels import append_label, read_labels
from bench_nb.records import Verdict
from bench_nb.runformat.verdicts import FILENAME, append_verdicts, read_verdicts

SRC = Path(__file__).resolve().parents[2] / "src"


def _verdicts(n: int, start: int = 0, explanation: str = "ok") -> list[tuple[str, Verdict]]:
    return [
        (f"q{i}", Verdict(judge="contains", score=1, label="correct", explanation=explanation))
        for i in range(start, start + n)
    ]


CHILD = """
import errno, resource, signal, sys
sys.path.insert(0, {src!r})
from bench_nb.records import Verdict
from bench_nb.runformat.verdicts import append_verdicts

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of being killed
limit = int(sys.argv[2])
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
batch = [(f"big{{i}}", Verdict(judge="contains", score=1, label="correct", explanation="x" * 500))
         for i in range(40)]
try:
    append_verdicts(sys.argv[1], batch)
except OSError as err:
    print("refused", errno.errorcode.get(err.errno))
else:
    print("written")
"""


def test_a_write_cut_short_by_a_full_disk_leaves_no_damaged_line(tmp_path: Path) -> None:
    append_verdicts(tmp_path, _verdicts(2))
    path = tmp_path / FILENAME
    before = path.read_bytes()
    child = subprocess.run(
        [
            sys.executable,
            "-c",
            textwrap.dedent(CHILD).format(src=str(SRC)),
            str(tmp_path),
            str(len(before) + 700),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert child.stdout.strip() == "refused EFBIG", child.stdout + child.stderr
    assert path.read_bytes() == before  # the part that fitted was taken back
    verdicts, problems = read_verdicts(tmp_path)
    assert problems == [] and len(verdicts) == 2
    append_verdicts(tmp_path, _verdicts(1, start=2))  # the resume's append
    verdicts, problems = read_verdicts(tmp_path)
    assert problems == [] and sorted(q for q, _ in verdicts) == ["q0", "q1", "q2"]


def test_an_append_after_a_torn_tail_repairs_it(tmp_path: Path) -> None:
    """A process killed mid-write leaves a line without its newline: the next append cuts it off (it can
    not be read) instead of gluing its own first line to it."""
    append_verdicts(tmp_path, _verdicts(2))
    path = tmp_path / FILENAME
    with path.open("ab") as fh:
        fh.write(b'{"questionId": "q9", "judge": "contai')
    assert len(read_verdicts(tmp_path)[1]) == 1  # the torn line is a problem until the next append
    append_verdicts(tmp_path, _verdicts(1, start=2))
    verdicts, problems = read_verdicts(tmp_path)
    assert problems == [] and sorted(q for q, _ in verdicts) == ["q0", "q1", "q2"]
    assert path.read_bytes().endswith(b"\n") and b"q9" not in path.read_bytes()


def test_a_whole_last_line_without_its_newline_is_kept(tmp_path: Path) -> None:
    append_verdicts(tmp_path, _verdicts(1))
    path = tmp_path / FILENAME
    path.write_bytes(path.read_bytes().rstrip(b"\n"))
    append_verdicts(tmp_path, _verdicts(1, start=1))
    verdicts, problems = read_verdicts(tmp_path)
    assert problems == [] and sorted(q for q, _ in verdicts) == ["q0", "q1"]


def test_labels_get_the_same_repair(tmp_path: Path) -> None:
    append_label(tmp_path, "q0", "correct")
    with (tmp_path / "labels.jsonl").open("ab") as fh:
        fh.write(b'{"questionId": "q1", "la')
    append_label(tmp_path, "q2", "incorrect")
    labels, problems = read_labels(tmp_path)
    assert problems == [] and sorted(q for q, _ in labels) == ["q0", "q2"]


@pytest.mark.parametrize("weight", [math.inf, math.nan, -1.0, 0.0])
def test_a_label_weight_that_is_not_a_positive_finite_number_is_refused(
    tmp_path: Path, weight: float
) -> None:
    with pytest.raises(ValueError, match="must be a positive finite number"):
        append_label(tmp_path, "q0", "correct", weight=weight)
    assert not (tmp_path / "labels.jsonl").exists()
    append_label(tmp_path, "q0", "correct", weight=2.5)
    assert json.loads((tmp_path / "labels.jsonl").read_text())["weight"] == 2.5
