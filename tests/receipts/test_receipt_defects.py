"""Issue 38's receipt defects, each a test named after it: a receipt with duplicated or id-less questions, a
hash-valid receipt that is not one (no ``settings``, ``questions`` an object, nested too deeply), a run whose
score is 1.0000000000000002, a checkpoint whose top-level ``judge`` was changed. ``verify`` and the gate refuse
each naming the field or the question, never with a traceback."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

import bench_nb as bn
from bench_nb.errors import ReceiptError, RunFormatWarning
from bench_nb.receipts.canonical import canonical_json, sha256_hex
from bench_nb.receipts.receipt import Receipt, read_receipt


@pytest.fixture(scope="module")
def run(mb_example: Path) -> Path:
    return mb_example / "data" / "runs" / "fx-compare-supermemory"


@pytest.fixture(scope="module")
def receipt(run: Path) -> Receipt:
    return bn.make_receipt(run)


def sealed(body: dict[str, Any], path: Path) -> Path:
    """``body`` written as an intact receipt file (canonical, its sha256 recomputed): only the checks of its
    content can refuse it."""
    path.write_bytes(Receipt(body, sha256_hex(canonical_json(body))).to_bytes())
    return path


def test_verify_refuses_a_receipt_with_a_duplicated_question(
    receipt: Receipt, run: Path, tmp_path: Path
) -> None:
    body = copy.deepcopy(receipt.body)
    body["questions"].append(copy.deepcopy(body["questions"][3]))
    path = sealed(body, tmp_path / "dup.receipt.json")
    check = bn.verify_receipt(path, run)
    assert not check.ok
    assert f"question {body['questions'][3]['id']} appears twice" in str(check.difference)


def test_gate_refuses_a_receipt_with_a_duplicated_question(receipt: Receipt, tmp_path: Path) -> None:
    """A forged BASE with its right answers repeated made a regression pass; now the receipt is refused."""
    body = copy.deepcopy(receipt.body)
    body["questions"] += [copy.deepcopy(q) for q in body["questions"] if q["score"] == 1]
    path = sealed(body, tmp_path / "dup.receipt.json")
    with pytest.raises(ReceiptError, match="appears twice"):
        bn.gate(path, receipt)


def test_verify_refuses_a_question_with_no_id(receipt: Receipt, run: Path, tmp_path: Path) -> None:
    body = copy.deepcopy(receipt.body)
    del body["questions"][2]["id"]
    check = bn.verify_receipt(sealed(body, tmp_path / "noid.receipt.json"), run)
    assert not check.ok and "question 3 has no id" in str(check.difference)


def test_verify_names_questions_given_as_an_object_not_a_traceback(
    receipt: Receipt, run: Path, tmp_path: Path
) -> None:
    body = copy.deepcopy(receipt.body)
    body["questions"] = {"q1": 1}
    check = bn.verify_receipt(sealed(body, tmp_path / "obj.receipt.json"), run)
    assert not check.ok and "'questions' is dict, not a list" in str(check.difference)


def test_verify_refuses_a_deeply_nested_receipt_not_a_traceback(tmp_path: Path) -> None:
    path = tmp_path / "deep.receipt.json"
    path.write_text('{"receipt":{"questions":' + "[" * 100_000 + "]" * 100_000 + "}}")
    check = bn.verify_receipt(path)
    assert not check.ok and "nested too deeply" in str(check.difference)


def test_gate_on_a_receipt_missing_settings_is_an_error_not_a_fail(receipt: Receipt, tmp_path: Path) -> None:
    body = copy.deepcopy(receipt.body)
    del body["settings"]
    path = sealed(body, tmp_path / "nosettings.receipt.json")
    with pytest.raises(ReceiptError, match="'settings' is missing"):
        read_receipt(path)
    with pytest.raises(ReceiptError, match="'settings' is missing"):
        bn.gate(path, receipt)


def test_verify_on_a_score_of_1_0000000000000002_names_the_question(
    receipt: Receipt, run: Path, tmp_path: Path
) -> None:
    """In the run (its checkpoint) and in the receipt: one line naming the question, no traceback."""
    copy_dir = tmp_path / run.name
    shutil.copytree(run, copy_dir)
    data = json.loads((run / "checkpoint.json").read_text())
    qid = receipt.body["questions"][0]["id"]
    data["questions"][qid]["phases"]["evaluate"]["score"] = 1.0000000000000002
    (copy_dir / "checkpoint.json").write_text(json.dumps(data))
    with pytest.warns(RunFormatWarning, match="score 1.0000000000000002 of judge 'gpt-4o' is not in"):
        check = bn.verify_receipt(receipt.to_bytes(), copy_dir)
    assert (
        not check.ok
        and f"question {qid!r}, judge 'gpt-4o': score 1.0000000000000002 is not in [0, 1]"
        in str(check.difference)
    )
    body = copy.deepcopy(receipt.body)
    body["questions"][0]["score"] = 1.0000000000000002
    check = bn.verify_receipt(sealed(body, tmp_path / "score.receipt.json"), run)
    assert not check.ok and f"question {qid}: score 1.0000000000000002 is not a number in [0, 1]" in str(
        check.difference
    )


def test_verify_sees_a_changed_top_level_judge_in_a_checkpoint(make_run: Any) -> None:
    """A bench_nb run records its primary judge twice: the checkpoint's top-level ``judge`` (which the frames
    report for every question) and ``benchNb.primaryJudge`` (the settings). Changing the first changed what
    the reports say and verify did not see it."""
    path = make_run(
        "judged",
        answers={"q1": "Biscuit", "q2": "York", "q3": "March 2024"},
        primary_scores={"q1": 1, "q2": 0, "q3": 1},
        bench_nb={"version": 1, "primaryJudge": "contains", "judges": ["contains"]},
    )
    made = bn.make_receipt(path)
    assert made.body["run"]["judge"] == "contains"
    assert bn.verify_receipt(made.to_bytes(), path).ok
    checkpoint = path / "checkpoint.json"
    data = json.loads(checkpoint.read_text())
    assert data["judge"] == "contains" and data["benchNb"]["primaryJudge"] == "contains"
    data["judge"] = "gpt-4o"
    checkpoint.write_text(json.dumps(data))
    assert set(bn.questions_df(path, backend="polars")["judge"]) == {"gpt-4o"}  # what the reports show
    check = bn.verify_receipt(made.to_bytes(), path)
    assert not check.ok
    assert (
        check.difference == f'against {path}: run.judge: the receipt says "contains", the run gives "gpt-4o"'
    )


def test_a_receipt_written_into_its_run_waits_for_the_runs_lock(
    receipt: Receipt, run: Path, tmp_path: Path
) -> None:
    """``bench-nb receipt RUN -o RUN/receipt.json`` (where ``read_receipt`` looks) wrote into the run without
    its lock: beside a rejudge of the run, and a killed receipt's temporary file was deleted by no writer. It is
    now refused while another writer holds the run, and the next writer deletes a killed one's left-over."""
    from bench_nb.errors import RunLockedError
    from bench_nb.runformat.lock import lock_run

    mine = tmp_path / "run"
    shutil.copytree(run, mine)
    (mine / ".receipt.json.4242.140.tmp").write_text("{partial")  # a killed receipt's
    with lock_run(mine, "bench-nb rejudge"):
        with pytest.raises(RunLockedError, match=r"bench-nb rejudge"):
            receipt.write(mine / "receipt.json")
        assert not (mine / "receipt.json").exists()
    receipt.write(mine / "receipt.json")
    assert read_receipt(mine / "receipt.json").sha256 == receipt.sha256
    assert not list(mine.glob(".receipt.json.*.tmp"))
    # beside the run (the default RUN.receipt.json) or anywhere else: no lock needed, none taken
    with lock_run(mine, "bench-nb rejudge"):
        assert receipt.write(tmp_path / "run.receipt.json").is_file()


