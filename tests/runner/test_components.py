"""Names on the command line: model prefixes (``local:``, ``ollama:``, ...) are models, not plugin specs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run_args
from click.testing import CliRunner

from bench_nb.cli import cli
from bench_nb.runner.components import is_plugin, make_judges
from llm_server import LLMServer, llm_server

__all__ = ["llm_server"]


@pytest.mark.parametrize(
    "spec", ["local:llama", "ollama:qwen2.5:7b", "openai:gpt-4o", "anthropic:claude-x", "Gemini:flash"]
)
def test_a_model_prefix_is_not_a_plugin(spec: str) -> None:
    assert not is_plugin(spec)


@pytest.mark.parametrize("spec", ["lme-v2:gpt-4o-mini", "rubric:gpt-4o-mini"])
def test_lme_v2_with_a_model_is_a_judge_not_a_plugin(spec: str) -> None:
    """A registered judge given a model (``lme-v2:<alias>``) was read as a plugin ``module:attribute`` (only
    ``rubric`` was spelled out), so ``-j lme-v2:gpt-4o-mini`` failed with "cannot import 'lme-v2'"."""
    assert not is_plugin(spec)
    assert [j.name for j in make_judges(spec)] == [spec]


@pytest.mark.parametrize("spec", ["runner_fakes:LoggedJudge", "mypkg.memory:Mine", "local_pkg:Thing"])
def test_module_attribute_is_a_plugin(spec: str) -> None:
    assert is_plugin(spec)


@pytest.mark.parametrize("prefix", ["local", "ollama"])
def test_the_cli_runs_a_local_model_by_prefix(
    prefix: str, llm_server: LLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = "BENCH_NB_LOCAL_BASE_URL" if prefix == "local" else "BENCH_NB_OLLAMA_BASE_URL"
    monkeypatch.setenv(env, llm_server.openai_base_url)
    monkeypatch.setenv("BENCH_NB_LLM_CACHE", str(tmp_path / "llm.sqlite"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    args = run_args(
        "-m",
        f"{prefix}:llama",
        "-j",
        f"{prefix}:judge,contains",
        limit=3,
        run_id="loc",
        runs_dir=tmp_path,
    )
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "3 evaluated, 0 failed" in result.output
    models = {c.body["model"] for c in llm_server.calls}
    assert models == {"llama", "judge"}
    checkpoint = json.loads((tmp_path / "loc" / "checkpoint.json").read_text())
    assert checkpoint["benchNb"]["judges"][0] == f"{prefix}:judge"


def test_sha256_pins_the_benchmark_file(tmp_path: Path) -> None:
    from bench_nb.benchmarks import load_benchmark

    actual = load_benchmark("sample").sha256
    assert actual
    args = run_args(limit=2, runs_dir=tmp_path)
    wrong = CliRunner().invoke(cli, [*args, "-r", "bad", "--sha256", "0" * 64])
    assert wrong.exit_code != 0
    assert f"expected {'0' * 64}, got {actual}" in str(wrong.exception)
    assert not (tmp_path / "bad").exists()
    right = CliRunner().invoke(cli, [*args, "-r", "good", "--sha256", actual.upper()], catch_exceptions=False)
    assert right.exit_code == 0, right.output
    assert (
        json.loads((tmp_path / "good" / "checkpoint.json").read_text())["benchNb"]["benchmarkSha256"]
        == actual
    )


def test_an_unknown_provider_is_named_before_the_benchmark_is_loaded(tmp_path: Path) -> None:
    """``run_benchmark("sqlit", "locomo")`` downloaded LoCoMo (or, offline, failed on the download) before it
    looked the provider up: the typo came last, after a download, or never."""
    from bench_nb import run_benchmark
    from bench_nb.errors import ProviderError

    with pytest.raises(ProviderError, match=r"unknown provider 'sqlit' \(did you mean 'sqlite'\?\); known: "):
        run_benchmark("sqlit", "locomo", dataset=tmp_path / "absent.json", runs_dir=tmp_path / "runs")
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_a_run_id_to_resume_with_a_typo_names_the_nearest_run(tmp_path: Path) -> None:
    """``run_benchmark(run_id="synthetic-sqlit", runs_dir=...)`` said there is no such run to resume, not
    which run was meant."""
    import shutil

    from bench_nb import run_benchmark
    from bench_nb.errors import BenchNbError

    runs = tmp_path / "runs"
    shutil.copytree(Path(__file__).resolve().parents[1] / "fixtures" / "runs", runs)
    with pytest.raises(
        BenchNbError, match=r"no run 'synthetic-sqlit' in .* to resume \(did you mean 'synthetic-sqlite'\?\)"
    ):
        run_benchmark(run_id="synthetic-sqlit", runs_dir=runs)
    assert sorted(p.name for p in runs.iterdir()) == [
        "synthetic-full-context",
        "synthetic-no-memory",
        "synthetic-sqlite",
    ]


def test_a_run_directory_with_a_typo_names_the_nearest_run_beside_it(tmp_path: Path) -> None:
    """``rejudge("runs/synthetic-sqlit", ...)`` (and every command that locks a run) said "no such run
    directory", not which run was meant."""
    import shutil

    from bench_nb import rejudge
    from bench_nb.errors import RunFormatError

    runs = tmp_path / "runs"
    shutil.copytree(Path(__file__).resolve().parents[1] / "fixtures" / "runs", runs)
    with pytest.raises(
        RunFormatError, match=r"no such run directory \(did you mean 'synthetic-sqlite'\?\): no checkpoint"
    ):
        rejudge(runs / "synthetic-sqlit", ["f1"])
