"""The labelling widget: a stratified, seeded sample; keys label and move; labels are saved append-only beside
the run at once, resume in a new widget, and load as the judge "human" in judgments_df and the agreement."""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest

import bench_nb
from bench_nb.judges.labels import labels_path, read_labels
from bench_nb.widgets import LabelWidget, label_answers, stratified_sample
from synthetic_runs import HOSTILE_TEXT

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "runs"


@pytest.fixture
def runs(tmp_path: Path) -> str:
    for run in FIXTURES.iterdir():
        shutil.copytree(run, tmp_path / "runs" / run.name)
    return str(tmp_path / "runs" / "*")


def test_the_sample_is_stratified_seeded_and_weighted(runs: str) -> None:
    q = bench_nb.questions_df(runs, backend="polars")
    j = bench_nb.judgments_df(runs, backend="polars")
    items = stratified_sample(q, j, 30, seed=3)
    assert items == stratified_sample(q, j, 30, seed=3)
    assert items != stratified_sample(q, j, 30, seed=4)
    answered = q.filter(pl.col("hypothesis").is_not_null())
    types = set(answered["question_type_norm"].to_list())
    assert {i.question_type for i in items} == types  # every type is in the sample
    assert any(i.disputed for i in items) and any(not i.disputed for i in items)
    # weights: each stratum's answers per sampled answer, so they add up to the answers in the strata
    assert sum(i.weight for i in items) == pytest.approx(answered.height)
    assert len({(i.run_id, i.question_id) for i in items}) == len(items)


def test_keys_label_move_and_save_at_once(runs: str) -> None:
    lab = label_answers(runs, n=20, seed=1)
    assert lab.done == 0 and lab.position == 0 and "0 / 20" in lab.status.value
    first = lab.current
    assert (first is not None and first.question in lab.card.value) or "&" in lab.card.value
    lab.keys.value = "c"  # typed into the key box
    assert lab.keys.value == "" and lab.done == 1 and lab.position == 1
    saved, _ = read_labels(first.run_path)
    assert saved[(first.question_id, "human")].label == "correct"
    assert saved[(first.question_id, "human")].weight == pytest.approx(first.weight)
    lab.press("i")
    lab.press("u")
    lab.press("b")  # back to the third answer, labelled unsure
    assert lab.position == 2 and "labelled before: unsure" in lab.card.value
    lab.press("1")  # relabel: appended, the newest line wins
    lab.press("x")  # not a key: nothing happens
    assert lab.done == 3 and "3 / 20" in lab.status.value and lab.progress.value == 3
    third = lab.items[2]
    lines = labels_path(third.run_path).read_text().splitlines()
    assert sum(third.question_id in line for line in lines) == 2
    assert read_labels(third.run_path)[0][(third.question_id, "human")].label == "correct"


def test_labelling_resumes_and_labels_load_as_the_human_judge(runs: str) -> None:
    lab = LabelWidget(runs, n=20, seed=1)
    for key in "ciucc":
        lab.press(key)
    again = LabelWidget(runs, n=20, seed=1)  # a new kernel, the same sample
    assert [i.question_id for i in again.items] == [i.question_id for i in lab.items]
    assert again.done == 5 and again.position == 5
    j = bench_nb.judgments_df(runs, backend="polars")
    human = j.filter(pl.col("judge") == "human")
    assert human.height == 5 and set(human["source"]) == {"labels"}
    assert human["unscored"].sum() == 1  # the unsure one
    assert set(human["label"].to_list()) == {"correct", "incorrect", "unscored"}
    agreement = bench_nb.judge_agreement(j)
    assert "human" in agreement.judges
    pairs = agreement.pairwise
    assert pairs[pairs["judge_b"].eq("human") | pairs["judge_a"].eq("human")]["n"].max() == 4


def test_a_finished_sample_says_so_and_run_text_is_escaped(runs: str) -> None:
    lab = LabelWidget(runs, n=400, seed=0)
    assert any(HOSTILE_TEXT in i.answer for i in lab.items)
    while lab.current is not None and HOSTILE_TEXT not in lab.current.answer:
        lab.press("n")
    assert "<script>" not in lab.card.value and "&lt;script&gt;" in lab.card.value
    small = LabelWidget(runs, n=3, seed=0)
    for _ in small.items:
        small.press("c")
    assert small.current is None and "Every sampled answer is labelled" in small.card.value


def test_allocation_is_proportional_with_one_per_stratum() -> None:
    from bench_nb.widgets.labelling import allocate

    assert allocate([100, 50, 3, 1, 1], 10) == [5, 2, 1, 1, 1]
    assert allocate([60, 30, 10], 10) == [6, 3, 1]
    assert allocate([2, 2, 2], 100) == [2, 2, 2]  # never more than a stratum holds
    assert allocate([10, 1, 1, 1], 2) == [1, 1, 1, 1]  # every stratum, even past n
