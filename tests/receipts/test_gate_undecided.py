"""An undecided gate says the smallest ``--alpha`` that could decide with its haystacks, or that none can, in
grammatical English (a user gated 1 haystack and read "1 haystack allow ...", "accept a larger --alpha")."""

from __future__ import annotations

import copy
import math
from pathlib import Path

import pytest

import bench_nb as bn
from bench_nb.metrics.gate import smallest_deciding_alpha, undecided_note
from bench_nb.receipts.canonical import canonical_json, sha256_hex
from bench_nb.receipts.receipt import Receipt


@pytest.fixture(scope="module")
def receipt(mb_example: Path) -> Receipt:
    return bn.make_receipt(mb_example / "data" / "runs" / "fx-compare-supermemory")


def _haystacks(receipt: Receipt, k: int, tmp_path: Path) -> Path:
    """The receipt with its questions spread over ``k`` haystacks (resealed: an intact receipt file)."""
    body = copy.deepcopy(receipt.body)
    for i, q in enumerate(body["questions"]):
        q["haystack"] = f"h{i % k}"
    path = tmp_path / f"k{k}.receipt.json"
    path.write_bytes(Receipt(body, sha256_hex(canonical_json(body))).to_bytes())
    return path


def test_one_haystack_says_no_alpha_can_decide(receipt: Receipt, tmp_path: Path) -> None:
    path = _haystacks(receipt, 1, tmp_path)
    g = bn.gate(path, path)
    assert g.verdict == "undecided" and g.exit_code == 2
    text = g.markdown()
    assert "1 haystack allows no test at any level" in text
    assert "no `--alpha` can decide with 1 haystack (it would have to be 0.5 or more)" in text
    assert "haystack allow " not in text and "a larger `--alpha`" not in text


def test_few_haystacks_name_the_smallest_alpha_that_could_decide(receipt: Receipt, tmp_path: Path) -> None:
    path = _haystacks(receipt, 3, tmp_path)
    g = bn.gate(path, path, alpha=0.1)
    text = g.markdown()
    assert g.verdict == "undecided"
    assert "3 haystacks allow no one-sided p below 0.125" in text and "none below the level 0.1" in text
    assert "with these 3 haystacks, only an `--alpha` above 0.125 could fail it" in text
    assert bn.gate(path, path, alpha=0.13).verdict == "not worse"  # above it: decided
    two = _haystacks(receipt, 2, tmp_path)
    assert "only an `--alpha` above 0.25 could fail it" in bn.gate(two, two).markdown()


def test_smallest_deciding_alpha_counts_the_rows() -> None:
    assert smallest_deciding_alpha(1) == math.inf
    assert smallest_deciding_alpha(3) == 0.125 and smallest_deciding_alpha(3, rows=3) == 0.375
    assert smallest_deciding_alpha(4) == 0.0625
    assert undecided_note(1, 0.1).startswith("1 haystack allows")
    assert undecided_note(2, 0.1).startswith("2 haystacks allow no one-sided p below 0.25")
