"""bench-nb sweep: a grid of ordinary runs, each the same as the run made alone with `bench-nb run`, resumed
after a SIGKILL of the sweep without repeating finished runs, on a process pool or on a local Ray cluster.

"The same report.json" means equal apart from what a clock measures: the top-level ``timestamp`` and the
latencies (``latency`` blocks, ``*DurationMs``, MemScore's latency part), which differ between any two runs.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bench_nb.cli import cli
from bench_nb.runformat.load import load_runs, read_checkpoint
from bench_nb.runner.sweep import SweepError, load_sweep, parse_sweep, run_sweep
from llm_server import Fault, llm_server
from needs import need

__all__ = ["llm_server"]

SWEEP = """
id = "{id}"
providers = ["sqlite", "no-memory"]
benchmarks = ["sample"]
k = [2, 5]
judges = ["contains,f1"]
repeats = 2
workers = {workers}

[settings]
limit = {limit}
"""


_CLOCK = {"latency", "latencyMs", "searchDurationMs", "answerDurationMs", "totalDurationMs"}
# A container's name is the run id and 16 random hex digits (issue 40: nothing of the benchmark reaches the
# provider in a name), so it differs between any two runs, like the clock; the sqlite provider echoes it in hits.
_RANDOM = {"container"}


def _normal(report: Any, top: bool = True) -> Any:
    if isinstance(report, dict):
        out = {
            k: _normal(v, False)
            for k, v in report.items()
            if k not in _CLOCK | _RANDOM and not (top and k == "timestamp")
        }
        if top and isinstance(out.get("memscore"), str):
            quality, _latency, tokens = out["memscore"].split(" / ")
            out["memscore"] = f"{quality} / {tokens}"
        return out
    if isinstance(report, list):
        return [_normal(v, False) for v in report]
    return report


def _report(run_dir: Path) -> Any:
    return _normal(json.loads((run_dir / "report.json").read_text()))


def _write(tmp: Path, sweep_id: str, *, workers: int = 2, limit: int = 4) -> Path:
    path = tmp / f"{sweep_id}.toml"
    path.write_text(SWEEP.format(id=sweep_id, workers=workers, limit=limit))
    return path


def _env() -> dict[str, str]:
    src = str(Path(__file__).resolve().parents[2] / "src")
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")]),
        "BENCH_NB_QUIET": "1",
    }


@pytest.fixture(scope="module")
def one_by_one(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The reports of sweep ``eq``'s 8 runs, each made alone with ``bench-nb run`` (same run id)."""
    tmp = tmp_path_factory.mktemp("alone")
    runs = tmp / "runs"
    out = {}
    for p in load_sweep(_write(tmp, "eq")).points:
        args = [
            "run",
            "-p",
            p.provider,
            "-b",
            p.benchmark,
            "-k",
            str(p.k),
            "-j",
            str(p.judges),
            "--limit",
            "4",
        ]
        res = CliRunner().invoke(cli, [*args, "-r", p.run_id, "--runs-dir", str(runs), "--no-progress"])
        assert res.exit_code == 0, res.output
        out[p.run_id] = _report(runs / p.run_id)
    return out


def test_grid_ids_are_deterministic_and_distinct(tmp_path: Path) -> None:
    a = load_sweep(_write(tmp_path, "g"))
    b = load_sweep(_write(tmp_path, "g"))
    assert [p.run_id for p in a.points] == [p.run_id for p in b.points]
    assert len({p.run_id for p in a.points}) == 8
    assert "g-no-memory-sample-k5-extractive-contains_f1-r2" in {p.run_id for p in a.points}
    assert {(p.provider, p.k, p.repeat) for p in a.points} == {
        (pr, k, r) for pr in ("sqlite", "no-memory") for k in (2, 5) for r in (1, 2)
    }


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({"benchmarks": ["sample"]}, "providers"),
        ({"providers": ["sqlite"], "benchmarks": ["sample"], "k": [0]}, "k"),
        ({"providers": ["sqlite"], "benchmarks": ["sample"], "kk": 3}, "kk"),
        ({"providers": ["sqlite"], "benchmarks": ["sample"], "settings": {"limt": 3}}, "settings.limt"),
        ({"providers": ["sqlite"], "benchmarks": ["sample"], "datasets": {"locomo": "x.json"}}, "datasets"),
        (
            {"providers": ["sqlite"], "benchmarks": ["sample"], "provider_settings": {"zep.scope": "x"}},
            "provider_settings",
        ),
    ],
)
def test_bad_sweep_file_names_the_field(raw: dict[str, Any], field: str) -> None:
    with pytest.raises(SweepError) as err:
        parse_sweep(raw, "grid.toml")
    assert err.value.problem.field == field
    assert "grid.toml" in str(err.value)


