"""The columnar run store against JSON run directories: per-run MemScore and per-type accuracy over every run,
and the compare report over 3 runs.

    .venv/bin/python bench/store.py                                   # 40 runs x 250 questions (~2 minutes)
    .venv/bin/python bench/store.py --runs 1000 --questions 2000      # the issue's size (~5 GB, ~30 minutes)
    .venv/bin/python bench/store.py --dir DIR --clean                 # generate in DIR, delete it afterwards

1. Generates (once; reused while DIR holds runs of that size) N MemoryBench runs of M LoCoMo-like questions
   each, fast: bench/load.py's question generator makes the M question entries once, each with one short
   search result (80 characters; a full run's 5-10 long results would only grow the checkpoints and the
   hits table), and every run updates them in place (its own accuracy, 50-90%, verdicts, search latencies and
   context tokens) and writes its checkpoint.json with msgspec (about 20 ms and 4.8 MB per 2,000-question
   run); no results/ files, so no run has a missing-file problem. Then exports them with ``export_runs``
   into DIR/store (timed once, printed: a one-off cost per run, incremental after).
2. Measures, in this one process, the best of ``--repeat`` rounds of each:
   - ``all runs``: ``memscore`` + ``accuracy_by_type`` of ``questions_df`` over every run directory (json)
     and over ``load_runs(STORE)`` (store; a fresh StoredRuns each round);
   - ``3 runs``: the same over 3 runs (``load_runs(STORE, runs=[3 ids])``);
   - ``compare report, 3 runs``: ``build_report("compare", ...)`` (what ``bench-nb report compare`` runs:
     papermill, then the HTML export) over the 3 run directories, and over the store with ``run_ids``.
   It checks that the store's MemScore and per-type accuracy equal the JSON path's, and that the two
   reports' outputs are equal cell for cell (build time and object addresses aside), before printing.
3. Prints the times, the ratios store / json (below 1: the store is faster), the sizes on disk, the peak
   memory of this process and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import msgspec
import nbformat
from polars.testing import assert_frame_equal

sys.path.insert(0, str(Path(__file__).resolve().parent))
import load as load_bench

import bench_nb as bn
from bench_nb.frames.store import export_runs
from bench_nb.reports import build_report

SHORT_RESULT_CHARS = 80  # one short search result per question: the store's hits table stays small


def templates(m: int) -> list[dict[str, Any]]:
    """The m question entries every run starts from (bench/load.py's LoCoMo-like questions), each with its
    search results cut to one short result and no results/ file (so no run has a missing-file problem)."""
    rng = random.Random(20261201)
    texts = [load_bench._text(rng, SHORT_RESULT_CHARS) for _ in range(500)]
    entries = []
    for i in range(m):
        _, entry, _ = load_bench._question(i, rng, texts)
        search = entry["phases"]["search"]
        del search["resultFile"]
        first = search["results"][0]
        search["results"] = [
            {"id": first["id"], "memory": first["memory"], "similarity": first["similarity"]}
        ]
        entries.append(entry)
    return entries


_METRICS = {  # the evaluate phase's retrievalMetrics of a correct and of an incorrect answer (shared dicts)
    score: {
        "hitAtK": score,
        "precisionAtK": float(score),
        "recallAtK": score,
        "f1AtK": float(score),
        "mrr": score,
        "ndcg": score,
        "k": 1,
        "relevantRetrieved": score,
        "totalRelevant": 1,
    }
    for score in (0, 1)
}


def generate_run(run_dir: Path, run_id: str, seed: int, entries: list[dict[str, Any]]) -> None:
    """One run from the templates: its own accuracy (50-90%, by seed), verdicts, search latencies and
    context tokens; the entries are updated in place and the checkpoint encoded with msgspec."""
    run_dir.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    accuracy = 0.5 + 0.4 * rng.random()
    latency = rng.randint(150, 900)
    questions: dict[str, Any] = {}
    for entry in entries:
        qid = entry["questionId"]
        entry["containerTag"] = f"{qid}-{run_id}"
        phases = entry["phases"]
        score = int(rng.random() < accuracy)
        evaluate = phases["evaluate"]
        evaluate["score"] = score
        evaluate["label"] = "correct" if score else "incorrect"
        evaluate["explanation"] = "The response contains the correct answer." if score else "It does not."
        evaluate["retrievalMetrics"] = _METRICS[score]
        phases["search"]["durationMs"] = latency + rng.randint(0, 400)
        answer = phases["answer"]
        answer["contextTokens"] = ctx = rng.randint(100, 600)
        answer["promptTokens"] = answer["basePromptTokens"] + ctx
        questions[qid] = entry
    checkpoint = {
        "runId": run_id,
        "dataSourceRunId": run_id,
        "status": "completed",
        "provider": f"provider-{seed % 4}",
        "benchmark": "locomo",
        "judge": "gpt-4o",
        "answeringModel": "gpt-4o",
        "createdAt": load_bench._stamp(0),
        "updatedAt": load_bench._stamp(len(entries) * 40.0),
        "sampling": {"mode": "full"},
        "targetQuestionIds": list(questions),
        "concurrency": {"default": 10},
        "questions": questions,
    }
    (run_dir / "checkpoint.json").write_bytes(msgspec.json.encode(checkpoint))


def generate(root: Path, n: int, m: int) -> list[Path]:
    runs_dir = root / "runs"
    marker = root / ".complete"
    dirs = [runs_dir / f"store-bench-{i:04d}" for i in range(n)]
    if marker.is_file() and marker.read_text() == f"{n}x{m}":
        return dirs
    if root.exists():
        shutil.rmtree(root)
    entries = templates(m)
    for i, d in enumerate(dirs):
        generate_run(d, d.name, seed=i, entries=entries)
    marker.write_text(f"{n}x{m}")
    return dirs


def summary(source: Any) -> tuple[Any, Any]:
    """Per-run MemScore and per-type accuracy (polars)."""
    questions = bn.questions_df(source, backend="polars")
    return bn.memscore(questions, backend="polars"), bn.accuracy_by_type(questions, backend="polars")


def report_outputs(path: Path) -> list[str]:
    """An executed notebook's code-cell outputs as JSON, without execution counts, build times and addresses."""
    nb = nbformat.read(path, as_version=4)
    out = []
    for cell in (c for c in nb.cells if c.cell_type == "code"):
        text = json.dumps([{k: v for k, v in o.items() if k != "execution_count"} for o in cell.outputs])
        text = re.sub(r"built \d{4}-\d\d-\d\d \d\d:\d\d UTC", "built <time>", text)
        out.append(re.sub(r" at 0x[0-9a-f]+>", ">", text))
    return out[2:]  # after the parameters and the injected parameters


def compare_report(params: dict[str, Any], root: Path, name: str) -> list[str]:
    """Build the compare report (as ``bench-nb report compare`` does) and return its outputs."""
    kept = root / f"{name}.ipynb"
    build_report("compare", params, root / f"{name}.html", notebook=kept, index=False)
    return report_outputs(kept)


def best(fn: Any, repeat: int) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def du(path: Path) -> str:
    size = sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
    return f"{size / 2**30:.2f} GiB" if size > 2**30 else f"{size / 2**20:.1f} MiB"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--questions", type=int, default=250)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--report-repeat", type=int, default=2, help="rounds of each compare report build")
    ap.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "bench-nb-store")
    ap.add_argument("--clean", action="store_true", help="delete DIR afterwards")
    args = ap.parse_args()

    t0 = time.perf_counter()
    dirs = generate(args.dir, args.runs, args.questions)
    print(f"runs: {args.runs} x {args.questions} questions in {args.dir} ({time.perf_counter() - t0:.1f} s)")
    store = args.dir / "store"
    t0 = time.perf_counter()
    result = export_runs(dirs, store)
    print(f"export: {result} in {time.perf_counter() - t0:.1f} s")
    print(f"on disk: run directories {du(args.dir / 'runs')}, store {du(store)}")
    three = dirs[:: max(1, len(dirs) // 3)][:3]
    three_ids = [d.name for d in three]

    cases = {
        "all runs": (lambda: summary(dirs), lambda: summary(bn.load_runs(store))),
        "3 runs": (lambda: summary(three), lambda: summary(bn.load_runs(store, runs=three_ids))),
    }
    print(f"\nload average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"{'':24} {'json s':>9} {'store s':>9} {'store/json':>11}")
    for name, (from_json, from_store) in cases.items():
        t_json, want = best(from_json, args.repeat)
        t_store, got = best(from_store, args.repeat)
        for g, w in zip(got, want, strict=True):
            assert_frame_equal(g, w)
        print(f"{name:24} {t_json:9.3f} {t_store:9.3f} {t_store / t_json:10.3f}x", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-nb-store-report-") as tmp:
        root = Path(tmp)
        t_json, want = best(
            lambda: compare_report({"runs": [str(d) for d in three]}, root, "json"), args.report_repeat
        )
        t_store, got = best(
            lambda: compare_report({"runs": str(store), "run_ids": three_ids}, root, "store"),
            args.report_repeat,
        )
        assert got == want, "the compare report from the store differs from the one from run directories"
    print(f"{'compare report, 3 runs':24} {t_json:9.3f} {t_store:9.3f} {t_store / t_json:10.3f}x")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(f"\npeak memory of this process {peak:.2f} GiB; load average {os.getloadavg()[0]:.1f}")
    if args.clean:
        shutil.rmtree(args.dir)


if __name__ == "__main__":
    main()
