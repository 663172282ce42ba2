"""One class holds a run's settings: ``RunSpec``, from ``bench-nb run`` to the settings table (issue 30).

The command line builds what was asked (a ``RunRequest``, issue 36), the runner records it as a ``RunSpec``,
a resume reads it and merges it into the request, the like-for-like check,
the fingerprint and the settings table read it; and no module outside ``runformat/`` builds the run-level
``benchNb`` record by hand.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
from click.testing import CliRunner

import bench_nb
from bench_nb.cli import cli
from bench_nb.errors import ComparisonError
from bench_nb.frames.questions import questions_frame
from bench_nb.runformat.load import check_like_for_like, read_run
from bench_nb.runformat.spec import (
    Invocation,
    RunRequest,
    RunSpec,
    differences,
    read_spec,
)
from bench_nb.runner import run as runner_run
from bench_nb.tables.settings import run_settings
from needs import need

SRC = Path(bench_nb.__file__).parent


def _keys(struct: Any) -> set[str]:
    return {f.encode_name for f in msgspec.structs.fields(struct)}


# The run-level benchNb keys RunSpec writes (camelCase, as on disk); "k", "version", ... are too common a word
# to look for, and the checkpoint's own fields (provider, benchmark) are not benchNb's.
TOP_LEVEL = {"runId", "questionIds", "writtenByBenchNb"}  # the checkpoint's own fields a RunSpec carries
RECORD_KEYS = ({k for k in _keys(RunSpec) | _keys(Invocation) if k != k.lower()} - TOP_LEVEL) | {"invocation"}
# A receipt (receipts/) is a document of its own that quotes a RunSpec's values under the same names; it
# writes no checkpoint.
NOT_A_CHECKPOINT = {"receipts"}


def test_one_class_from_the_command_line_to_the_settings_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = tmp_path / "runs"
    built: list[RunRequest] = []
    real = runner_run.run_spec

    def spy(request: RunRequest, *args: Any, **kwargs: Any) -> Any:
        built.append(request)
        return real(request, *args, **kwargs)

    monkeypatch.setattr(runner_run, "run_spec", spy)
    args = ["run", "-p", "sqlite", "-b", "sample", "--limit", "3", "-k", "4", "--no-progress"]
    for run_id in ("a", "b"):
        out = CliRunner().invoke(cli, [*args, "-r", run_id, "--runs-dir", str(runs)], catch_exceptions=False)
        assert out.exit_code == 0, out.output
    # the command line built a RunRequest of what was typed (an option not typed is None)
    assert built[0] == RunRequest(provider="sqlite", benchmark="sample", limit=3, k=4)

    # the runner recorded it: the checkpoint's benchNb is the RunSpec read back, written again
    spec = read_spec(read_run(runs / "a"))
    raw = json.loads((runs / "a" / "checkpoint.json").read_text())["benchNb"]
    # ... besides `usage`, the run's model calls summed from its questions (not a setting; sqlite reports
    # its memory side: no model calls)
    assert raw.pop("usage")["memory"]["total"]["calls"] == 0
    assert spec.bench_nb() == raw
    assert (spec.k, spec.asked_for.limit, spec.answerer, spec.judge_names) == (
        4,
        3,
        "extractive",
        ("contains", "f1"),
    )

    # the fingerprint, the settings table and the like-for-like check read the same RunSpec
    assert questions_frame(runs / "a")["settings_fingerprint"].unique().to_list() == [spec.fingerprint]
    (row,) = run_settings([runs / "a"])
    assert row.recorded == spec and row.settings_fingerprint == spec.fingerprint
    b = read_spec(read_run(runs / "b"))
    assert check_like_for_like([runs / "a", runs / "b"]) == differences([spec, b]) == []
    other = msgspec.structs.replace(b, k=5)
    assert differences([spec, other]) == ["retrieval limit k differs: a=4, b=5"]

    # resume: the run's RunSpec fills in what -r leaves out, and refuses what it may not change
    out = CliRunner().invoke(cli, ["run", "-r", "a", "--runs-dir", str(runs), "-k", "5"])
    assert isinstance(out.exception, ComparisonError)
    assert "retrieval limit k: 4 in the run, 5 now" in str(out.exception)
    assert built[-1] == RunRequest(k=5)


def _builds_record(tree: ast.AST) -> list[tuple[int, str]]:
    """Where ``tree`` writes a run-level benchNb key: a dict literal's key, ``dict(key=...)``, or
    ``x["key"] = ...``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            keys = [k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict":
            keys = [k.arg for k in node.keywords if k.arg]
        elif isinstance(node, ast.Assign):
            keys = [
                t.slice.value
                for t in node.targets
                if isinstance(t, ast.Subscript)
                and isinstance(t.slice, ast.Constant)
                and isinstance(t.slice.value, str)
            ]
        else:
            continue
        found += [(node.lineno, k) for k in keys if k in RECORD_KEYS]
    return found


def test_no_module_outside_the_run_format_builds_a_benchnb_record() -> None:
    assert {
        "primaryJudge",
        "questionSetHash",
        "invocation",
        "providerSettings",
        "samplePerType",
    } <= RECORD_KEYS
    offenders = {}
    for path in sorted(SRC.rglob("*.py")):
        if path.relative_to(SRC).parts[0] in {"runformat", *NOT_A_CHECKPOINT}:
            continue
        found = _builds_record(ast.parse(path.read_text(encoding="utf-8")))
        if found:
            offenders[str(path.relative_to(SRC))] = found
    assert offenders == {}
    # and the check sees one where there is one
    assert sorted(_builds_record(ast.parse('x = {"primaryJudge": "f1"}\ny["judgeReplicates"] = 2'))) == [
        (1, "primaryJudge"),
        (2, "judgeReplicates"),
    ]


def test_the_other_shapes_of_a_runs_settings_are_gone() -> None:
    text = "\n".join(p.read_text(encoding="utf-8") for p in SRC.rglob("*.py"))
    # (a RunRequest is back since issue 36 as what was asked only: the record is RunSpec alone)
    for name in ("RecordedSettings", "BenchNbRun", "runformat.settings", "_bench_nb_record"):
        assert name not in text, name
    assert not (SRC / "runformat" / "settings.py").exists()
    with pytest.raises(AttributeError, match="no attribute 'RunSettings'"):  # renamed ExecutionOptions in 0.1
        bench_nb.runner.RunSettings  # noqa: B018


def _environment_writes(tree: ast.AST) -> list[int]:
    """Lines of ``tree`` that write ``os.environ``: ``os.environ[...] = ...``, ``del``, or a writing method."""
    lines = []
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign | ast.Delete) else []
        for t in targets:
            if isinstance(t, ast.Subscript) and ast.unparse(t.value) == "os.environ":
                lines.append(node.lineno)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            writes = node.func.attr in ("update", "pop", "setdefault", "clear", "popitem")
            if writes and ast.unparse(node.func.value) == "os.environ":
                lines.append(node.lineno)
    return lines


