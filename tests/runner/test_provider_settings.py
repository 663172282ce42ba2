"""Provider settings: ``PROVIDER.KEY=VALUE`` for one provider of a comparison, never a secret in a run,
recorded so that ``run -r`` and ``clean`` reuse them; ``--indexing-timeout`` on the command line."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest
from cli_helpers import invoke
from click.testing import CliRunner

from bench_nb.cli import cli
from bench_nb.errors import ProviderError
from bench_nb.runformat.format import Checkpoint
from bench_nb.runner import run_benchmark, run_comparison
from bench_nb.runner.settings import check_provider_settings, split_provider_settings

SECRET = "sk-live-Zq9vUfS3cr3tV4lu3xx"


def _checkpoint(run_dir: Path) -> Checkpoint:
    return msgspec.json.decode((run_dir / "checkpoint.json").read_bytes(), type=Checkpoint)


def _invocation(run_dir: Path) -> dict:
    return dict((_checkpoint(run_dir).benchNb or {})["invocation"])


def test_split_gives_plain_keys_to_all_and_prefixed_keys_to_one() -> None:
    out = split_provider_settings(
        {"threshold": 0.5, "zep.scope": "episodes", "zep.threshold": 0.1, "mypkg.memory:Mine.depth": 3},
        ["supermemory", "zep", "mypkg.memory:Mine"],
    )
    assert out == {
        "supermemory": {"threshold": 0.5},
        "zep": {"threshold": 0.1, "scope": "episodes"},  # the provider's own value wins
        "mypkg.memory:Mine": {"threshold": 0.5, "depth": 3},
    }
    assert split_provider_settings(None, ["sqlite"]) == {"sqlite": {}}
    with pytest.raises(ProviderError, match=r"'mem0.infer' is for provider 'mem0', which is not among"):
        split_provider_settings({"mem0.infer": False}, ["sqlite", "zep"])
    with pytest.raises(ProviderError, match=r"not this run's provider \('sqlite'\)"):
        split_provider_settings({"zep.scope": "episodes"}, ["sqlite"])


@pytest.mark.parametrize(
    ("settings", "what"),
    [
        ({"api_key": SECRET}, "names a secret"),
        ({"apiKey": "x"}, "names a secret"),
        ({"max_context_tokens": 500}, None),  # "tokens" is not "token"
        ({"auth_token": "abc"}, "names a secret"),
        ({"password": "hunter2"}, "names a secret"),
        ({"base_url": "https://api.example.com/v1?token=abc123def"}, "looks like a key or token"),
        ({"headers": {"Authorization": f"Bearer {SECRET}"}}, "looks like a key or token"),
        ({"note": SECRET}, "looks like a key or token"),
        ({"base_url": "https://bench:hunter2@proxy.example.com"}, "looks like a key or token"),
    ],
)
def test_secrets_are_refused_without_echoing_them(settings: dict, what: str | None) -> None:
    if what is None:
        assert check_provider_settings("p", settings) == settings
        return
    with pytest.raises(ProviderError, match=what) as err:
        check_provider_settings("p", settings)
    assert SECRET not in str(err.value) and "hunter2" not in str(err.value)


def test_the_value_of_a_secret_environment_variable_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZEP_API_KEY", "z3p-plainlooking-value")
    with pytest.raises(
        ProviderError, match="'base_url' is the value of the environment variable ZEP_API_KEY"
    ):
        check_provider_settings("zep", {"base_url": "z3p-plainlooking-value"})


def test_ordinary_settings_pass() -> None:
    ok = {"max_context_tokens": 500, "model": "gpt-4o", "base_url": "http://127.0.0.1:8080", "infer": False}
    assert check_provider_settings("p", ok) == ok


def test_a_secret_setting_never_reaches_a_run_directory(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli,
        ["compare", "-p", "sqlite,full-context", "-b", "sample", "--limit", "2", "--compare-id", "leak",
         "--runs-dir", str(tmp_path / "runs"), "-s", f"full-context.api_key={SECRET}", "--no-progress"],
    )  # fmt: skip
    assert isinstance(result.exception, ProviderError) and "names a secret" in str(result.exception)
    assert SECRET not in str(result.exception)
    # Refused before any run started: nothing was written at all.
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())
    with pytest.raises(ProviderError, match="looks like a key or token"):
        run_benchmark(
            "sqlite", "sample", run_id="r", runs_dir=tmp_path, limit=2, provider_settings={"x": SECRET}
        )
    assert not (tmp_path / "r").exists()


def test_compare_sends_each_provider_its_own_settings(tmp_path: Path) -> None:
    runs = tmp_path / "data" / "runs"
    out = invoke(
        "compare", "-p", "sqlite,full-context", "-b", "sample", "--limit", "4", "--compare-id", "c",
        "--runs-dir", runs, "--no-progress", "-s", "full-context.max_context_tokens=60",
    )  # fmt: skip
    assert "c-sqlite: completed, 4 evaluated" in out and "c-full-context: completed, 4 evaluated" in out
    assert _invocation(runs / "c-full-context")["providerSettings"] == {"max_context_tokens": 60}
    assert "providerSettings" not in _invocation(
        runs / "c-sqlite"
    )  # sqlite never saw it (it would refuse it)
    # The setting reached full-context: every search kept at most 60 tokens of the haystack.
    ck = _checkpoint(runs / "c-full-context")
    for q in ck.questions.values():
        hits = [json.loads(bytes(r)) for r in q.phases.search.results or []]
        assert hits and sum(h["raw"]["tokens"] for h in hits) <= 60
    # A setting for a provider that is not compared is refused, naming the providers.
    result = CliRunner().invoke(
        cli,
        [
            "compare",
            "-p",
            "sqlite,no-memory",
            "-b",
            "sample",
            "--runs-dir",
            str(runs),
            "-s",
            "zep.scope=episodes",
        ],
    )
    assert isinstance(result.exception, ProviderError)
    assert "among this run's providers (sqlite, no-memory)" in str(result.exception)


def test_python_compare_takes_per_provider_settings(tmp_path: Path) -> None:
    result = run_comparison(
        "sqlite,full-context",
        "sample",
        compare_id="py",
        runs_dir=tmp_path / "runs",
        limit=2,
        progress=False,
        provider_settings={"full-context.max_context_tokens": 80},
    )
    assert [r.status for r in result.runs] == ["completed", "completed"]
    assert _invocation(result.runs[1].run_dir)["providerSettings"] == {"max_context_tokens": 80}


def test_indexing_timeout_and_stored_settings_reach_the_provider(tmp_path: Path) -> None:
    args = ["-b", "sample", "--limit", "3", "--runs-dir", tmp_path, "--no-progress"]
    invoke(
        "run",
        "-p",
        "runner_fakes:ProbeProvider",
        "-r",
        "p",
        "-s",
        "flavour=mint",
        "--indexing-timeout",
        "7.5",
        *args,
    )
    log = (tmp_path / "p" / "probe.log").read_text().splitlines()
    assert log and all(line == "indexing mint 7.5" for line in log)
    assert _invocation(tmp_path / "p")["providerSettings"] == {"flavour": "mint"}
    # Resuming with the run id alone makes the provider with the recorded setting (it has no default).
    assert "p: completed, 3 evaluated" in invoke("run", "-r", "p", "--runs-dir", tmp_path, "--no-progress")
    # clean does too.
    assert "Cleared" in invoke("clean", tmp_path / "p")
    assert (tmp_path / "p" / "probe.log").read_text().splitlines()[-1] == "clear mint"
    bad = CliRunner().invoke(cli, ["run", "-p", "sqlite", "--indexing-timeout", "0", *map(str, args)])
    assert bad.exit_code == 2 and "--indexing-timeout" in bad.output
