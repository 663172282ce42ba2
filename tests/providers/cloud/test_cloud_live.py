"""Live: a ten-question LoCoMo comparison against the real Supermemory, Mem0 Platform and Zep Cloud APIs, for
every provider whose key is in the environment (skipped when none is), beside the offline sqlite provider.

    SUPERMEMORY_API_KEY=... MEM0_API_KEY=... ZEP_API_KEY=... pytest -m live tests/providers/cloud

The real endpoints are used whatever ``*_BASE_URL`` says; what the runs stored is deleted at the end.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bench_nb.runformat.load import load_runs
from bench_nb.runner import run_comparison
from bench_nb.runner.comparison import check_like_for_like
from bench_nb.runner.maintenance import clean_run

pytestmark = [pytest.mark.live, pytest.mark.slow]

KEYS = {"supermemory": "SUPERMEMORY_API_KEY", "mem0": "MEM0_API_KEY", "zep": "ZEP_API_KEY"}


def test_live_ten_question_locomo_comparison(
    locomo_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = [name for name, env in KEYS.items() if os.environ.get(env)]
    if not names:
        pytest.skip(f"no cloud provider key in the environment ({', '.join(KEYS.values())})")
    for name in names:
        monkeypatch.delenv(f"{KEYS[name].removesuffix('_API_KEY')}_BASE_URL", raising=False)
    runs_dir = tmp_path / "runs"
    result = run_comparison(
        [*names, "sqlite"],
        "locomo",
        dataset=locomo_path,
        runs_dir=runs_dir,
        limit=10,
        k=10,
        compare_id="live",
        progress=False,
    )
    try:
        for run in result.runs:
            assert run.status == "completed", run
            assert run.evaluated == 10 and run.failed == 0, run
        runs = load_runs(result.manifest_path)
        assert check_like_for_like(runs) == []
        for run in runs:
            ck = run.checkpoint
            assert ck is not None and (ck.benchNb or {}).get("k") == 10
            for q in ck.questions.values():
                assert len(q.phases.search.results or []) <= 10
        keys = [os.environ[KEYS[n]] for n in names]
        for path in tmp_path.rglob("*"):
            if path.is_file():
                assert not any(key in path.read_text("utf-8", "replace") for key in keys), path
    finally:
        for name in names:
            clean_run(runs_dir / f"live-{name}")
