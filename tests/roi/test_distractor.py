"""The ``distractor`` probe mode (issue 31): a keyless question built from the words a memory shares with its
nearest neighbours in its read set, so a lexical search can miss it. On a realistic store (the generated
two-owner store of 100 memories, ``roi.sample.team_memories``) its headline is strictly between 0 and 1 at
k = 5, rises with k, and is 0 for the no-memory baseline; the judge still credits only the source memory."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from bench_nb.cli import cli
from bench_nb.roi import RoiStore, roi_results_df
from bench_nb.roi.memory import pinned_scopes
from bench_nb.roi.probers import (
    RUN_LIMIT,
    content_words,
    distractor_question,
    distractor_terms,
    longest_shared_run,
)
from bench_nb.roi.sample import team_memories, write_sample_memories


def _import_team(tmp_path: Path, db: Path | str) -> None:
    path = write_sample_memories(tmp_path / "team.jsonl", team_memories())
    result = CliRunner().invoke(cli, ["roi", "import", str(path), "--db", str(db), "--admin", "--json"])
    assert result.exit_code == 0, result.output


def _run(db: Path | str, *extra: str) -> dict:
    args = ["roi", "run", "--owner", "alex", "--db", str(db), "--deterministic", "--json", *extra]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_the_headline_falls_strictly_between_0_and_1_and_tells_k_and_providers_apart(
    tmp_path: Path, db: Path | str
) -> None:
    _import_team(tmp_path, db)
    assert _run(db, "--probe-mode", "distractor")["status"] == "generating"
    at5 = _run(db, "--probe-mode", "distractor", "-k", "5")
    assert at5["probe_mode"] == "distractor" and at5["judged"] == 20
    assert 0 < at5["exclusive_rate"] < 1, at5
    # The same 20 probes (a probe is kept until its memory changes): more hits, more found; no memory, none.
    at1 = _run(db, "-k", "1")
    at10 = _run(db, "-k", "10")
    baseline = _run(db, "--provider", "no-memory")
    assert at1["exclusive_rate"] < at5["exclusive_rate"] < at10["exclusive_rate"]
    assert baseline["exclusive_rate"] == 0 and baseline["probe_mode"] == "distractor"
    results = roi_results_df("alex", db, backend="polars")
    assert set(results["probe_mode"]) == {"distractor"} and results.height == 80
    # Honest judge: with_memory exactly when the source memory surfaced.
    assert (results["with_memory"] == results["source_surfaced"]).all()


def test_a_question_names_only_words_its_memory_shares_with_its_neighbours(tmp_path: Path) -> None:
    db = tmp_path / "roi.sqlite"
    _import_team(tmp_path, db)
    with RoiStore(db) as store:
        memories = [m for m in store.readable_memories("alex", ["proj.alex.shop"]) if m.kind != "preference"]
        read_set = store.readable_memories("alex", pinned_scopes("alex", "proj.alex.shop"))
    assert len(memories) == 45
    for memory in memories:
        question = distractor_question(memory, read_set)
        others = [set(content_words(o.content)) for o in read_set if o.id != memory.id]
        terms = distractor_terms(memory, read_set)
        assert 1 <= len(terms) <= 2 and all(t.lower() in question.lower() for t in terms), question
        assert all(any(t in words for words in others) for t in terms), (memory.content, terms)
        assert longest_shared_run(question, memory.content) < RUN_LIMIT
