"""Fixtures of the cloud-provider tests: each adapter against its fake API on 127.0.0.1 (fake_services.py).

``cloud`` is parametrised over the three adapters (cloud_adapters.py); ``cloud.make(**settings)`` builds the
provider with the key and base URL in the environment (as a user sets them) and fast retry and poll timings.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cloud_adapters import ADAPTERS, FAST, Cloud

from bench_nb.providers import get_provider
from bench_nb.providers.cloud import CloudProvider

CLOUD_SDKS = ("supermemory", "zep_cloud", "mem0")


@pytest.fixture(autouse=True)
def _require_cloud_extra() -> None:
    """Skip without the ``cloud`` extra's SDKs; fail instead when BENCH_NB_REQUIRE_EXTRAS is set (CI)."""
    from needs import need

    missing = [m for m in CLOUD_SDKS if importlib.util.find_spec(m) is None]
    need(
        not missing,
        f"optional extra 'cloud' not installed (missing {', '.join(missing)}): pip install -e '.[cloud]'",
        env="BENCH_NB_REQUIRE_EXTRAS",
    )


@pytest.fixture(params=list(ADAPTERS))
def cloud(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Cloud]:
    adapter = ADAPTERS[request.param]
    with adapter.fake() as service:
        monkeypatch.setenv(adapter.key_env, service.key)
        monkeypatch.setenv(adapter.url_env, service.url)
        made: list[CloudProvider] = []

        def make(**settings: Any) -> CloudProvider:
            provider = get_provider(adapter.name, run_dir=tmp_path / "run", **{**FAST, **settings})
            assert isinstance(provider, CloudProvider)
            made.append(provider)
            return provider

        yield Cloud(adapter, service, make)
        for p in made:
            p.close()
