"""The statistics tests' fixtures: ``make_run`` writes a small run directory (see stats_fixtures)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from stats_fixtures import write_run


@pytest.fixture
def make_run(tmp_path: Path) -> Callable[..., Path]:
    def make(run_id: str, **kwargs: Any) -> Path:
        return write_run(tmp_path / "runs", run_id, **kwargs)

    return make
