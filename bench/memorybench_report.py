"""``bench-nb memorybench-report`` against MemoryBench's own report phase, and loading against ``json.load``.

    .venv/bin/python bench/memorybench_report.py --memorybench /path/to/memorybench.git   # 100,000 questions
    .venv/bin/python bench/memorybench_report.py --memorybench URL --questions 10000       # a smaller run

One run of this script measures, each in a fresh child process, one after the other (never two at once):
1, 3 and 2 alternated ``--repeat`` times (default 5: 1, 3, 2, 1, 3, 2, ...), then 4 once (``--no-cli`` and
``--no-loading`` skip 2 and 4; each of 1-3 moves by a quarter between runs on this machine, so the ratios
are of medians and of each alternation's own measurements). It prints each measurement's median and min-max, the ratios of the medians, and
the CPU-time ratio of each (1, 3) pair; CPU time is the figure to judge by on a shared machine.

1. ``bench-nb memorybench-report RUN --dataset DATASET -o OUT`` (``python -m bench_nb``);
2. MemoryBench's report phase as its users run it: ``bun run src/index.ts run -r RUN_ID -f report`` (it loads
   the checkpoint, rewrites it twice with the run's status, builds the report, writes report.json and prints
   the summary);
3. MemoryBench's report module alone: a bun script that loads the checkpoint and the dataset with MemoryBench's
   own ``CheckpointManager`` and ``LoCoMoBenchmark`` and calls ``generateReport`` + ``saveReport`` (what the
   report phase does without the checkpoint rewrites: the stricter reference);
4. ``json.load`` of checkpoint.json and every results file, and ``questions_df`` + ``memscore`` (polars), as
   bench/load.py measures them (its functions, in its child processes).

Time is the child's wall clock from start to exit (interpreter start, imports and writing included, for bun as
for Python), and for 1-3 also its CPU time (user + system, all its threads: bun runs its garbage collector and
compiler on other threads, which a busy machine's wall clock shows less than CPU time does); peak memory is the child's peak resident set size (``ru_maxrss`` from ``wait4``) for 1-3, and
bench/load.py's ``VmHWM`` above the starting RSS for 4.

The run is bench/load.py's generated MemoryBench run (reused from the temp dir when it is there), plus a
LoCoMo-format dataset file with the same question ids, text, types and answers (both tools take question
text, type and ground truth from it). MemoryBench gets its own copy of checkpoint.json (its CLI rewrites it).

How MemoryBench is set up (once, in ``--work``, reused while its ``.installed`` marker is there; nothing of it
enters this repository):

- its source: ``git archive REV`` of the git directory given with ``--memorybench`` (or ``git clone --depth 1``
  of a URL) into WORK/memorybench;
- bun from the npm registry: ``npm install --prefix WORK/bun bun@VERSION`` (the ``bun`` package's
  optionalDependencies carry the Linux binary);
- MemoryBench's dependencies from the npm registry with that bun: ``bun install`` in WORK/memorybench
  (versions from its bun.lock), with ``npm_config_nodedir=/usr`` so that the sqlite3 package (an optional peer
  of mem0ai), whose prebuilt binary is on GitHub and not reachable, builds from source against Debian's node
  headers instead of downloading them, and with bun's directory on PATH (the build runs ``bun x node-gyp``);
- then everything runs offline: the report phase reads local files only (the provider's client is constructed
  with an empty key and never called).

The script compares the two report.json files on every field both tools compute the same way (see
``compare_reports``) and says which fields it skipped: MemoryBench revisions differ in the rest.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parent))
import load as load_bench

REPO = Path(__file__).resolve().parents[1]

# MemoryBench's report module alone, run by bun from WORK/memorybench.
REPORT_ONLY_TS = """
import { CheckpointManager } from "./src/orchestrator/checkpoint"
import { createBenchmark } from "./src/benchmarks"
import { generateReport, saveReport } from "./src/orchestrator/phases/report"
const runId = process.argv[2]
const checkpoint = new CheckpointManager().load(runId)
if (!checkpoint) throw new Error(`no checkpoint for ${runId}`)
const benchmark = createBenchmark(checkpoint.benchmark)
await benchmark.load()
const report = generateReport(benchmark, checkpoint)
console.log(saveReport(report), report.summary.totalQuestions)
"""


def write_dataset(path: Path, n: int) -> None:
    """A LoCoMo file whose questions are those of bench/load.py's run: ids ``conv-C-qI``, same text and answer,
    categories 1-5 cycling as the run's question types do (MemoryBench's labels for them)."""
    per = load_bench.QUESTIONS_PER_CONVERSATION
    samples = []
    for c in range((n + per - 1) // per):
        conversation: dict[str, Any] = {"speaker_a": "Caroline", "speaker_b": "Melanie"}
        for s in range(load_bench.SESSIONS_PER_CONVERSATION):
            conversation[f"session_{s + 1}_date_time"] = f"1:56 pm on {s % 28 + 1} May, 2023"
            conversation[f"session_{s + 1}"] = [
                {"speaker": "Caroline", "dia_id": f"D{s + 1}:1", "text": "I went to the support group."},
                {"speaker": "Melanie", "dia_id": f"D{s + 1}:2", "text": "That sounds powerful!"},
            ]
        qa = [
            {
                "question": f"When did Caroline go to the support group ({c * per + q})?",
                "answer": "7 May 2023",
                "evidence": ["D1:1"],
                "category": q % 5 + 1,
            }
            for q in range(min(per, n - c * per))
        ]
        samples.append(
            {
                "sample_id": f"conv-{c}",
                "qa": qa,
                "conversation": conversation,
                "event_summary": {},
                "observation": {},
                "session_summary": {},
            }
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(msgspec.json.encode(samples))


def _run(cmd: list[str], prefix: str = "", **kw: Any) -> str:
    line = f"  $ {prefix}{' '.join(cmd)}"
    print(line, flush=True)
    subprocess.run(cmd, check=True, **kw)
    return line


def setup_memorybench(work: Path, source: str, rev: str, bun_version: str) -> tuple[Path, Path]:
    """MemoryBench's source and bun in ``work`` (see the module's docstring); returns (source dir, bun)."""
    mb = work / "memorybench"
    bun = work / "bun" / "node_modules" / ".bin" / "bun"
    marker = work / ".installed"
    if marker.is_file() and bun.is_file():
        print(f"MemoryBench set up earlier in {work}, by:\n{marker.read_text().rstrip()}")
        return mb, bun
    print(f"setting MemoryBench up in {work}:")
    done: list[str] = []
    if mb.exists():
        shutil.rmtree(mb)
    mb.mkdir(parents=True)
    if Path(source).is_dir():
        commit = subprocess.run(
            ["git", "--git-dir", source, "rev-parse", f"{rev}^{{commit}}"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        done.append(f"  $ git --git-dir {source} archive {commit} | tar -x -C {mb}")
        print(done[-1])
        archive = subprocess.run(
            ["git", "--git-dir", source, "archive", commit], check=True, capture_output=True
        )
        subprocess.run(["tar", "-x", "-C", str(mb)], input=archive.stdout, check=True)
    else:
        done.append(_run(["git", "clone", "--depth", "1", source, str(mb)]))
        commit = subprocess.run(
            ["git", "-C", str(mb), "rev-parse", "HEAD"], check=True, capture_output=True, text=True
        ).stdout.strip()
    done.append(
        _run(
            ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(work / "bun"), f"bun@{bun_version}"]
        )
    )
    env = {
        **os.environ,
        "npm_config_nodedir": "/usr",
        "PATH": f"{bun.parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    done.append(
        _run(
            [str(bun), "install"],
            cwd=mb,
            env=env,
            prefix=f"cd {mb} && npm_config_nodedir=/usr PATH={bun.parent}:$PATH ",
        )
    )
    version = subprocess.run(
        [str(bun), "--version"], check=True, capture_output=True, text=True
    ).stdout.strip()
    marker.write_text("\n".join([*done, f"  = MemoryBench {commit}, bun {version}"]) + "\n")
    print(f"  = MemoryBench {commit}, bun {version}")
    return mb, bun


def _cpu_ticks() -> tuple[int, int]:
    """(idle, total) clock ticks of all CPUs since boot (/proc/stat)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return fields[3] + fields[4], sum(fields)


