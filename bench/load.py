"""Loading a large MemoryBench run: ``questions_df`` + MemScore against a bare ``json.load`` of the same files.

    .venv/bin/python bench/load.py                      # 100,000 questions (~1.2 GB on disk, kept for reuse)
    .venv/bin/python bench/load.py --questions 5000     # a quick run
    .venv/bin/python bench/load.py --dir DIR --clean    # generate in DIR, delete it afterwards

1. Generates (once; reused while DIR holds a complete run of that size) a MemoryBench run of N LoCoMo-like
   questions with every phase completed and 5 search results of ~300 characters each, embedded in the
   pretty-printed ``checkpoint.json`` and copied to ``results/<questionId>.json``, as MemoryBench writes them
   (about 8 KB of checkpoint and 4 KB of results file per question: 0.8 GB + 0.4 GB at 100,000).
2. Measures, each in a fresh child process:
   - ``bare json.load``: ``json.load`` of checkpoint.json and of every results file, all kept in memory
     (what any loader that builds every dict pays), the reference of the ratios;
   - ``bare json.load, collector paused``: the same inside ``gc.disable()``, a stricter reference (the
     garbage collector dominates the plain parse; bench_nb's loader pauses it too);
   - ``questions_df + memscore (polars)``: ``questions_df(run, backend="polars")`` then ``memscore``;
   - ``questions_df + memscore (pandas)``: the same with the default pandas frames.
   - ``load_runs + questions_df + memscore (polars)`` and ``(pandas)``: the run loaded first with
     ``load_runs`` (a ``RunSet``, kept alive to the end, as a notebook keeps it), then the same.
   - ``questions_df + memscore (polars), baseline``: the polars measurement again, importing bench_nb from
     ``git archive <--baseline>`` (default 6a046f2, the code BENCHMARKS.md's figure was measured on) instead
     of this checkout: an A/B in the same run, so the machine's load falls on both sides alike.
3. Prints time and peak memory of each, and their ratios to the bare parse (and to the paused one). With
   ``--repeat N`` the kinds are measured in turn N times (interleaved); each row keeps its best time, and the
   A/B lines give the median of the N paired ratios (polars / baseline measured back to back), of wall time
   and of CPU time (``time.process_time``, all threads: what other jobs on a shared machine disturb least,
   as they stretch a wall time by waiting, not the work done). Targets:
   time <= 0.2 and peak memory <= 1/3 of the bare parse's; polars within 1.10x of the baseline.

Peak memory is the child's peak resident set size (``VmHWM``, the kernel's high-water mark) minus its resident
size just before the measured work (after the imports). RSS rather than tracemalloc: tracemalloc only sees
Python's allocator, while polars (Rust), msgspec's and the file reads' buffers allocate outside it, and
those are exactly what a loader can trade against Python objects. A fresh process per measurement keeps one
measurement's high-water mark and freed-but-kept heap from leaking into the next.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import msgspec

RUN_ID = "bench-load"
# The code BENCHMARKS.md's figure (3.45 s at 100,000 questions) was measured on.
BASELINE = "6a046f2"
PHASES = ("ingest", "indexing", "search", "answer", "evaluate")
LABELS = ("single-hop", "multi-hop", "temporal", "world-knowledge", "adversarial")
VOCABULARY = (
    "Caroline Melanie went to the LGBTQ support group yesterday and said it was powerful; she's thinking "
    "about adoption agencies, painting a sunrise by the lake, camping with the kids in the mountains, a "
    "pottery class, “Becoming Nicole”, café visits, running a charity 10k in March, and the new job at the "
    "counselling centre where she helps transgender teens find their voice"
)
WORDS = VOCABULARY.split()
# The same words in plain ASCII (``--ascii``): JavaScript engines keep such strings one byte a character, and
# MemoryBench's report costs about half as much on them, so both kinds of text are measured.
ASCII_WORDS = [w.replace("“", "'").replace("”", "'").replace("é", "e") for w in WORDS]
SESSIONS_PER_CONVERSATION = 6
QUESTIONS_PER_CONVERSATION = 200


def _text(rng: random.Random, chars: int, words: list[str] = WORDS) -> str:
    out: list[str] = []
    n = 0
    while n < chars:
        w = rng.choice(words)
        out.append(w)
        n += len(w) + 1
    return " ".join(out)


def _stamp(seconds: float) -> str:
    t = time.gmtime(1_772_000_000 + seconds)
    return time.strftime("%Y-%m-%dT%H:%M:%S", t) + f".{int(seconds * 1000) % 1000:03d}Z"


def _question(i: int, rng: random.Random, texts: list[str]) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """One question's checkpoint entry and its results file, shaped like MemoryBench's."""
    conv, q = divmod(i, QUESTIONS_PER_CONVERSATION)
    qid = f"conv-{conv}-q{q}"
    sessions = [f"conv-{conv}-session_{s + 1}" for s in range(SESSIONS_PER_CONVERSATION)]
    docs = [f"{rng.getrandbits(88):022x}" for _ in sessions]
    t = i * 40.0
    durations = {
        "ingest": rng.randint(1500, 3500),
        "indexing": rng.randint(8000, 32000),
        "search": rng.randint(200, 700),
        "answer": rng.randint(2000, 5000),
        "evaluate": rng.randint(1200, 3200),
    }
    results = []
    for r in range(5):
        date = f"2024-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}T10:15:00.000Z"
        results.append(
            {
                "id": f"mem_{rng.getrandbits(64):016x}",
                "memory": rng.choice(texts),
                "similarity": round(0.9 - r * 0.05 - rng.random() * 0.04, 4),
                "metadata": {
                    "sessionId": rng.choice(sessions),
                    "date": date,
                    "temporalContext": {"documentDate": date},
                },
                "updatedAt": _stamp(t + r),
                "version": 1,
                "chunks": [{"content": rng.choice(texts)[:40], "position": r, "score": 0.8 - r * 0.05}],
            }
        )
    question = f"When did Caroline go to the support group ({i})?"
    qtype = LABELS[q % len(LABELS)]
    ground = "7 May 2023"
    phases: dict[str, Any] = {}
    clock = t
    for p in PHASES:
        rec: dict[str, Any] = {"status": "completed"}
        if p == "ingest":
            rec["completedSessions"] = sessions
        rec["startedAt"] = _stamp(clock)
        if p == "ingest":
            rec["ingestResult"] = {"documentIds": docs}
        elif p == "indexing":
            rec.update(completedIds=docs, failedIds=[])
        elif p == "search":
            rec.update(resultFile=f"data/runs/{RUN_ID}/results/{qid}.json", results=results)
        elif p == "answer":
            base = rng.randint(600, 650)
            ctx = rng.randint(300, 500)
            rec.update(
                hypothesis=f"Reasoning:\nResult 1 says so.\n\nAnswer:\n{ground}",
                promptTokens=base + ctx,
                basePromptTokens=base,
                contextTokens=ctx,
            )
        else:
            score = int(rng.random() < 0.8)
            rec.update(
                score=score,
                label="correct" if score else "incorrect",
                explanation="The response contains the correct answer." if score else "It does not.",
                retrievalMetrics={
                    "hitAtK": score,
                    "precisionAtK": 0.2 * score,
                    "recallAtK": score,
                    "f1AtK": round(score / 3, 4),
                    "mrr": score,
                    "ndcg": score,
                    "k": 5,
                    "relevantRetrieved": score,
                    "totalRelevant": 1,
                },
            )
        clock += durations[p] / 1000
        rec["completedAt"] = _stamp(clock)
        rec["durationMs"] = durations[p]
        phases[p] = rec
    entry = {
        "questionId": qid,
        "containerTag": f"{qid}-{RUN_ID}",
        "question": question,
        "groundTruth": ground,
        "questionType": qtype,
        "phases": phases,
        "sessions": [
            {"sessionId": s, "date": f"2023-05-{k % 28 + 1:02d}T13:56:00.000Z", "messageCount": 18}
            for k, s in enumerate(sessions)
        ],
    }
    result_file = {
        "questionId": qid,
        "question": question,
        "questionType": qtype,
        "groundTruth": ground,
        "containerTag": entry["containerTag"],
        "timestamp": phases["search"]["completedAt"],
        "durationMs": durations["search"],
        "results": results,
    }
    return qid, entry, result_file


def _pretty(obj: Any, depth: int = 0) -> bytes:
    """``JSON.stringify(obj, null, 2)`` as it appears nested ``depth`` levels deep."""
    text = msgspec.json.format(msgspec.json.encode(obj), indent=2)
    return text.replace(b"\n", b"\n" + b"  " * depth) if depth else text


def generate(run_dir: Path, n: int, ascii: bool = False) -> None:
    """Write a complete n-question run into run_dir (atomically marked complete at the end); with ``ascii``,
    its text is plain ASCII (the same words without curly quotes and accents)."""
    if run_dir.exists():
        shutil.rmtree(run_dir)
    (run_dir / "results").mkdir(parents=True)
    rng = random.Random(20260323)
    texts = [_text(rng, 250, ASCII_WORDS if ascii else WORDS) for _ in range(4000)]
    ids = [f"conv-{i // QUESTIONS_PER_CONVERSATION}-q{i % QUESTIONS_PER_CONVERSATION}" for i in range(n)]
    header = {
        "runId": RUN_ID,
        "dataSourceRunId": RUN_ID,
        "status": "completed",
        "provider": "supermemory",
        "benchmark": "locomo",
        "judge": "gpt-4o",
        "answeringModel": "gpt-4o",
        "createdAt": _stamp(0),
        "updatedAt": _stamp(n * 40.0),
        "sampling": {"mode": "full"},
        "targetQuestionIds": ids,
        "concurrency": {"default": 10},
    }
    with open(run_dir / "checkpoint.json", "wb") as ck:
        ck.write(_pretty(header)[:-2] + b',\n  "questions": {')
        for i in range(n):
            qid, entry, result_file = _question(i, rng, texts)
            ck.write(b"\n    " if i == 0 else b",\n    ")
            ck.write(msgspec.json.encode(qid) + b": " + _pretty(entry, 2))
            (run_dir / "results" / f"{qid}.json").write_bytes(_pretty(result_file))
        ck.write(b"\n  }\n}" if n else b"}\n}")
    (run_dir / ".complete").write_text(str(n))


def _rss_kib(key: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"{key} not in /proc/self/status")


def measure(kind: str, run_dir: Path) -> dict[str, Any]:
    """Run one measurement in this (fresh) process: seconds and peak RSS above the starting RSS."""
    import gc

    if not kind.startswith("bare"):
        from bench_nb import load_runs, memscore, questions_df
    gc.collect()
    if kind == "bare-paused":
        gc.disable()
    start_kib = _rss_kib("VmRSS")
    t0 = time.perf_counter()
    c0 = time.process_time()
    if kind.startswith("bare"):
        with open(run_dir / "checkpoint.json", "rb") as f:
            checkpoint = json.load(f)
        results = []
        for entry in os.scandir(run_dir / "results"):
            with open(entry.path, "rb") as f:
                results.append(json.load(f))
        info = f"{len(checkpoint['questions'])} questions, {len(results)} results files"
    else:
        backend = "polars" if kind.endswith("polars") else "pandas"
        # load-*: through a RunSet, kept alive to the end as a notebook keeps it (its frame is remembered on it)
        runs = load_runs(run_dir) if kind.startswith("load") else run_dir
        df = questions_df(runs, backend=backend)
        ms = memscore(df, backend="polars")
        info = f"{len(df)} rows, MemScore {ms['memscore'][0]}"
    seconds = time.perf_counter() - t0
    cpu = time.process_time() - c0
    peak_kib = _rss_kib("VmHWM")
    return {"seconds": seconds, "cpu": cpu, "peak_mib": (peak_kib - start_kib) / 1024, "info": info}


def baseline_sources(rev: str) -> Path:
    """The ``src/`` of commit ``rev`` (``git archive``, extracted once into the temp dir): what the baseline
    measurement imports bench_nb from."""
    repo = Path(__file__).resolve().parents[1]
    commit = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "--short=12", f"{rev}^{{commit}}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    dest = Path(tempfile.gettempdir()) / f"bench_nb-src-{commit}"
    if not (dest / "src" / "bench_nb" / "__init__.py").is_file():
        dest.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "-C", str(repo), "archive", commit, "src"], check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest / "src"


def run_child(kind: str, run_dir: Path, sources: Path | None = None) -> dict[str, Any]:
    """One measurement in a fresh process; ``sources``: import bench_nb from there instead."""
    env = dict(os.environ)
    if sources is not None:
        env["PYTHONPATH"] = str(sources)
    out = subprocess.run(
        [sys.executable, __file__, "--measure", kind, "--dir", str(run_dir)],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--questions", type=int, default=100_000, help="run size (default 100,000)")
    ap.add_argument("--dir", type=Path, help="where the run is generated (default: a folder in the temp dir)")
    ap.add_argument(
        "--ascii",
        action="store_true",
        help="plain ASCII text (no curly quotes or accents; its own default --dir)",
    )
    ap.add_argument("--repeat", type=int, default=1, help="measure each this many times, keep the best")
    ap.add_argument(
        "--baseline",
        default=BASELINE,
        help=f"commit whose bench_nb the polars measurement is compared with (default {BASELINE}; 'none': skip)",
    )
    ap.add_argument("--ab", action="store_true", help="only the polars measurement and its baseline")
    ap.add_argument("--clean", action="store_true", help="delete the generated run afterwards")
    ap.add_argument(
        "--measure",
        choices=("bare", "bare-paused", "polars", "pandas", "load-polars", "load-pandas"),
        help=argparse.SUPPRESS,
    )
    args = ap.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, args.dir)))
        return
    run_dir = (
        args.dir
        or Path(tempfile.gettempdir()) / f"bench_nb-load-{args.questions}{'-ascii' if args.ascii else ''}"
    )
    marker = run_dir / ".complete"
    if marker.is_file() and marker.read_text() == str(args.questions):
        print(f"reusing {run_dir}")
    else:
        t0 = time.perf_counter()
        generate(run_dir, args.questions, ascii=args.ascii)
        print(f"generated {run_dir} in {time.perf_counter() - t0:.0f} s")
    ck_bytes = (run_dir / "checkpoint.json").stat().st_size
    res_bytes = sum(e.stat().st_size for e in os.scandir(run_dir / "results"))
    print(
        f"{args.questions:,} questions: checkpoint.json {ck_bytes / 1e9:.2f} GB, results/ {res_bytes / 1e9:.2f} GB"
        f"; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    )
    labels = {
        "bare": "bare json.load (checkpoint + results/)",
        "bare-paused": "bare json.load, collector paused",
        "polars": "questions_df + memscore (polars)",
        "baseline": f"the same, bench_nb of {args.baseline}",
        "pandas": "questions_df + memscore (pandas)",
        "load-polars": "load_runs + questions_df + memscore (polars)",
        "load-pandas": "load_runs + questions_df + memscore (pandas)",
    }
    sources: Path | None = None
    if args.baseline != "none":
        try:
            sources = baseline_sources(args.baseline)
        except (OSError, subprocess.CalledProcessError) as err:  # no git, or a clone without that commit
            print(f"baseline {args.baseline} skipped: {err}")
    if sources is None:
        del labels["baseline"]
    if args.ab:
        labels = {k: v for k, v in labels.items() if k in ("polars", "baseline")}
    best: dict[str, dict[str, Any]] = {}
    pairs: list[float] = []  # polars / baseline, measured back to back: wall time
    cpu_pairs: list[float] = []  # and CPU time (what the machine's other jobs disturb least)
    for _ in range(args.repeat):
        this_round: dict[str, dict[str, Any]] = {}
        for kind in labels:
            if kind == "baseline":
                r = run_child("polars", run_dir, sources)
                pairs.append(this_round["polars"]["seconds"] / r["seconds"])
                cpu_pairs.append(this_round["polars"]["cpu"] / r["cpu"])
            else:
                r = run_child(kind, run_dir)
            this_round[kind] = r
            old = best.get(kind)
            if old is None or r["seconds"] < old["seconds"]:
                if old:
                    r = {
                        **r,
                        "peak_mib": min(r["peak_mib"], old["peak_mib"]),
                        "cpu": min(r["cpu"], old["cpu"]),
                    }
                best[kind] = r
            else:
                old["peak_mib"] = min(r["peak_mib"], old["peak_mib"])
                old["cpu"] = min(r["cpu"], old["cpu"])
    print(f"load average {os.getloadavg()[0]:.1f} after the measurements")
    ref = best.get("bare")
    paused = best.get("bare-paused")
    print(
        f"\n{'measurement':<40} {'time s':>7} {'cpu s':>6} {'peak MiB':>9} {'time ratio':>11}"
        f" {'memory ratio':>13} {'ratios to paused':>17}"
    )
    for kind, label in labels.items():
        r = best[kind]
        ratios = (
            f"{r['seconds'] / ref['seconds']:>11.2f} {r['peak_mib'] / ref['peak_mib']:>13.2f}"
            if ref
            else f"{'':>11} {'':>13}"
        )
        ratios += (
            f" {r['seconds'] / paused['seconds']:>8.2f} {r['peak_mib'] / paused['peak_mib']:>8.2f}"
            if paused
            else f" {'':>8} {'':>8}"
        )
        print(
            f"{label:<40} {r['seconds']:>7.2f} {r['cpu']:>6.2f} {r['peak_mib']:>9.0f} {ratios}   {r['info']}"
        )
    if pairs:
        new, old = best["polars"], best["baseline"]
        print(
            f"\nA/B, polars / baseline {args.baseline}, {len(pairs)} pair(s) measured back to back:"
            f"\n  time: median {statistics.median(pairs):.3f} ({', '.join(f'{p:.3f}' for p in pairs)}),"
            f" best {new['seconds']:.2f} s / {old['seconds']:.2f} s = {new['seconds'] / old['seconds']:.3f}"
            f"\n  CPU:  median {statistics.median(cpu_pairs):.3f} ({', '.join(f'{p:.3f}' for p in cpu_pairs)}),"
            f" best {new['cpu']:.2f} s / {old['cpu']:.2f} s = {new['cpu'] / old['cpu']:.3f}"
            f"\n  peak memory: {new['peak_mib']:.0f} / {old['peak_mib']:.0f} MiB = {new['peak_mib'] / old['peak_mib']:.3f}"
        )
    print(
        "\ntargets: time ratio <= 0.20, memory ratio <= 0.33 (questions_df + memscore against bare json.load);"
        " polars / baseline <= 1.10"
    )
    if args.clean:
        shutil.rmtree(run_dir)
        print(f"deleted {run_dir}")


if __name__ == "__main__":
    main()
