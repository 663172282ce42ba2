"""The compare report's receipts table: each run's receipt, its hash and whether it verified against the run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import bench_nb as bn
from bench_nb import tables


def test_receipts_table_shows_the_hash_and_whether_it_verified(mb_example: Path, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    for name in ("a", "b"):
        shutil.copytree(mb_example / "data" / "runs" / "fx-compare-supermemory", runs / name)
    ck_path = runs / "b" / "checkpoint.json"
    ck = json.loads(ck_path.read_text())
    ck["runId"] = "fx-b"
    ck_path.write_text(json.dumps(ck))
    good = bn.make_receipt(runs / "a")
    good.write(runs / "a.receipt.json")
    bad = bn.make_receipt(runs / "b")
    (runs / "b" / "receipt.json").write_bytes(bad.to_bytes())  # the other place looked in
    qid = sorted(ck["questions"])[0]
    ck["questions"][qid]["phases"]["answer"]["hypothesis"] = "<b>changed</b>"
    ck_path.write_text(json.dumps(ck))
    table = tables.table_receipts(str(runs / "*"))
    rows = {r["run_id"]: r for r in table.frame.iter_rows(named=True)}
    assert rows["fx-compare-supermemory"]["verified"] is True
    assert rows["fx-compare-supermemory"]["sha256"] == good.sha256
    assert rows["fx-b"]["verified"] is False
    assert f"question {qid}: its answer differ" in rows["fx-b"]["difference"]
    assert good.sha256[:16] in table.html and "does not verify" in table.html
    assert "<b>changed" not in table.html  # run text escaped


def test_no_receipt_no_rows(mb_example: Path) -> None:
    assert tables.table_receipts(mb_example / "data" / "runs" / "fx-compare-supermemory").frame.height == 0


def test_the_compare_notebook_shows_the_table() -> None:
    nb = json.loads((Path(__file__).parents[2] / "notebooks" / "compare.ipynb").read_text())
    code = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    assert "tables.table_receipts(run_set)" in code
