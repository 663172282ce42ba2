from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

import bench_nb
from bench_nb.errors import ProviderError
from bench_nb.providers import (
    FullContextProvider,
    NoMemoryProvider,
    Provider,
    SqliteProvider,
    get_provider,
    list_providers,
    register_provider,
    unregister_provider,
)
from bench_nb.records import IngestResult, SearchHit, Session


class EchoProvider:
    """A user's own provider: remembers the last message of each container."""

    name = "echo"

    def __init__(self, run_dir: Path, *, prefix: str = "") -> None:
        self.run_dir = run_dir
        self.prefix = prefix
        self.last: dict[str, str] = {}

    def ingest(self, container: str, sessions: Sequence[Session]) -> IngestResult:
        self.last[container] = sessions[-1].messages[-1].content
        return IngestResult(document_ids=(container,))

    def await_indexing(self, container: str, ingested: IngestResult, timeout_s: float) -> None:
        return None

    def search(self, container: str, query: str, k: int) -> list[SearchHit]:
        return [SearchHit(text=self.prefix + self.last[container])][:k]

    def clear(self, container: str) -> None:
        self.last.pop(container, None)


def test_builtins_are_listed_and_exported() -> None:
    names = list_providers()
    assert {"sqlite", "full-context", "no-memory", "mem0-local", "hybrid"} <= set(names)
    assert names == sorted(names)
    assert bench_nb.providers.get_provider is get_provider
    assert bench_nb.providers.list_providers is list_providers


def test_builtins_are_providers(tmp_path: Path) -> None:
    for name, cls in [
        ("sqlite", SqliteProvider),
        ("full-context", FullContextProvider),
        ("no-memory", NoMemoryProvider),
    ]:
        provider = get_provider(name, run_dir=tmp_path)
        assert isinstance(provider, cls)
        assert isinstance(provider, Provider)
        assert provider.name == name


def test_unknown_name_lists_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(ProviderError) as err:
        get_provider("sqlight", run_dir=tmp_path)
    message = str(err.value)
    assert "'sqlight'" in message
    for name in ("sqlite", "full-context", "no-memory"):
        assert name in message


def test_unknown_setting_lists_the_accepted_ones(tmp_path: Path) -> None:
    with pytest.raises(ProviderError, match=r"max_tokens.*it takes: max_context_tokens, model"):
        get_provider("full-context", run_dir=tmp_path, max_tokens=10)
    with pytest.raises(ProviderError, match="it takes: no settings"):
        get_provider("sqlite", run_dir=tmp_path, k=5)
    # a cloud provider takes its own settings and those every cloud provider passes on to CloudProvider
    with pytest.raises(
        ProviderError, match=r"max_retrys; it takes: scope, .*, base_url, max_concurrency, max_retries"
    ):
        get_provider("zep", run_dir=tmp_path, max_retrys=1)


def test_settings_reach_the_provider(tmp_path: Path) -> None:
    provider = get_provider("full-context", run_dir=tmp_path, max_context_tokens="1234")
    assert isinstance(provider, FullContextProvider)
    assert provider.max_context_tokens == 1234


def test_register_a_custom_provider(tmp_path: Path, conversation: tuple[Session, ...]) -> None:
    register_provider("echo", EchoProvider)
    try:
        assert "echo" in list_providers()
        provider = get_provider("echo", run_dir=tmp_path, prefix="> ")
        provider.ingest("c", conversation)
        assert [h.text for h in provider.search("c", "anything", 3)] == [
            "> " + conversation[-1].messages[-1].content
        ]
        with pytest.raises(ProviderError, match="already registered"):
            register_provider("echo", EchoProvider)
        register_provider("echo", "bench_nb.providers.baselines:NoMemoryProvider", replace=True)
        assert isinstance(get_provider("echo", run_dir=tmp_path), NoMemoryProvider)
    finally:
        unregister_provider("echo")
    assert "echo" not in list_providers()


def test_a_factory_that_returns_no_provider_is_refused(tmp_path: Path) -> None:
    register_provider("broken", lambda run_dir: object())
    try:
        with pytest.raises(ProviderError, match="lacks the Provider methods"):
            get_provider("broken", run_dir=tmp_path)
    finally:
        unregister_provider("broken")


def test_a_string_factory_that_cannot_be_imported_says_so(tmp_path: Path) -> None:
    register_provider("ghost", "no_such_module_xyz:Provider")
    try:
        with pytest.raises(ProviderError, match="cannot import 'no_such_module_xyz'"):
            get_provider("ghost", run_dir=tmp_path)
    finally:
        unregister_provider("ghost")


def test_unregister_restores_a_builtin(tmp_path: Path) -> None:
    register_provider("sqlite", EchoProvider, replace=True)
    try:
        assert isinstance(get_provider("sqlite", run_dir=tmp_path), EchoProvider)
    finally:
        unregister_provider("sqlite")
    assert isinstance(get_provider("sqlite", run_dir=tmp_path), SqliteProvider)
