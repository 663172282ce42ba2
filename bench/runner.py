"""Runner benchmarks: sliding-window throughput against fixed batches, and the sqlite provider's search latency.

    .venv/bin/python bench/runner.py                      # everything (LoCoMo from ../shared/data)
    .venv/bin/python bench/runner.py --skip-sqlite        # throughput only
    .venv/bin/python bench/runner.py --locomo PATH        # another copy of locomo10.json

1. Throughput at concurrency 32 with a simulated provider call of fixed latency (50 ms) and of variable
   latency (lognormal, mean 50 ms, sigma 0.5), as a ratio to the ideal (concurrency / mean latency):
   - ``sliding window``: bench_nb's pool (``bench_nb.runner.pool.WindowPool``), the next call starting as
     soon as one ends;
   - ``fixed batches``: MemoryBench's strategy, batches of 32 that each wait for their slowest call;
   - ``runner, search phase``: a whole ``run_benchmark`` on a synthetic benchmark whose provider sleeps in
     ``search`` (the other phases run alongside), measured from the first search start to the last search end.
   Both pool strategies get the same latencies (same seed), in the same process.
2. The sqlite provider's search latency (p50/p95, linear interpolation) with k=10 over every LoCoMo question,
   each against its full conversation (all ten conversations ingested).
"""

from __future__ import annotations

import argparse
import math
import os
import queue
import random
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from pathlib import Path

from bench_nb.records import Answer, Benchmark, Haystack, IngestResult, Message, Question, SearchHit, Session
from bench_nb.runner.pool import Done, WindowPool

CONCURRENCY = 32
MEAN_S = 0.050
SIGMA = 0.5


def latencies(kind: str, n: int, seed: int) -> list[float]:
    """n call latencies in seconds: fixed 50 ms, or lognormal with mean 50 ms."""
    if kind == "fixed":
        return [MEAN_S] * n
    rng = random.Random(seed)
    mu = math.log(MEAN_S) - SIGMA**2 / 2  # E[lognormal] = exp(mu + sigma^2/2) = 50 ms
    return [rng.lognormvariate(mu, SIGMA) for _ in range(n)]


def sliding_window(lat: Sequence[float]) -> float:
    """Seconds to run every call with bench_nb's sliding-window pool."""
    results: queue.SimpleQueue[Done] = queue.SimpleQueue()
    pool = WindowPool("bench", CONCURRENCY, results)
    start = time.perf_counter()
    for i, s in enumerate(lat):
        pool.submit(i, lambda s=s: time.sleep(s))
    for _ in lat:
        results.get()
    elapsed = time.perf_counter() - start
    pool.shutdown()
    return elapsed


def fixed_batches(lat: Sequence[float]) -> float:
    """Seconds to run every call in fixed batches of CONCURRENCY (MemoryBench's Promise.all batches)."""
    with ThreadPoolExecutor(max_workers=CONCURRENCY) as ex:
        start = time.perf_counter()
        for i in range(0, len(lat), CONCURRENCY):
            wait([ex.submit(time.sleep, s) for s in lat[i : i + CONCURRENCY]])
        return time.perf_counter() - start


class SimulatedProvider:
    """Stores nothing; ``search`` sleeps the next latency and records when it ran."""

    name = "simulated"

    def __init__(self, lat: Sequence[float]) -> None:
        self._lat = list(lat)
        self._lock = threading.Lock()
        self.spans: list[tuple[float, float]] = []

    def ingest(self, container: str, sessions: Sequence[Session]) -> IngestResult:
        return IngestResult()

    def await_indexing(self, container: str, ingested: IngestResult, timeout_s: float) -> None:
        return None

    def search(self, container: str, query: str, k: int) -> list[SearchHit]:
        with self._lock:
            s = self._lat.pop()
        start = time.perf_counter()
        time.sleep(s)
        with self._lock:
            self.spans.append((start, time.perf_counter()))
        return [SearchHit(text="the answer is 42", hit_id="m1")]

    def clear(self, container: str) -> None:
        return None


class EchoAnswerer:
    """Answers with the first hit, instantly (the benchmark measures the runner, not an answerer)."""

    name = "echo"

    def answer(self, question: Question, hits: Sequence[SearchHit]) -> Answer:
        return Answer(hypothesis=hits[0].text if hits else "I don't know.")