def test_a_receipt_written_anywhere_in_the_run_it_is_of_waits_for_the_runs_lock(
    run: Path, tmp_path: Path
) -> None:
    """``bench-nb receipt RUN -o RUN/results/receipt.json`` took no lock: only a receipt written straight into a
    run's folder did (``lock.run_containing``: anywhere inside the run the receipt is of, as a report)."""
    from bench_nb.errors import RunLockedError
    from bench_nb.runformat.lock import lock_run

    mine = tmp_path / "run"
    shutil.copytree(run, mine)
    (mine / "results").mkdir(exist_ok=True)
    made = bn.make_receipt(mine)
    with lock_run(mine, "bench-nb rejudge"), pytest.raises(RunLockedError, match=r"bench-nb rejudge"):
        made.write(mine / "results" / "receipt.json")
    assert read_receipt(made.write(mine / "results" / "receipt.json")).sha256 == made.sha256


_KILLED_RECEIPT = """
import os, sys, time
import bench_nb as bn
def stalled(src, dst):  # the temporary file written, the command killed before it replaces the receipt
    print("writing", flush=True)
    time.sleep(120)
os.replace = stalled
bn.make_receipt(sys.argv[1]).write(sys.argv[2])
"""


@pytest.mark.parametrize("where", [("receipt.json",), ("other.json",), ("results", "receipt.json")])
def test_a_killed_receipt_in_its_run_leaves_no_temporary_file_behind_the_next_writer(
    run: Path, tmp_path: Path, where: tuple[str, ...]
) -> None:
    """A receipt killed while it writes into its run left ``.other.json.<pid>.<thread>.tmp`` with
    ``-o RUN/other.json``, a name ``lock.RUN_TEMP_FILES`` does not list: it stayed in the run for good. In a run
    the temporary file is now ``receipt.json.tmp`` in the run's folder, which the next writer deletes."""
    import subprocess
    import sys

    from bench_nb.runformat.lock import lock_run

    mine = tmp_path / "run"
    shutil.copytree(run, mine)
    (mine / "results").mkdir(exist_ok=True)
    out = mine.joinpath(*where)
    proc = subprocess.Popen(
        [sys.executable, "-c", _KILLED_RECEIPT, str(mine), str(out)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "writing\n"
    finally:
        proc.kill()
        proc.wait(timeout=30)
        if proc.stdout:
            proc.stdout.close()
    assert len(list(mine.rglob("*.tmp"))) == 1
    lock_run(mine, "bench-nb rejudge").release()  # the next writer
    assert list(mine.rglob("*.tmp")) == []
    assert not out.exists()


def test_a_receipt_of_a_path_that_does_not_exist_says_why_no_run_loaded(tmp_path: Path) -> None:
    """``make_receipt("data/runs/typo")`` said only "expected one run, found 0"."""
    with pytest.raises(ReceiptError) as raised, pytest.warns(RunFormatWarning):
        bn.make_receipt(tmp_path / "no-such-run")
    assert str(raised.value).endswith("no-such-run: expected one run, found 0 (no such file or directory)")
