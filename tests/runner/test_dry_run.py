"""``--dry-run``: keys and providers checked, what a run will cost printed, nothing run."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import polars as pl
import pytest
from cli_helpers import exit_code

from bench_nb.cli import main
from bench_nb.frames.questions import questions_df
from bench_nb.runformat.load import load_runs
from bench_nb.runner import estimate, run_benchmark
from bench_nb.runner.comparison import run_comparison
from bench_nb.runner.estimate import MEMORY_WARNING_BYTES, RunSizeWarning, estimate_run


def test_a_dry_run_prints_the_cost_and_runs_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-dry-run-test")
    monkeypatch.chdir(tmp_path)
    main(
        [
            "compare",
            "--dry-run",
            "-p",
            "sqlite,full-context",
            "-b",
            "sample",
            "-m",
            "gpt-4o-mini",
            "-j",
            "contains",
        ]
    )
    out = capsys.readouterr().out
    assert "Dry run: nothing ingested, no model called" in out
    assert "sample: 50 of 50 questions" in out
    assert "sqlite: " in out and "full-context: " in out and "50 searches" in out
    assert "model calls: 100 to gpt-4o-mini" in out and "at list price" in out
    assert not (tmp_path / "data").exists()  # no run directory, no comparison


def test_a_dry_run_checks_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)
    assert exit_code(["run", "--dry-run", "-p", "sqlite", "-b", "sample", "-j", "gpt-4o"]) == 1
    assert "judge 'gpt-4o': OPENAI_API_KEY is not set" in capsys.readouterr().err


def test_a_compare_dry_run_lists_every_missing_key_and_still_estimates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 38: the dry run stopped at the first missing key, so a user set keys one at a time before seeing
    any estimate. Now it prints the estimate, then one error naming every key it lacks."""
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ZEP_API_KEY", "SUPERMEMORY_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)
    args = ["compare", "--dry-run", "-p", "sqlite,zep,supermemory", "-b", "sample", "--limit", "5"]
    assert exit_code([*args, "-m", "gpt-4o", "-j", "sonnet-4.5,contains"]) == 1
    captured = capsys.readouterr()
    assert "sample: 5 of 50 questions" in captured.out
    assert "zep: 1 container(s) to ingest, 5 searches" in captured.out and "supermemory: " in captured.out
    assert "model calls: 15 to gpt-4o" in captured.out and "model calls: 15 to sonnet-4.5" in captured.out
    [error] = captured.err.splitlines()
    assert error.startswith("error: API key(s) missing: answerer 'gpt-4o': OPENAI_API_KEY is not set")
    for missing in ("judge 'sonnet-4.5': ANTHROPIC_API_KEY", "ZEP_API_KEY", "SUPERMEMORY_API_KEY"):
        assert missing in error
    assert not (tmp_path / "data").exists()
    estimate = estimate_run(
        "zep", "sample", limit=2, judges="contains"
    )  # the API: the keys beside the estimate
    assert estimate.selected == 2 and [p.provider for p in estimate.providers] == ["zep"]
    [missing] = estimate.missing_keys
    assert "ZEP_API_KEY" in missing


def test_full_context_on_all_of_locomo_warns_of_its_memory(locomo_path: Path) -> None:
    estimate = estimate_run("full-context,sqlite", "locomo", dataset=locomo_path)
    full, sqlite = estimate.providers
    assert estimate.selected == 1986 and full.hits > 1_000_000
    assert full.memory_bytes > MEMORY_WARNING_BYTES and "GB of memory" in full.warnings[0]
    assert 1.5 * 1024**3 < full.disk_bytes < 3 * 1024**3  # measured: 2.3 GB
    assert not sqlite.warnings and sqlite.disk_bytes < 100 * 1024**2
    small = estimate_run(
        "full-context", "locomo", dataset=locomo_path, exclude_types="adversarial", limit=100
    )
    assert small.selected == 100 and not small.providers[0].warnings


def test_the_estimate_is_within_a_quarter_of_a_real_run(
    tmp_path: Path, locomo_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Context tokens per answer and the answerer's input tokens, estimated, against a real offline run's counts
    (the extractive answerer counts its prompts as gpt-4o does; gpt-4o-mini has the same tokenizer)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-dry-run-test")
    selection = {"dataset": locomo_path, "exclude_types": "adversarial", "limit": 40}
    with pytest.warns(RunSizeWarning, match=r"40 question\(s\) of locomo from 1 haystack\(s\)"):
        run_comparison(
            "sqlite,full-context", "locomo", runs_dir=tmp_path / "runs", progress=False, **selection
        )
    q = questions_df(load_runs(tmp_path / "runs" / "*"), backend="polars")
    actual = {
        p: q.filter(pl.col("provider") == p)["context_tokens"].mean() for p in ("sqlite", "full-context")
    }
    estimate = estimate_run("sqlite,full-context", "locomo", answerer="gpt-4o-mini", **selection)
    for p in estimate.providers:
        assert abs(p.context_tokens / actual[p.provider] - 1) < 0.25, (p.provider, p.context_tokens, actual)
    assert abs(estimate.input_tokens["gpt-4o-mini"] / q["prompt_tokens"].sum() - 1) < 0.25
    lines = estimate.lines()
    assert any("from 1 haystack(s)" in line and line.startswith("warning: ") for line in lines)
    assert "not estimated: a provider's own model calls (memory-side cost" in lines[-1]


def test_a_real_run_warns_of_its_memory_as_it_starts(
    tmp_path: Path, locomo_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the limit, lowered to this run's size
    monkeypatch.setattr(estimate, "MEMORY_WARNING_BYTES", 100 * 1024**2)
    with pytest.warns(RunSizeWarning) as record:
        run_benchmark(
            "full-context", "locomo", dataset=locomo_path, limit=3, runs_dir=tmp_path, progress=False
        )
    said = [str(w.message) for w in record]
    assert any(re.match(r"full-context keeps [\d,]+ search results .* GB of memory", m) for m in said), said
    with warnings.catch_warnings():
        warnings.simplefilter("error", RunSizeWarning)  # sqlite keeps k hits a question: no memory warning
        with pytest.raises(RunSizeWarning, match="haystack"):
            run_benchmark("sqlite", "locomo", dataset=locomo_path, limit=3, runs_dir=tmp_path, progress=False)


def test_a_benchmark_with_too_few_haystacks_is_not_told_to_select_more(tmp_path: Path) -> None:
    """The bundled sample has 4 haystacks in all: a larger --limit cannot help, so the warning says what the
    run can show instead; a benchmark with enough haystacks is still told to select from more."""
    sample = estimate_run("sqlite", "sample")
    (warning,) = sample.warnings
    assert "sample has only 4 haystack(s) in all" in warning and "--limit" not in warning
    with pytest.warns(RunSizeWarning, match=r"has only 4 haystack\(s\) in all"):
        run_benchmark("no-memory", "sample", limit=2, runs_dir=tmp_path, progress=False)
