"""An undecided gate (fewer than 2 haystacks) says that no ``--alpha`` can decide, in grammatical English (a user
gated 1 haystack and read "1 haystack allow ...", "accept a larger --alpha"); from 2 haystacks the gate decides."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

import bench_nb as bn
from bench_nb.metrics.gate import undecided_note
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
    assert "no `--alpha` can decide with 1 haystack" in text
    assert "haystack allow " not in text and "a larger `--alpha`" not in text


def test_two_or_three_haystacks_decide(receipt: Receipt, tmp_path: Path) -> None:
    # the CR2 t can decide from 2 haystacks (the sign-flip test it replaced could not below 4 at 0.1)
    for k in (2, 3):
        path = _haystacks(receipt, k, tmp_path)
        g = bn.gate(path, path, alpha=0.1)
        assert g.verdict == "not worse" and g.exit_code == 0, g.markdown()


def test_the_undecided_note_is_grammatical() -> None:
    assert undecided_note(1).startswith("1 haystack allows no test")
    assert undecided_note(0).startswith("0 haystacks allow no test")
