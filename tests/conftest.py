"""Shared fixtures.

``shared_data`` finds the real datasets (``../shared/data`` beside the checkout, or $BENCH_NB_SHARED_DATA).
Without them the tests that need them skip with the reason; with BENCH_NB_REQUIRE_SHARED=1 (set by .ci/run)
they fail instead, so CI always runs them.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _shared_root() -> Path:
    return Path(os.environ.get("BENCH_NB_SHARED_DATA", REPO.parent / "shared" / "data"))


def need(condition: bool, reason: str, *, env: str) -> None:
    """Skip with ``reason`` unless ``condition``; fail instead when the environment variable ``env`` is set."""
    if condition:
        return
    if os.environ.get(env):
        pytest.fail(f"{reason} (required because {env} is set)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    root = _shared_root()
    need(
        root.is_dir(),
        f"shared datasets not found at {root} (set BENCH_NB_SHARED_DATA)",
        env="BENCH_NB_REQUIRE_SHARED",
    )
    return root


@pytest.fixture(scope="session")
def mb_example(shared_data: Path) -> Path:
    path = shared_data / "memorybench" / "example"
    need(path.is_dir(), f"MemoryBench example run not found at {path}", env="BENCH_NB_REQUIRE_SHARED")
    return path


@pytest.fixture(scope="session")
def locomo_path(shared_data: Path) -> Path:
    path = shared_data / "locomo" / "locomo10.json"
    need(path.is_file(), f"LoCoMo not found at {path}", env="BENCH_NB_REQUIRE_SHARED")
    return path


@pytest.fixture(scope="session")
def longmemeval_path(shared_data: Path) -> Path:
    path = shared_data / "longmemeval" / "longmemeval_oracle.json"
    need(path.is_file(), f"LongMemEval oracle not found at {path}", env="BENCH_NB_REQUIRE_SHARED")
    return path


@pytest.fixture(scope="session")
def locomo_audit(shared_data: Path) -> Path:
    """The public LoCoMo audit's files: errors.json, fc-baseline/<run>/eval_results.json, ap-baseline/v1."""
    path = shared_data / "locomo-audit"
    need(
        (path / "errors.json").is_file(),
        f"LoCoMo audit data not found at {path}",
        env="BENCH_NB_REQUIRE_SHARED",
    )
    return path


@pytest.fixture(scope="session")
def harness_results(shared_data: Path) -> Path:
    """Other harnesses' published per-question results: zep/zep_locomo_grades.json, mem0/results.json."""
    path = shared_data / "harness-results"
    need((path / "zep").is_dir(), f"harness results not found at {path}", env="BENCH_NB_REQUIRE_SHARED")
    return path