@pytest.mark.slow
def test_sweep_on_a_pool_equals_runs_one_by_one(tmp_path: Path, one_by_one: dict[str, Any]) -> None:
    path = _write(tmp_path, "eq")
    runs = tmp_path / "data" / "runs"
    proc = subprocess.run(
        [sys.executable, "-m", "bench_nb", "sweep", str(path), "--runs-dir", str(runs)],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert {d.name for d in runs.iterdir()} == set(one_by_one)
    for run_id, expected in one_by_one.items():
        assert _report(runs / run_id) == expected, run_id
    # the whole sweep's manifest loads all 8 runs; each like-for-like group's holds 2 providers x 2 repeats
    assert sorted(r.run_id for r in load_runs(tmp_path / "data" / "compare" / "eq")) == sorted(one_by_one)
    group = load_runs(tmp_path / "data" / "compare" / "eq-sample-k2-extractive-contains_f1")
    assert sorted(r.run_id for r in group) == sorted(i for i in one_by_one if "-k2-" in i)


def _state(run_dir: Path) -> tuple[int, int, bytes] | None:
    """A finished run's files as they stand: the checkpoint's and report's mtimes and the report's bytes."""
    ck = run_dir / "checkpoint.json"
    if not (run_dir / "report.json").is_file() or not ck.is_file():
        return None
    if read_checkpoint(ck)[0].status != "completed":
        return None
    return (
        ck.stat().st_mtime_ns,
        (run_dir / "report.json").stat().st_mtime_ns,
        (run_dir / "report.json").read_bytes(),
    )


@pytest.mark.slow
def test_killed_sweep_resumes_without_repeating_finished_runs(tmp_path: Path) -> None:
    path = _write(tmp_path, "kill", workers=1, limit=12)
    runs = tmp_path / "data" / "runs"
    ids = [p.run_id for p in load_sweep(path).points]
    cmd = [sys.executable, "-m", "bench_nb", "sweep", str(path), "--runs-dir", str(runs)]
    proc = subprocess.Popen(cmd, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while not any(_state(runs / i) for i in ids):
        assert proc.poll() is None and time.monotonic() < deadline, "the sweep ended before a run finished"
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)  # the sweep process only: its worker must notice and stop
    proc.wait()
    before = {i: _state(runs / i) for i in ids}
    finished = {i: s for i, s in before.items() if s is not None}
    assert 0 < len(finished) < len(ids), "kill it mid-way: some runs finished, some not"

    again = subprocess.run(cmd, env=_env(), capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stdout + again.stderr
    for run_id, state in finished.items():
        assert _state(runs / run_id) == state, f"{run_id} was finished and was run again"
    for run_id in ids:
        ck = read_checkpoint(runs / run_id / "checkpoint.json", strict=True)[0]
        assert ck.status == "completed" and len(ck.questions) == 12, run_id
        assert all(q.phases.evaluate.status == "completed" for q in ck.questions.values()), run_id


@pytest.fixture(scope="module")
def ray_cluster() -> Any:
    try:
        import ray
    except ImportError:
        ray = None
    need(ray is not None, "ray is not installed (pip install 'bench_nb[ray]')", env="BENCH_NB_REQUIRE_EXTRAS")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


@pytest.mark.slow
def test_sweep_on_ray_equals_runs_one_by_one(
    ray_cluster: Any, tmp_path: Path, one_by_one: dict[str, Any]
) -> None:
    runs = tmp_path / "data" / "runs"
    result = run_sweep(_write(tmp_path, "eq"), ray="auto", runs_dir=runs)
    assert [r.status for r in result.runs] == ["completed"] * 8
    for run_id, expected in one_by_one.items():
        assert _report(runs / run_id) == expected, run_id
    assert sorted(r.run_id for r in load_runs(result.manifests[0])) == sorted(one_by_one)
    # run again: every run is finished, so nothing is rewritten
    stamps = {i: (runs / i / "report.json").stat().st_mtime_ns for i in one_by_one}
    run_sweep(_write(tmp_path, "eq"), ray="auto", runs_dir=runs)
    assert {i: (runs / i / "report.json").stat().st_mtime_ns for i in one_by_one} == stamps


class DiesProvider:
    """A provider plugin whose process dies as it is made (a worker killed, out of memory)."""

    def __init__(self, run_dir: Path, **settings: Any) -> None:
        os._exit(3)


@pytest.mark.slow
def test_a_dead_worker_is_its_runs_error_not_the_sweeps_end(tmp_path: Path) -> None:
    raw = {"id": "dies", "providers": ["test_sweep:DiesProvider"], "benchmarks": ["sample"], "workers": 1}
    runs = tmp_path / "data" / "runs"
    result = run_sweep(parse_sweep(raw, tmp_path / "dies.toml"), runs_dir=runs)
    [run] = result.runs
    assert run.status == "error" and "worker died" in str(run.error), run
    assert result.manifests == []  # no run directory, so nothing to compare


@pytest.mark.slow
def test_a_retry_after_in_one_ray_task_holds_back_the_others(ray_cluster: Any) -> None:
    """Two tasks of a sweep's Ray session share one API key's budget through the sweep's actor: task A meets
    a 429 with Retry-After 2 s; task B, ready and calling as soon as the hold is posted, makes its first call
    only after the hold, having waited for it (its hold record)."""
    import httpx

    from bench_nb.retry_after import HoldTable
    from bench_nb.runner.sweep import RayHoldBoard

    ray = ray_cluster
    key = "zep:0123456789ab"

    def calls_with_board(budget: Any, first_fails: bool) -> tuple[list[float], list[int]]:
        import logging

        from bench_nb.providers.cloud.common import Calls
        from bench_nb.retry_after import set_hold_board

        held: list[int] = []

        class Keep(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                held.append(record.hold_attempt)  # type: ignore[attr-defined]

        logging.getLogger("bench_nb.retry.hold").addHandler(Keep())
        logging.getLogger("bench_nb.retry.hold").setLevel(logging.INFO)
        set_hold_board(RayHoldBoard(budget))
        calls = Calls("zep", max_concurrency=1, max_retries=1, initial_s=0.01, max_s=0.01, budget=key)
        tries: list[float] = []

        def add() -> str:
            tries.append(time.time())
            if first_fails and len(tries) == 1:
                request = httpx.Request("POST", "http://127.0.0.1/v1/add")
                response = httpx.Response(429, headers={"Retry-After": "2"}, request=request)
                raise httpx.HTTPStatusError("429", request=request, response=response)
            return "ok"

        while not first_fails and not ray.get(budget.holds.remote()):  # B: ready before A's 429
            time.sleep(0.01)
        calls("add", add)
        return tries, held

    task = ray.remote(num_cpus=1)(calls_with_board)
    budget = ray.remote(num_cpus=0)(HoldTable).remote()
    b = task.remote(budget, False)
    a = task.remote(budget, True)
    (tries_a, _), (tries_b, held_b) = ray.get([a, b], timeout=120)
    until = ray.get(budget.not_before.remote(key))
    assert until >= tries_a[0] + 1.99
    assert tries_b[0] >= until and held_b == [1]  # B (another process) waited out A's Retry-After


@pytest.mark.slow
def test_an_llm_retry_after_in_one_ray_task_holds_back_the_others(ray_cluster: Any, llm_server: Any) -> None:
    """Answer calls of two Ray tasks sharing one API key (the LLM client against tests/llm_server.py on
    127.0.0.1): task A meets a 429 with Retry-After 2 s; task B, ready and asking as soon as the hold is posted,
    reaches the server only after the hold, and logs its wait. Neither the actor's state nor the logs hold the
    key."""
    from bench_nb.retry_after import HoldTable
    from bench_nb.runner.sweep import RayHoldBoard

    ray = ray_cluster
    secret = "sk-test-ray-shared-key-not-real"

    def answer_with_board(budget: Any, url: str, who: str, after_a_hold: bool) -> tuple[float, list[str]]:
        import logging

        import openai

        from bench_nb.models.client import LLMClient
        from bench_nb.models.settings import ClientSettings
        from bench_nb.retry_after import set_hold_board

        os.environ["OPENAI_API_KEY"] = secret
        seen: list[str] = []

        class Keep(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                seen.append(f"{record.name}: {record.getMessage()} {sorted(vars(record).items())}")

        logging.getLogger("bench_nb.retry").addHandler(Keep())
        logging.getLogger("bench_nb.retry").setLevel(logging.INFO)
        set_hold_board(RayHoldBoard(budget))
        settings = ClientSettings(max_retries=2, backoff_initial_s=0.01, cache_path=None, openai_base_url=url)
        client = LLMClient(settings)
        assert openai.OpenAI(
            api_key=secret, base_url=url
        ).chat.completions  # the SDK's lazy imports, done now
        while after_a_hold and not ray.get(budget.holds.remote()):  # ready before A's 429
            time.sleep(0.01)
        started = time.time()
        client.complete("gpt-4o-mini", [{"role": "user", "content": f"{who} asks"}])
        return started, seen

    llm_server.script(Fault("429", retry_after=2))
    task = ray.remote(num_cpus=1)(answer_with_board)
    budget = ray.remote(num_cpus=0)(HoldTable).remote()
    b = task.remote(budget, llm_server.openai_base_url, "B", True)
    a = task.remote(budget, llm_server.openai_base_url, "A", False)
    (_, logs_a), (started_b, logs_b) = ray.get([a, b], timeout=120)
    [(key, until)] = ray.get(budget.holds.remote()).items()
    assert started_b < until  # B set out to ask while A's hold was live
    by = {who: [c for c in llm_server.calls if f"{who} asks" in str(c.body)] for who in "AB"}
    assert [c.outcome for c in by["A"]] == ["429", "ok"] and [c.outcome for c in by["B"]] == ["ok"]
    assert until >= by["A"][0].at + 1.99  # the hold A's 429 posted
    assert by["B"][0].at >= until and by["A"][1].at >= until  # B (another process) waited out A's hold
    assert any("retry.hold: gpt-4o-mini: attempt 1 waits" in line for line in logs_b), logs_b
    assert any("HTTP 429 on attempt 1" in line for line in logs_a), logs_a
    state = str(ray.get(budget.holds.remote()))
    assert key.startswith(f"openai@127.0.0.1:{llm_server.port}/v1:")
    for text in (state, *logs_a, *logs_b):
        assert secret not in text and "ray-shared" not in text


def ask_in_a_pool_worker(
    board: Any, url: str, secret: str, who: str, after_a_hold: bool
) -> tuple[float, list[str]]:
    """One answer call from a sweep's pool worker (its board set by the pool's initializer), after the
    first hold is posted when ``after_a_hold``; returns when it set out to ask and the worker's
    ``bench_nb.retry`` log lines."""
    import logging

    import openai

    from bench_nb.models.client import LLMClient
    from bench_nb.models.settings import ClientSettings

    os.environ["OPENAI_API_KEY"] = secret
    seen: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(f"{record.name}: {record.getMessage()} {sorted(vars(record).items())}")

    logging.getLogger("bench_nb.retry").addHandler(Keep())
    logging.getLogger("bench_nb.retry").setLevel(logging.INFO)
    settings = ClientSettings(max_retries=2, backoff_initial_s=0.01, cache_path=None, openai_base_url=url)
    client = LLMClient(settings)
    assert openai.OpenAI(api_key=secret, base_url=url).chat.completions  # the SDK's lazy imports, done now
    ready = time.monotonic()
    while after_a_hold and not board.holds():  # ready before A's 429
        if time.monotonic() - ready > 60:
            raise TimeoutError(f"{who}: no hold was posted")
        time.sleep(0.01)
    started = time.time()
    client.complete("gpt-4o-mini", [{"role": "user", "content": f"{who} asks"}])
    return started, seen


@pytest.mark.slow
def test_a_retry_after_in_one_pool_worker_holds_back_the_others_with_its_key(llm_server: Any) -> None:
    """The local pool's workers share holds (the sweep's default path): worker A meets a 429 with Retry-After
    2 s; worker B, with the same API key and asking as soon as the hold is posted, reaches the server only after
    the hold and logs its wait; worker C, with another key and asking at the same moment, is not held. The
    board's state and the logs hold no key."""
    from bench_nb.runner.sweep import local_pool

    same, other = "sk-test-pool-shared-key-not-real", "sk-test-pool-other-key-not-real"
    llm_server.script(Fault("429", retry_after=2))
    url = llm_server.openai_base_url
    with local_pool(3) as (pool, board):
        b = pool.submit(ask_in_a_pool_worker, board, url, same, "B", True)
        c = pool.submit(ask_in_a_pool_worker, board, url, other, "C", True)
        a = pool.submit(ask_in_a_pool_worker, board, url, same, "A", False)
        (_, logs_a), (started_b, logs_b), (started_c, logs_c) = (f.result(timeout=120) for f in (a, b, c))
        holds = board.holds()
    [(key, until)] = holds.items()  # A's key alone: C's was never held
    assert started_b < until and started_c < until  # B and C set out to ask while A's hold was live
    by = {who: [c for c in llm_server.calls if f"{who} asks" in str(c.body)] for who in "ABC"}
    assert [c.outcome for c in by["A"]] == ["429", "ok"], by
    assert [c.outcome for c in by["B"]] == ["ok"] and [c.outcome for c in by["C"]] == ["ok"], by
    assert until >= by["A"][0].at + 1.99  # the hold A's 429 posted
    assert by["B"][0].at >= until and by["A"][1].at >= until  # B (another process) waited out A's hold
    assert any("retry.hold: gpt-4o-mini: attempt 1 waits" in line for line in logs_b), logs_b
    assert not any("bench_nb.retry.hold" in line for line in logs_c), logs_c  # C's key had no hold
    assert any("HTTP 429 on attempt 1" in line for line in logs_a), logs_a
    assert key.startswith(f"openai@127.0.0.1:{llm_server.port}/v1:")
    for text in (str(holds), *logs_a, *logs_b, *logs_c):
        for secret in (same, other):
            assert secret not in text and "pool-shared" not in text and "pool-other" not in text


class SearchFailsProvider:
    """The sqlite provider whose every search fails (not retryable): each of its runs ends with nothing
    evaluated."""

    def __init__(self, run_dir: Path, **settings: Any) -> None:
        from bench_nb.providers import get_provider

        self.inner = get_provider("sqlite", run_dir=run_dir, **settings)
        self.name = "search-fails"

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def search(self, container: str, query: str, k: int) -> Any:
        from bench_nb.errors import ProviderError

        raise ProviderError("search refused (a test provider)")


@pytest.mark.slow
def test_a_sweep_whose_every_run_evaluated_nothing_exits_1(tmp_path: Path) -> None:
    """Issue 38: a sweep whose runs all finished with every question failed exited 0."""
    path = tmp_path / "fails.toml"
    path.write_text(
        'id = "fails"\nproviders = ["test_sweep:SearchFailsProvider"]\nbenchmarks = ["sample"]\nworkers = 1\n'
        "[settings]\nlimit = 2\n"
    )
    runs = tmp_path / "runs"
    result = CliRunner().invoke(cli, ["sweep", str(path), "--runs-dir", str(runs)], catch_exceptions=False)
    assert result.exit_code == 1, result.output
    [run_id] = [d.name for d in runs.iterdir()]
    assert f"{run_id}: completed, 0 evaluated, 2 failed" in result.stdout
    assert f"error: {run_id}: no question was evaluated (2 of 2 failed): nothing to report" in result.stderr
