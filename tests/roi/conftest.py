"""Fixtures of the ROI tests (the memory sets are in roi_memsets.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from roi_memsets import MEMBERS, alice_and_bob, write_jsonl


@pytest.fixture
def rows() -> list[dict[str, Any]]:
    return alice_and_bob()


@pytest.fixture
def jsonl_file(tmp_path: Path, rows: list[dict[str, Any]]) -> Path:
    return write_jsonl(tmp_path / "memories.jsonl", [*rows, *MEMBERS])


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "roi.sqlite"
