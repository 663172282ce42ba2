"""Fixtures of the provider tests (data and helpers in provider_fixtures.py)."""

from __future__ import annotations

import pytest
from provider_fixtures import CONVERSATION

from bench_nb.records import Session


@pytest.fixture
def conversation() -> tuple[Session, ...]:
    return CONVERSATION