def runner_search_phase(lat: Sequence[float], tmp: Path, label: str) -> float:
    """Seconds the runner's search phase took for len(lat) questions (first start to last end)."""
    from bench_nb.runner import run_benchmark

    n = len(lat)
    haystacks = {
        f"h{i}": Haystack(
            f"h{i}", (Session("s1", None, (Message("a", "the answer is 42", message_id="m1"),)),)
        )
        for i in range(n // 20)
    }
    questions = tuple(
        Question(f"q{i}", f"question {i}?", "42", "single-hop", "single-hop", f"h{i % len(haystacks)}")
        for i in range(n)
    )
    provider = SimulatedProvider(lat)
    run_benchmark(
        provider,
        Benchmark("simulated", questions, haystacks),
        answerer=EchoAnswerer(),
        judges="contains",
        concurrency=CONCURRENCY,
        runs_dir=tmp,
        run_id=label,
        progress=False,
    )
    return max(e for _, e in provider.spans) - min(s for s, _ in provider.spans)


def throughput(n: int, seed: int, repeats: int) -> list[tuple[str, str, float]]:
    """(latency kind, strategy, median over ``repeats`` of throughput / ideal)."""
    rows = []
    ideal = CONCURRENCY / MEAN_S  # calls per second
    with tempfile.TemporaryDirectory() as tmp:
        for kind in ("fixed", "lognormal"):
            lat = latencies(kind, n, seed)
            for name in ("sliding window", "fixed batches", "runner, search phase"):
                ratios = []
                for r in range(repeats):
                    if name == "sliding window":
                        seconds = sliding_window(lat)
                    elif name == "fixed batches":
                        seconds = fixed_batches(lat)
                    else:
                        seconds = runner_search_phase(lat, Path(tmp), f"{kind}-{r}")
                    ratios.append((n / seconds) / ideal)
                rows.append((kind, name, statistics.median(ratios)))
    return rows


def sqlite_latency(locomo: Path) -> dict[str, float]:
    from bench_nb.benchmarks import load_benchmark
    from bench_nb.providers.sqlite import SqliteProvider

    bench = load_benchmark("locomo", locomo)
    timings: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        provider = SqliteProvider(Path(tmp))
        for hid, hay in bench.haystacks.items():
            provider.ingest(hid, hay.sessions)
        for q in bench.questions:
            start = time.perf_counter()
            provider.search(q.haystack_id, q.question, 10)
            timings.append((time.perf_counter() - start) * 1000)
    qs = statistics.quantiles(timings, n=100, method="inclusive")
    messages = sum(len(s.messages) for h in bench.haystacks.values() for s in h.sessions)
    return {
        "searches": len(timings),
        "conversations": len(bench.haystacks),
        "messages": messages,
        "p50_ms": qs[49],
        "p95_ms": qs[94],
        "mean_ms": statistics.fmean(timings),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--calls", type=int, default=1280, help="simulated calls per measurement (default 1280)"
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--repeats", type=int, default=3, help="measurements per figure; the median is shown")
    parser.add_argument(
        "--locomo",
        type=Path,
        default=Path(__file__).resolve().parents[2] / "shared/data/locomo/locomo10.json",
    )
    parser.add_argument("--skip-sqlite", action="store_true")
    args = parser.parse_args(argv)

    print(
        f"Throughput at concurrency {CONCURRENCY}, {args.calls} calls, median of {args.repeats}, as a ratio to the ideal"
    )
    print(
        f"(ideal = {CONCURRENCY} / {MEAN_S * 1000:.0f} ms = {CONCURRENCY / MEAN_S:.0f} calls/s; target >= 0.9)\n"
    )
    print("| latency | strategy | throughput / ideal |")
    print("|---|---|---|")
    for kind, name, ratio in throughput(args.calls, args.seed, args.repeats):
        label = "fixed 50 ms" if kind == "fixed" else f"lognormal, mean 50 ms, sigma {SIGMA}"
        print(f"| {label} | {name} | {ratio:.3f} |")
    if not args.skip_sqlite:
        if not args.locomo.is_file():
            print(
                f"\nsqlite search latency: skipped, no LoCoMo at {args.locomo} (pass --locomo)",
                file=sys.stderr,
            )
            return 0
        r = sqlite_latency(args.locomo)
        print(
            f"\nsqlite search, k=10, {r['searches']} LoCoMo questions against their full conversations "
            f"({r['conversations']} conversations, {r['messages']} messages):"
        )
        print(f"p50 {r['p50_ms']:.2f} ms, p95 {r['p95_ms']:.2f} ms, mean {r['mean_ms']:.2f} ms")
    print(
        f"\n(load average while measuring: {', '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
