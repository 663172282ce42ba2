from __future__ import annotations

from pathlib import Path

import pytest

FIXTURE_RUNS = Path(__file__).resolve().parents[1] / "fixtures" / "runs"


@pytest.fixture(scope="session")
def fixture_glob() -> str:
    return str(FIXTURE_RUNS / "*")
