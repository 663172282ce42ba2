"""The runner's evaluate workers appending verdicts to judgments.jsonl: one lock around an fsync'd append per
question (before) against group commit (``runformat.jsonl.GroupAppender``: one write and one fsync for the
appends waiting together), both durable before the worker goes on.

    .venv/bin/python bench/verdict_appends.py                       # 32 workers x 200 questions, 5 rounds
    .venv/bin/python bench/verdict_appends.py --workers 8 --judge-ms 20 --dir /path/on/the/disk/to/test

Each worker judges its questions one after the other (a simulated judge call: ``--judge-ms`` of sleep, 0 by
default, the appends' own cost alone) and appends the question's verdicts (two judges, as the runner's default
``contains,f1``) as ``runner.engine`` does. The two ways alternate ``--repeat`` times, each into a new file in
``--dir`` (default: the temp dir); printed: each round's wall time and the process's CPU time (all threads),
their medians and the ratio of the medians (group commit / one lock), and how many fsyncs each made.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench_nb.records import Verdict
from bench_nb.runformat import jsonl
from bench_nb.runformat.jsonl import GroupAppender
from bench_nb.runformat.verdicts import append_verdicts, verdict_lines

FSYNCS = [0]
_fsync = os.fsync


def _counted_fsync(fd: int) -> None:
    FSYNCS[0] += 1
    _fsync(fd)


def _verdicts(qid: str) -> list[tuple[str, Verdict]]:
    return [
        (qid, Verdict(1, "correct", "The response contains the correct answer.", judge="contains")),
        (qid, Verdict(0.6667, "", "token F1 against the ground truth", judge="f1")),
    ]


def one_round(way: str, path: Path, workers: int, questions: int, judge_s: float) -> dict[str, float]:
    lock = threading.Lock()
    appender = GroupAppender(path / "judgments.jsonl")
    start = threading.Barrier(workers + 1)

    def work(w: int) -> None:
        start.wait()
        for i in range(questions):
            if judge_s:
                time.sleep(judge_s)
            pairs = _verdicts(f"w{w}-q{i}")
            if way == "lock":
                with lock:
                    append_verdicts(path, pairs)
            else:
                appender.append(verdict_lines(pairs))

    threads = [threading.Thread(target=work, args=(w,)) for w in range(workers)]
    for t in threads:
        t.start()
    FSYNCS[0] = 0
    start.wait()
    t0, c0 = time.perf_counter(), time.process_time()
    for t in threads:
        t.join()
    out = {"wall": time.perf_counter() - t0, "cpu": time.process_time() - c0, "fsyncs": FSYNCS[0]}
    lines = (path / "judgments.jsonl").read_bytes().count(b"\n")
    assert lines == 2 * workers * questions, (way, lines)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workers", type=int, default=32, help="evaluate workers (threads; default 32)")
    ap.add_argument("--questions", type=int, default=200, help="questions per worker (default 200)")
    ap.add_argument("--judge-ms", type=float, default=0.0, help="simulated judge call per question")
    ap.add_argument("--repeat", type=int, default=5, help="rounds of each way, alternated")
    ap.add_argument("--dir", type=Path, help="where the files go (default: the temp dir)")
    args = ap.parse_args()
    os.fsync = _counted_fsync  # type: ignore[assignment]  # counted only: the fsync itself is real
    assert jsonl.os.fsync is _counted_fsync
    rows: dict[str, list[dict[str, float]]] = {"lock": [], "group": []}
    print(
        f"{args.workers} workers x {args.questions} questions, 2 verdicts each, judge {args.judge_ms} ms;"
        f" load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs",
        flush=True,
    )
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        for r in range(args.repeat):
            for way in rows:
                path = Path(tmp) / f"{way}-{r}"
                path.mkdir()
                rows[way].append(one_round(way, path, args.workers, args.questions, args.judge_ms / 1000))
                x = rows[way][-1]
                print(
                    f"  round {r + 1} {way:>5}: {x['wall']:.3f} s wall, {x['cpu']:.3f} s CPU,"
                    f" {x['fsyncs']:.0f} fsyncs",
                    flush=True,
                )
    med = {
        way: {k: statistics.median(x[k] for x in xs) for k in ("wall", "cpu", "fsyncs")}
        for way, xs in rows.items()
    }
    print(f"load average {os.getloadavg()[0]:.2f} after")
    for way, label in (("lock", "one lock, fsync per question"), ("group", "group commit")):
        m = med[way]
        print(f"{label:<30} wall {m['wall']:.3f} s  CPU {m['cpu']:.3f} s  fsyncs {m['fsyncs']:.0f}")
    print(
        f"ratio group / lock (medians): wall {med['group']['wall'] / med['lock']['wall']:.3f},"
        f" CPU {med['group']['cpu'] / med['lock']['cpu']:.3f}"
    )


if __name__ == "__main__":
    sys.exit(main())
