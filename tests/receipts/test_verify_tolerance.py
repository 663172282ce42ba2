"""``verify`` compares recomputed numbers within a documented tolerance (docs/gate.md, "Receipts"): a number
another machine rounds one ulp otherwise still verifies, a change a reader could see fails naming the field;
everything else (the questions, the run) is compared exactly, and the hash covers the exact bytes."""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Any

import pytest

import bench_nb as bn
from bench_nb.receipts.canonical import canonical_json, sha256_hex
from bench_nb.receipts.receipt import ABS_TOL, REL_TOL, Receipt


def _resealed(receipt: Receipt, edit: Any) -> bytes:
    """The receipt's file with its body edited by ``edit`` and its sha256 made again (unsigned): a receipt
    that is intact as a file and differs from the run only where edited."""
    body = copy.deepcopy(receipt.body)
    edit(body)
    return Receipt(body, sha256_hex(canonical_json(body))).to_bytes()


@pytest.fixture(scope="module")
def made(mb_example: Path) -> tuple[Path, Receipt]:
    run = mb_example / "data" / "runs" / "fx-compare-supermemory"
    return run, bn.make_receipt(run)


def _row(body: dict[str, Any]) -> dict[str, Any]:
    """The first accuracy row with an interval below 1 (its ciLow is a float of many digits)."""
    return next(
        r for r in body["numbers"]["accuracy"] if isinstance(r["ciLow"], float) and 0 < r["ciLow"] < 1
    )


def test_tolerance_is_tiny() -> None:
    assert REL_TOL == 1e-12 and ABS_TOL == 1e-15


def test_a_number_one_ulp_off_verifies(made: tuple[Path, Receipt]) -> None:
    run, receipt = made

    def nudge(body: dict[str, Any]) -> None:
        row = _row(body)
        row["ciLow"] = math.nextafter(row["ciLow"], 1.0)

    data = _resealed(receipt, nudge)
    assert data != receipt.to_bytes()
    check = bn.verify_receipt(data, run)
    assert check.ok, check.difference
    assert check.sha256 != receipt.sha256  # the hash covers the exact bytes, the ulp included


def test_a_change_in_the_sixth_significant_digit_fails_naming_the_field(made: tuple[Path, Receipt]) -> None:
    run, receipt = made
    row = _row(receipt.body)
    low = row["ciLow"]
    changed = float(f"{low:.6g}") + 10 ** (math.floor(math.log10(low)) - 5)  # 6th significant digit + 1

    def edit(body: dict[str, Any]) -> None:
        _row(body)["ciLow"] = changed

    check = bn.verify_receipt(_resealed(receipt, edit), run)
    assert not check.ok
    assert f"numbers.accuracy.{row['type']}.ciLow: the receipt says {changed}" in str(check.difference)


def test_question_fields_are_compared_exactly(made: tuple[Path, Receipt]) -> None:
    run, receipt = made
    index = next(
        i for i, q in enumerate(receipt.body["questions"]) if isinstance(q["searchMs"], (int, float))
    )
    qid = receipt.body["questions"][index]["id"]

    def nudge(body: dict[str, Any]) -> None:
        q = body["questions"][index]
        q["searchMs"] = math.nextafter(float(q["searchMs"]), math.inf)

    check = bn.verify_receipt(_resealed(receipt, nudge), run)
    assert not check.ok and f"question {qid}: searchMs" in str(check.difference)


def test_a_count_is_not_a_float(made: tuple[Path, Receipt]) -> None:
    run, receipt = made

    def edit(body: dict[str, Any]) -> None:
        body["numbers"]["memscore"]["correct"] = (
            True if body["numbers"]["memscore"]["correct"] == 1 else 10**6
        )

    check = bn.verify_receipt(_resealed(receipt, edit), run)
    assert not check.ok and "numbers.memscore.correct" in str(check.difference)
