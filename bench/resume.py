"""Resuming a finished run: ``run_benchmark(run_id=...)`` against the same resume on the code before a change.

    .venv/bin/python bench/resume.py                        # 20,000 questions (kept for reuse in --dir)
    .venv/bin/python bench/resume.py --questions 100000 --repeat 3
    .venv/bin/python bench/resume.py --baseline COMMIT      # the code to compare with (default below)

1. Generates (once; reused while DIR holds a finished run of that size) a finished bench_nb run of N questions
   with the real runner: a synthetic benchmark (one single-session haystack per 20 questions), a provider that
   answers at once with 5 hits of ~300 characters, an answerer that echoes the first hit, the ``contains``
   judge.
2. Measures, each in a fresh child process and in turn (``--repeat`` times): the no-op resume of that run
   (``run_benchmark(provider, benchmark, run_id=..., ...)``: nothing is left to do, so the time is the reading
   and checking of the run) importing bench_nb from this checkout, then from ``git archive <--baseline>``
   (the code before the change measured): an A/B in the same run, so the machine's load falls on both alike.
3. Prints each side's best wall and CPU time, and the median of the paired ratios (this / baseline).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from load import baseline_sources

RUN_ID = "bench-resume"
# The code before the settings read left the questions undecoded (resume read the checkpoint twice in full).
BASELINE = "32cb7b3"
HIT = "the answer is 42; " + "Caroline went to the support group yesterday and said it was powerful. " * 4


def make_parts(n: int) -> tuple[Any, Any, Any]:
    """The benchmark, provider and answerer of the generated run (the resume passes them again)."""
    from bench_nb.records import (
        Answer,
        Benchmark,
        Haystack,
        IngestResult,
        Message,
        Question,
        SearchHit,
        Session,
    )

    class InstantProvider:
        name = "instant"

        def ingest(self, container: str, sessions: Any) -> IngestResult:
            return IngestResult()

        def await_indexing(self, container: str, ingested: IngestResult, timeout_s: float) -> None:
            return None

        def search(self, container: str, query: str, k: int) -> list[SearchHit]:
            return [SearchHit(text=HIT, hit_id=f"m{i}") for i in range(5)]

        def clear(self, container: str) -> None:
            return None

    class EchoAnswerer:
        name = "echo"

        def answer(self, question: Question, hits: Any) -> Answer:
            return Answer(hypothesis=hits[0].text[:20] if hits else "I don't know.")

    haystacks = {
        f"h{i}": Haystack(f"h{i}", (Session("s1", None, (Message("a", HIT, message_id="m0"),)),))
        for i in range(max(1, n // 20))
    }
    questions = tuple(
        Question(f"q{i}", f"question {i}?", "42", "single-hop", "single-hop", f"h{i % len(haystacks)}")
        for i in range(n)
    )
    return Benchmark("synthetic-resume", questions, haystacks), InstantProvider(), EchoAnswerer()


def run(n: int, runs_dir: Path) -> Any:
    from bench_nb.runner import run_benchmark

    bench, provider, answerer = make_parts(n)
    return run_benchmark(
        provider,
        bench,
        answerer=answerer,
        judges="contains",
        concurrency=8,
        checkpoint_every_s=3600,
        runs_dir=runs_dir,
        run_id=RUN_ID,
        progress=False,
    )


def measure(n: int, runs_dir: Path) -> dict[str, Any]:
    from bench_nb.runner import run_benchmark

    bench, provider, answerer = make_parts(n)
    wall, cpu = time.perf_counter(), time.process_time()
    result = run_benchmark(
        provider,
        bench,
        answerer=answerer,
        judges="contains",
        runs_dir=runs_dir,
        run_id=RUN_ID,
        progress=False,
    )
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    assert (result.status, result.evaluated) == ("completed", n), result
    return {"wall": wall, "cpu": cpu}


def child(mode: str, n: int, root: Path, sources: Path) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=str(sources))
    out = subprocess.run(
        [sys.executable, __file__, f"--{mode}", "--questions", str(n), "--dir", str(root)],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=int, default=20_000)
    ap.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "bench_nb-resume")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--baseline", default=BASELINE)
    ap.add_argument("--generate", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    runs_dir = args.dir / str(args.questions)
    if args.generate:
        start = time.perf_counter()
        result = run(args.questions, runs_dir)
        print(json.dumps({"status": result.status, "seconds": time.perf_counter() - start}))
        return 0
    if args.measure:
        print(json.dumps(measure(args.questions, runs_dir)))
        return 0
    here = Path(__file__).resolve().parents[1] / "src"
    checkpoint = runs_dir / RUN_ID / "checkpoint.json"
    if not (runs_dir / RUN_ID / "report.json").is_file():
        print(f"generating a finished run of {args.questions:,} questions in {runs_dir} ...", flush=True)
        made = child("generate", args.questions, args.dir, here)
        print(f"  {made['status']} in {made['seconds']:.1f} s", flush=True)
    print(f"{args.questions:,} questions, checkpoint.json {checkpoint.stat().st_size / 1e6:.0f} MB")
    base = baseline_sources(args.baseline)
    rows: dict[str, list[dict[str, Any]]] = {"this checkout": [], f"baseline {args.baseline}": []}
    for _ in range(args.repeat):
        rows["this checkout"].append(child("measure", args.questions, args.dir, here))
        rows[f"baseline {args.baseline}"].append(child("measure", args.questions, args.dir, base))
    for name, got in rows.items():
        best = min(got, key=lambda r: r["wall"])
        print(f"{name:<24} wall {best['wall']:6.2f} s   cpu {min(r['cpu'] for r in got):6.2f} s")
    mine, theirs = rows.values()
    for what in ("wall", "cpu"):
        ratio = statistics.median(a[what] / b[what] for a, b in zip(mine, theirs, strict=True))
        print(f"ratio this / baseline ({what}, median of {args.repeat} pairs): {ratio:.2f}")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
