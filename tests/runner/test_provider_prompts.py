"""A provider's own answer and judge prompts: used only with allow_provider_prompts, and the run is marked.

The answerer and judge are real LLM components talking over HTTP to the local API server; the server's
call log shows which prompt each request carried.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from runner_fakes import PROVIDER_ANSWER_PROMPT, PROVIDER_JUDGE_PROMPT, PromptingProvider, make_benchmark
from runner_llm import LLM_KEY, llm_env, llm_server

from bench_nb.cli import cli
from bench_nb.errors import ComparisonError
from bench_nb.frames.questions import questions_df
from bench_nb.judges.prompts import custom_prompt_hash, prompt_set_hash
from bench_nb.models.prompt import answer_prompt_hash
from bench_nb.runner import check_like_for_like, run_benchmark, write_compare_manifest
from llm_server import LLMServer, request_text

__all__ = ["llm_env", "llm_server"]


def _bench_nb(run_dir: Path) -> dict:
    return json.loads((run_dir / "checkpoint.json").read_text())["benchNb"]


def _run(tmp_path: Path, run_id: str, **kw):
    kw.setdefault("answerer", "gpt-4o-mini")
    kw.setdefault("judges", "gpt-4o")
    return run_benchmark(
        PromptingProvider(),
        make_benchmark(1, 2),
        run_id=run_id,
        runs_dir=tmp_path / "runs",
        progress=False,
        **kw,
    )


def _sent(server: LLMServer) -> list[str]:
    return [request_text(c.body) for c in server.calls if c.outcome == "ok"]


def test_provider_prompts_are_used_only_when_allowed_and_the_run_is_marked(
    llm_env: LLMServer, tmp_path: Path
) -> None:
    server = llm_env
    off = _run(tmp_path, "off")
    assert off.evaluated == 2
    sent = _sent(server)
    assert len(sent) == 4 and not any("PROVIDER" in t for t in sent)  # the provider offers prompts: not used
    extra = _bench_nb(off.run_dir)
    assert "customPrompt" not in extra
    assert extra["promptHashes"] == {"answer": answer_prompt_hash(), "judge:gpt-4o": prompt_set_hash()}

    server.reset()
    on = _run(tmp_path, "on", allow_provider_prompts=True)
    assert on.evaluated == 2
    sent = _sent(server)
    assert sum(t.startswith("PROVIDER ANSWER PROMPT.") for t in sent) == 2
    assert sum(t.startswith("PROVIDER JUDGE PROMPT.") for t in sent) == 2
    extra = _bench_nb(on.run_dir)
    assert extra["customPrompt"] is True
    assert extra["promptHashes"] == {
        "answer": answer_prompt_hash(PROVIDER_ANSWER_PROMPT),
        "judge:gpt-4o": custom_prompt_hash(PROVIDER_JUDGE_PROMPT),
    }
    assert extra["invocation"]["allowProviderPrompts"] is True

    df = questions_df([off.run_dir, on.run_dir])
    assert df.groupby("run_id")["custom_prompt"].all().to_dict() == {"off": False, "on": True}

    diffs = check_like_for_like([off.run_dir, on.run_dir])
    assert diffs == [
        f"answer prompt differs: off={answer_prompt_hash()}, on={answer_prompt_hash(PROVIDER_ANSWER_PROMPT)}",
        f"judge prompt differs: off={prompt_set_hash()}, on={custom_prompt_hash(PROVIDER_JUDGE_PROMPT)}",
        "custom prompt: on used a provider's own prompt, not graded like the others",
    ]
    with pytest.raises(ComparisonError, match="custom prompt"):
        write_compare_manifest([off.run_dir, on.run_dir], compare_id="mixed")
    # Two runs that both used the provider's prompt agree on the hashes, and are still flagged.
    server.reset()
    on2 = _run(tmp_path, "on2", allow_provider_prompts=True)
    assert check_like_for_like([on.run_dir, on2.run_dir]) == [
        "custom prompt: on, on2 used a provider's own prompt, not graded like the others"
    ]
    # Resuming with other prompt settings is refused; not given, the run's own setting is kept.
    with pytest.raises(ComparisonError, match="prompts"):
        _run(tmp_path, "on", allow_provider_prompts=False)
    server.reset()
    assert _run(tmp_path, "on").status == "completed" and not server.calls
    for file in (tmp_path / "runs").rglob("*"):
        if file.is_file():
            assert LLM_KEY.encode() not in file.read_bytes(), file


def test_prompts_reach_only_components_that_use_a_prompt(llm_env: LLMServer, tmp_path: Path) -> None:
    # Offline components take no prompt: allowing provider prompts changes nothing and marks nothing.
    offline = _run(
        tmp_path, "offline", answerer="extractive", judges="contains,f1", allow_provider_prompts=True
    )
    extra = _bench_nb(offline.run_dir)
    assert "customPrompt" not in extra and extra["promptHashes"] == {"answer": answer_prompt_hash()}
    assert llm_env.count() == 0
    # An LLM answerer with a deterministic judge: the answer prompt is the provider's, and the run is marked.
    mixed = _run(tmp_path, "mixed", judges="f1,gpt-4o", allow_provider_prompts=True)
    extra = _bench_nb(mixed.run_dir)
    assert extra["customPrompt"] is True
    assert extra["promptHashes"]["answer"] == answer_prompt_hash(PROVIDER_ANSWER_PROMPT)
    assert extra["promptHashes"]["judge:gpt-4o"] == custom_prompt_hash(PROVIDER_JUDGE_PROMPT)


def test_cli_flag_marks_the_run_in_summary_and_compare_warns(llm_env: LLMServer, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    base = ["-b", "sample", "--limit", "2", "-m", "gpt-4o-mini", "-j", "gpt-4o", "--runs-dir", str(runs)]
    base += ["--no-progress"]
    provider = "runner_fakes:PromptingProvider"

    def invoke(*args: str | Path) -> str:
        result = CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return result.output

    invoke("run", "-p", provider, "-r", "plain", *base)
    invoke("run", "-p", provider, "-r", "custom", "--allow-provider-prompts", *base)
    assert _bench_nb(runs / "custom")["customPrompt"] is True
    assert "customPrompt" not in _bench_nb(runs / "plain")
    # `run -r ID` alone resumes with the flag the run was started with (otherwise the prompts would differ).
    assert "custom: completed, 2 evaluated" in invoke("run", "-r", "custom", "--runs-dir", runs)

    lines = invoke("summary", runs / "plain", runs / "custom").splitlines()
    row = {line.split()[0]: line for line in lines if line.startswith(("plain ", "custom "))}
    assert " *" in row["custom"] and " *" not in row["plain"]
    assert "* graded with a provider's own prompt: not comparable with the others" in lines

    result = CliRunner().invoke(
        cli,
        ["compare", "-p", f"{provider},sqlite", "--compare-id", "cmp", "--allow-provider-prompts", *base],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    assert "WARNING: not like for like: answer prompt differs" in result.output
    manifest = json.loads((tmp_path / "compare" / "cmp" / "manifest.json").read_text())
    assert any(
        m.startswith("custom prompt: cmp-runner_fakes_PromptingProvider ")
        for m in manifest["benchNb"]["mismatches"]
    )