def test_only_the_documented_switches_write_the_environment() -> None:
    writes = {}
    for path in sorted(SRC.rglob("*.py")):
        found = _environment_writes(ast.parse(path.read_text(encoding="utf-8")))
        if found:
            writes[str(path.relative_to(SRC))] = len(found)
    assert writes == {"providers/switches.py": 2}  # go_offline and mem0_telemetry_off, one write each
    assert _environment_writes(ast.parse('os.environ["X"] = "1"\nos.environ.pop("X")')) == [1, 2]


def test_a_repeat_gets_its_own_response_cache_as_an_option_not_through_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    from bench_nb.runner.repeats import run_client

    monkeypatch.setenv("BENCH_NB_LLM_CACHE", str(tmp_path / "llm.sqlite"))
    before = dict(os.environ)
    first, third = run_client(1), run_client(3)
    assert first.settings.cache_path == tmp_path / "llm.sqlite"  # repeat 1: the usual cache
    assert third.settings.cache_path == tmp_path / "llm.repeat-3.sqlite"
    assert dict(os.environ) == before  # an option of the repeat's own client, never the environment
    assert not list(tmp_path.iterdir())  # a client opens its cache on its first call, not before
    monkeypatch.setenv("BENCH_NB_LLM_CACHE", "off")
    assert run_client(2).settings.cache_path is None  # caching off: off for every repeat


def test_mem0_telemetry_is_switched_off_by_one_helper_before_and_after_mem0_is_imported() -> None:
    import importlib.util
    import subprocess
    import sys

    need(
        importlib.util.find_spec("mem0") is not None,
        "the mem0 extra is not installed (pip install torch==2.13.0 && pip install -e '.[mem0]')",
        env="BENCH_NB_REQUIRE_EXTRAS",
    )
    script = (
        "import os\n"
        "os.environ.pop('MEM0_TELEMETRY', None)\n"
        "from bench_nb.providers.switches import mem0_telemetry_off\n"
        "import mem0.memory.telemetry as t\n"  # imported first: telemetry on
        "on = t.MEM0_TELEMETRY\n"
        "mem0_telemetry_off()\n"
        "print(on, t.MEM0_TELEMETRY, os.environ['MEM0_TELEMETRY'])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.split() == ["True", "False", "False"]
    sources = [(SRC / p).read_text() for p in ("providers/mem0_local.py", "providers/cloud/mem0_platform.py")]
    assert all("mem0_telemetry_off()" in s and "MEM0_TELEMETRY" not in s for s in sources)
