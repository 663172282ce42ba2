"""``--dry-run``: keys and providers checked, what a run will cost printed, nothing run."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import exit_code

from bench_nb.cli import main
from bench_nb.runner.estimate import MEMORY_WARNING_BYTES, estimate_run


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
