"""``need``: skip a test with a reason, or fail it where the environment requires what is missing (CI).

A plain module (tests/ is on the path, it is no package) so that the conftest and the helper modules that are
not conftests import one definition.
"""

from __future__ import annotations

import os

import pytest


def need(condition: bool, reason: str, *, env: str) -> None:
    """Skip with ``reason`` unless ``condition``; fail instead when the environment variable ``env`` is set."""
    if condition:
        return
    if os.environ.get(env):
        pytest.fail(f"{reason} (required because {env} is set)")
    pytest.skip(reason)