def wait_for_idle(seconds: float) -> None:
    """Wait until one second passes with the CPUs 90% idle (other jobs on a shared machine), at most
    ``seconds``; nothing on a system without /proc/stat or with ``seconds`` 0."""
    if seconds <= 0 or not Path("/proc/stat").is_file():
        return
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        idle0, total0 = _cpu_ticks()
        time.sleep(1)
        idle1, total1 = _cpu_ticks()
        if total1 > total0 and (idle1 - idle0) / (total1 - total0) >= 0.9:
            return


def timed(cmd: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run ``cmd`` to completion: wall seconds and peak RSS of the process (``wait4``'s ``ru_maxrss``)."""
    t0 = time.perf_counter()
    with open(os.devnull, "wb") as devnull:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=devnull, stderr=subprocess.PIPE)
        assert proc.stderr is not None
        err = proc.stderr.read()
        _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(
            f"{' '.join(cmd)} failed ({proc.returncode}): {err.decode(errors='replace')[-2000:]}"
        )
    return {
        "seconds": seconds,
        "cpu": usage.ru_utime + usage.ru_stime,
        "user": usage.ru_utime,
        "sys": usage.ru_stime,
        "peak_mib": usage.ru_maxrss / 1024,
        "load": os.getloadavg()[0],
    }


class _Evaluation(msgspec.Struct, forbid_unknown_fields=False):
    questionId: str
    questionType: str
    question: str
    score: msgspec.Raw
    label: msgspec.Raw = msgspec.field(default_factory=msgspec.Raw)
    explanation: msgspec.Raw = msgspec.field(default_factory=msgspec.Raw)
    hypothesis: msgspec.Raw = msgspec.field(default_factory=msgspec.Raw)
    groundTruth: str = ""
    searchResults: msgspec.Raw = msgspec.field(default_factory=msgspec.Raw)
    searchDurationMs: msgspec.Raw = msgspec.field(default_factory=msgspec.Raw)
    answerDurationMs: msgspec.Raw = msgspec.field(default_factory=msgspec.Raw)
    retrievalMetrics: msgspec.Raw = msgspec.field(default_factory=msgspec.Raw)


class _Report(msgspec.Struct, forbid_unknown_fields=False):
    summary: dict[str, Any]
    latency: dict[str, Any]
    byQuestionType: dict[str, Any]
    questionTypeRegistry: dict[str, Any]
    evaluations: list[_Evaluation]
    retrieval: dict[str, Any] | None = None


# Both tools compute these the same way at every MemoryBench revision since reports had them; the rest
# (tokens and memscore, totalDurationMs and latency.total: search + answer before 2026, all five phases after)
# depends on the revision.
COMPARED = (
    "summary, latency.{ingest,search,answer,evaluate}, retrieval, byQuestionType.*.{total,correct,accuracy,"
    "latency.search,latency.answer,retrieval}, questionTypeRegistry, and per evaluation: questionId, "
    "questionType, question, score, label, explanation, hypothesis, groundTruth, searchResults (bytes), "
    "searchDurationMs, answerDurationMs, retrievalMetrics (bytes)"
)


def compare_reports(ours_path: Path, theirs_path: Path) -> list[str]:
    """Differences between the two report.json files on ``COMPARED`` (empty: equal)."""
    dec = msgspec.json.Decoder(_Report)
    ours, theirs = dec.decode(ours_path.read_bytes()), dec.decode(theirs_path.read_bytes())
    diffs: list[str] = []

    def same(what: str, a: Any, b: Any) -> None:
        if a != b:
            diffs.append(f"{what}: bench_nb {str(a)[:200]} / MemoryBench {str(b)[:200]}")

    same("summary", ours.summary, theirs.summary)
    for phase in ("ingest", "search", "answer", "evaluate"):
        same(f"latency.{phase}", ours.latency[phase], theirs.latency[phase])
    same("retrieval", ours.retrieval, theirs.retrieval)
    same("byQuestionType keys", list(ours.byQuestionType), list(theirs.byQuestionType))
    for t, a in ours.byQuestionType.items():
        b = theirs.byQuestionType.get(t, {})
        for key in ("total", "correct", "accuracy", "retrieval"):
            same(f"byQuestionType.{t}.{key}", a.get(key), b.get(key))
        for key in ("search", "answer"):
            same(f"byQuestionType.{t}.latency.{key}", a["latency"][key], b.get("latency", {}).get(key))
    same("questionTypeRegistry", ours.questionTypeRegistry, theirs.questionTypeRegistry)
    same("number of evaluations", len(ours.evaluations), len(theirs.evaluations))
    fields = [f for f in _Evaluation.__struct_fields__]
    for a, b in zip(ours.evaluations, theirs.evaluations, strict=False):
        for f in fields:
            x, y = getattr(a, f), getattr(b, f)
            if isinstance(x, msgspec.Raw):
                x, y = bytes(x), bytes(y)
            if x != y:
                same(f"evaluations[{a.questionId}].{f}", x, y)
        if len(diffs) > 20:
            diffs.append("... (stopped at 20)")
            break
    return diffs


def _untimed(report: bytes) -> bytes:
    return re.sub(rb'"timestamp": "[^"]*"', b"", report, count=1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--questions", type=int, default=100_000, help="run size (default 100,000)")
    ap.add_argument("--dir", type=Path, help="the generated run (default: bench/load.py's, in the temp dir)")
    ap.add_argument(
        "--ascii",
        action="store_true",
        help="a run whose text is plain ASCII (bench/load.py --ascii; its own default --dir)",
    )
    ap.add_argument(
        "--work", type=Path, help="MemoryBench's set-up and outputs (default: a folder in the temp dir)"
    )
    ap.add_argument(
        "--memorybench",
        default="https://github.com/supermemoryai/memorybench.git",
        help="MemoryBench's git directory (a local clone or mirror) or a URL to clone",
    )
    ap.add_argument("--rev", default="HEAD", help="the MemoryBench revision, with a local git directory")
    ap.add_argument("--bun-version", default="1.4.5", help="the bun package from the npm registry")
    ap.add_argument(
        "--repeat",
        type=int,
        default=5,
        help="bench-nb and MemoryBench's report function, alternated (default 5)",
    )
    ap.add_argument(
        "--no-cli",
        dest="cli",
        action="store_false",
        help="skip MemoryBench's full report phase",
    )
    ap.add_argument(
        "--no-loading",
        dest="loading",
        action="store_false",
        help="skip the json.load / questions_df children",
    )
    ap.add_argument(
        "--idle",
        type=float,
        default=0,
        metavar="SECONDS",
        help="before each timed run, wait (up to SECONDS) for a second in which the CPUs are 90%% idle",
    )
    ap.add_argument(
        "--keep", action="store_true", help="keep the two report.json files (1.3 GB each at 100k)"
    )
    args = ap.parse_args()

    n = args.questions
    tmp = Path(tempfile.gettempdir())
    run_dir = args.dir or tmp / f"bench_nb-load-{n}{'-ascii' if args.ascii else ''}"
    work = args.work or tmp / "bench_nb-memorybench"
    marker = run_dir / ".complete"
    if marker.is_file() and marker.read_text() == str(n):
        print(f"reusing {run_dir}")
    else:
        t0 = time.perf_counter()
        load_bench.generate(run_dir, n, ascii=args.ascii)
        print(f"generated {run_dir} in {time.perf_counter() - t0:.0f} s")
    mb, bun = setup_memorybench(work, args.memorybench, args.rev, args.bun_version)

    dataset = mb / "data" / "benchmarks" / "locomo" / "locomo10.json"  # where MemoryBench looks
    write_dataset(dataset, n)
    mb_run = mb / "data" / "runs" / load_bench.RUN_ID
    mb_run.mkdir(parents=True, exist_ok=True)
    (mb / "report_only.ts").write_text(REPORT_ONLY_TS)
    ours_out = work / "bench_nb-report.json"
    ck_bytes = (run_dir / "checkpoint.json").stat().st_size
    print(
        f"{n:,} questions: checkpoint.json {ck_bytes / 1e9:.2f} GB; dataset {dataset.stat().st_size / 1e6:.1f} MB;"
        f" load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    )

    def fresh_checkpoint() -> None:
        for f in mb_run.iterdir():
            f.unlink()
        shutil.copyfile(run_dir / "checkpoint.json", mb_run / "checkpoint.json")

    # offline: no proxy, and a provider key that is only ever passed to a constructor
    mb_env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    mb_env["PATH"] = f"{bun.parent}{os.pathsep}{mb_env.get('PATH', '')}"
    py_env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    rows: dict[str, list[dict[str, Any]]] = {"bench_nb": [], "memorybench-module": []}
    cmd = [sys.executable, "-m", "bench_nb", "memorybench-report", str(run_dir), "--dataset", str(dataset)]
    only = [str(bun), "run", "report_only.ts", load_bench.RUN_ID]
    print("\n$ " + " ".join([*cmd, "-o", str(ours_out)]))
    print(f"$ (cd {mb} && {' '.join(only)})")
    module_out = mb_run / "report.json"
    cli = [str(bun), "run", "src/index.ts", "run", "-r", load_bench.RUN_ID, "-f", "report"]
    if args.cli:
        print(f"$ (cd {mb} && {' '.join(cli)})")
    kinds = ["bench_nb", "memorybench-module", *(["memorybench-cli"] if args.cli else [])]
    rows["memorybench-cli"] = []
    print(f"alternated, {args.repeat} times each:", flush=True)
    theirs_out = work / "memorybench-report.json"
    for i in range(args.repeat):
        ours_out.unlink(missing_ok=True)  # as MemoryBench's report.json below: no earlier file to replace
        wait_for_idle(args.idle)
        rows["bench_nb"].append(timed([*cmd, "-o", str(ours_out)], env=py_env))
        fresh_checkpoint()  # the report function only reads it; its CLI rewrites it
        wait_for_idle(args.idle)
        rows["memorybench-module"].append(timed(only, cwd=mb, env=mb_env))
        shutil.move(module_out, work / "memorybench-module-report.json")
        if args.cli:
            fresh_checkpoint()
            wait_for_idle(args.idle)
            rows["memorybench-cli"].append(timed(cli, cwd=mb, env=mb_env))
            shutil.move(module_out, theirs_out)
        for kind in kinds:
            r = rows[kind][-1]
            print(
                f"  {i + 1}. {kind:<20} wall {r['seconds']:6.2f} s  CPU {r['cpu']:6.2f} s "
                f"(user {r['user']:.2f}, system {r['sys']:.2f})  load {r['load']:.1f}"
            )
    if args.cli:
        same_run: bool | None = _untimed((work / "memorybench-module-report.json").read_bytes()) == _untimed(
            theirs_out.read_bytes()
        )
        (work / "memorybench-module-report.json").unlink()
    else:
        same_run = None
        shutil.move(work / "memorybench-module-report.json", theirs_out)
    for f in mb_run.iterdir():
        f.unlink()
    if args.loading:
        for kind in ("bare", "polars"):
            print(f"$ bench/load.py --measure {kind}")
            r = load_bench.run_child(kind, run_dir)
            rows[kind] = [{**r, "load": os.getloadavg()[0]}]

    diffs = compare_reports(ours_out, theirs_out)
    theirs_size = theirs_out.stat().st_size
    ours_size = ours_out.stat().st_size
    if not args.keep:
        ours_out.unlink()
        theirs_out.unlink()

    labels = {
        "bench_nb": "bench-nb memorybench-report",
        "memorybench-module": "MemoryBench: generateReport + saveReport",
        "memorybench-cli": "MemoryBench: run -r ID -f report (bun)",
        "bare": "bare json.load (checkpoint + results/)",
        "polars": "questions_df + memscore (polars)",
    }
    print(
        f"\n{'measurement (median; min-max)':<42} {'n':>2} {'wall s':>20} {'CPU s':>20} {'peak MiB':>9} {'load':>9}"
    )
    med: dict[str, dict[str, float]] = {}
    for kind, label in labels.items():
        if not rows.get(kind):
            continue
        rs = rows[kind]
        med[kind] = {
            k: statistics.median([r[k] for r in rs]) for k in ("seconds", "cpu", "peak_mib") if k in rs[0]
        }

        def spread(key: str, rs: list[dict[str, Any]] = rs) -> str:
            if key not in rs[0]:
                return f"{'':>20}"
            v = [r[key] for r in rs]
            return f"{statistics.median(v):>6.2f} ({min(v):.2f}-{max(v):.2f})".rjust(20)

        loads = [r["load"] for r in rs]
        print(
            f"{label:<42} {len(rs):>2} {spread('seconds')} {spread('cpu')} {med[kind]['peak_mib']:>9.0f} "
            f"{min(loads):>4.1f}-{max(loads):<4.1f}"
        )
    ours = med["bench_nb"]
    print()
    for ref in ("memorybench-module", "memorybench-cli"):
        if ref not in med:
            continue
        r = med[ref]
        print(
            f"bench_nb / {labels[ref]} (ratio of medians): CPU time {ours['cpu'] / r['cpu']:.2f}, "
            f"wall time {ours['seconds'] / r['seconds']:.2f}, memory {ours['peak_mib'] / r['peak_mib']:.2f}"
        )
    for kind in ("bench_nb", "memorybench-module"):
        user = statistics.median([r["user"] for r in rows[kind]])
        system = statistics.median([r["sys"] for r in rows[kind]])
        print(f"{labels[kind]}: median user {user:.2f} s, median system {system:.2f} s")
    for ref in kinds[1:]:
        pairs = [a["cpu"] / b["cpu"] for a, b in zip(rows["bench_nb"], rows[ref], strict=True)]
        print(
            f"bench_nb / {labels[ref]}, CPU time of each alternation: " + ", ".join(f"{p:.2f}" for p in pairs)
        )
    if "bare" in med:
        bare, pol = med["bare"], med["polars"]
        print(
            f"questions_df + memscore / bare json.load: time {pol['seconds'] / bare['seconds']:.2f}, "
            f"memory {pol['peak_mib'] / bare['peak_mib']:.2f}   ({rows['polars'][0]['info']})"
        )
    print(
        "targets: report CPU-time ratio <= 1.00 (aim 0.75); loading time ratio <= 0.20, memory ratio <= 0.33"
    )
    print(f"\nreport.json: bench_nb {ours_size / 1e9:.2f} GB, MemoryBench {theirs_size / 1e9:.2f} GB")
    if same_run is not None:
        print(
            f"MemoryBench's module alone wrote the same report.json as its CLI (but the timestamp): {same_run}"
        )
    print(f"compared: {COMPARED}")
    print("equal on all of them" if not diffs else "DIFFERENCES:\n  " + "\n  ".join(diffs))


if __name__ == "__main__":
    main()
