"""Runs -> one row per (run, question, judge): every judge's verdict, the primary one flagged; and the
questions judges split on (``disputed_questions``).

Sources, per run: ``judgments.jsonl`` (every verdict of every judge, see ``bench_nb.runformat.verdicts``), the
human labels in ``labels.jsonl`` (judge ``human``; ``unsure`` is unscored; see ``bench_nb.judges.labels``) and
the checkpoint's own verdict (``phases.evaluate``, or ``report.json``'s evaluations for a report-only run),
which is the primary judge's. The checkpoint's verdict is added when ``judgments.jsonl`` has no line for
that (question, primary judge): MemoryBench runs have only that one.

The frame's columns (name, dtype, where each comes from, what it means) are declared in
``frames.columns.JUDGMENTS``, which docs/frames.md lists. ``score`` is null exactly when ``unscored``;
``replicate`` numbers a judge's repeated verdicts on one answer from 1.

An imported run (another harness's file, ``runformat.harnesses``) has one row per verdict its file records,
replicates included; its checkpoint's verdict (the replicates' majority) is not repeated as a row.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from bench_nb.errors import Problem, RunFormatError, warn_problems
from bench_nb.frames.backend import as_polars, with_backend
from bench_nb.frames.columns import JUDGMENTS
from bench_nb.frames.questions import StoredFrames, questions_frame, stored
from bench_nb.frames.verdicts import with_verdicts
from bench_nb.gc_pause import gc_paused
from bench_nb.judges.labels import labels_path, read_labels
from bench_nb.runformat.format import decode_results, result_file_name
from bench_nb.runformat.load import Run, RunSet, Sources, load_runs
from bench_nb.runformat.spec import primary_judge
from bench_nb.runformat.verdicts import FILENAME as VERDICTS_FILE
from bench_nb.runformat.verdicts import PlainVerdict, read_plain_verdicts, read_replicates
from bench_nb.text import hit_text, one_line

JUDGMENT_SCHEMA: dict[str, Any] = JUDGMENTS.schema()


def judgments_frame(
    runs: Sources | RunSet | Run,
    *,
    dataset: str | None = None,
    strict: bool = False,
    problems: list[Problem] | None = None,
) -> pl.DataFrame:
    """One row per (run, question, judge): score, label, explanation, unscored flag, primary flag.

    Args:
        runs: run directories, globs, a runs folder, a compare manifest, or a ``RunSet``.
        dataset: the benchmark file the runs were made on (true question types, as in ``questions_df``).
        strict: raise ``RunFormatError`` on the first problem (a bad judgments line included) instead of
            skipping it, listing it in the run's ``problems`` and warning (``RunFormatWarning``).
        problems: a list that receives the problems of the runs the frame was built from, beside the frame
            (as in ``questions_df``).

    Given a loaded ``RunSet``, the frame is remembered on it as the questions frame is (keyed by its runs,
    ``dataset``, ``strict`` and the size and modification time of each run's verdict and label files, so a
    verdict written since is read): a report's failures and judges sections read the files once.

    Columns, each with its dtype, source and meaning: docs/frames.md (``judgments_df``), or in a notebook
    ``{c.name: c.description for c in bench_nb.frames.columns.JUDGMENTS.columns}``.
    """
    if isinstance(runs, StoredFrames):
        return stored(runs, "judgments", problems, dataset=dataset)
    runset = load_runs(runs, strict=strict)  # warns (RunFormatWarning) of what it skipped
    key = None
    if isinstance(runs, RunSet):
        key = (tuple(id(r) for r in runs), None if dataset is None else str(dataset), strict, _stamps(runs))
        cached = runs.judgments_frame_cache
        if cached is not None and cached[0] == key:
            if problems is not None:
                problems.extend(runs.all_problems)
            return cached[1]
    known = [len(run.problems) for run in runset]
    questions = questions_frame(runset, dataset=dataset, strict=strict)
    # One row per question of each run (the last, as a dict keyed by id would keep), in order of first
    # appearance: the types and provider of its verdicts, and the checkpoint's own verdict.
    info = (
        questions.select("run_path", *_INFO).group_by("run_path", "question_id", maintain_order=True).last()
    )
    evaluated = {
        str(key[0]): part
        for key, part in info.filter(pl.col("status") == "evaluated")
        .select("run_path", *_CHECKPOINT_VERDICT)
        .partition_by("run_path", as_dict=True, include_key=False)
        .items()
    }
    # Paused collector: a full collection would walk every loaded checkpoint for the rows made here.
    with gc_paused():
        frames = [_run_judgments(run, evaluated.get(str(run.path)), strict) for run in runset]
    # What the verdict files added (bad lines, scores out of range): the load warned of the rest already.
    warn_problems([p for run, n in zip(runset, known, strict=True) for p in run.problems[n:]])
    if problems is not None:
        problems.extend(runset.all_problems)
    # Every run's verdicts in one query: joined to their questions' provider and types.
    frame = _with_info(pl.concat(frames), info).collect() if frames else JUDGMENTS.empty()
    if isinstance(runs, RunSet):
        runs.judgments_frame_cache = (key, frame)
    return frame


def _stamps(runs: RunSet) -> tuple[tuple[int, int] | None, ...]:
    """The (size, modification time) of each run's ``judgments.jsonl`` and labels file (None: absent)."""
    out: list[tuple[int, int] | None] = []
    for run in runs:
        for path in (Path(run.path) / VERDICTS_FILE, labels_path(run.path)):
            try:
                st = path.stat()
            except OSError:
                out.append(None)
                continue
            out.append((st.st_size, st.st_mtime_ns))
    return tuple(out)


judgments_df = with_backend(judgments_frame, "judgments_df")


_VERDICT_COLUMNS: tuple[str, ...] = ("question_id", "judge", "replicate", "score", "label", "explanation")
_VERDICT_COLUMNS += ("unscored", "primary", "source")
# What a run's questions frame gives its verdict rows: types and provider, and the checkpoint's own verdict.
_INFO: tuple[str, ...] = ("question_id", "provider", "question_type", "question_type_norm", "haystack_id")
_INFO += ("status",)
_INFO += ("score", "label", "explanation", "unscored")
_CHECKPOINT_VERDICT: tuple[str, ...] = ("question_id", "score", "label", "explanation", "unscored")


def _run_judgments(run: Run, evaluated: pl.DataFrame | None, strict: bool) -> pl.LazyFrame:
    """One run's rows: every verdict in judgments.jsonl, then the checkpoint's verdict of each evaluated
    question that has no judgments line from the primary judge (``evaluated``: those questions' rows of the
    questions frame, one per question); with the run's id, path and provider."""
    primary = primary_judge(run)
    labels, label_problems = read_labels(run.path)  # beside the run: <file>.labels.jsonl for an imported one
    rows: list[tuple[Any, ...]] = []
    for (qid, judge), lab in labels.items():
        unscored = lab.score is None
        label = "unscored" if unscored else lab.label
        rows.append((qid, judge, 1, lab.score, label, f"human label: {lab.label}", unscored, False, "labels"))
    if run.imported is not None:
        _add_problems(run, label_problems, strict)
        return _of_run(run, _verdict_frame(_imported_rows(run, primary) + rows))
    # Every line at once when all are plain verdicts (the usual file), else line by line, naming bad lines.
    plain = read_plain_verdicts(run.path)
    lines, problems = ({}, []) if plain is not None else read_replicates(run.path)
    _add_problems(run, problems + label_problems, strict)
    from_file = (
        _plain_frame(plain, primary) if plain is not None else _lines_frame(run, lines, primary, strict)
    )
    in_file = plain if plain is not None else lines  # keyed by (question, judge, replicate)
    for qid, value, label, explanation, unscored in [] if evaluated is None else evaluated.iter_rows():
        if (qid, primary, 1) in in_file:
            continue
        unscored = bool(unscored)
        score = None if unscored else _score(value, run, qid, primary, strict)
        if not unscored and score is None:
            continue
        label = "unscored" if unscored else label
        rows.append((qid, primary, 1, score, label, explanation, unscored, True, "checkpoint"))
    return _of_run(run, pl.concat([from_file.lazy(), _verdict_frame(rows).lazy()]))


def _lines_frame(
    run: Run, verdicts: dict[tuple[str, str, int], dict[str, Any]], primary: str, strict: bool
) -> pl.DataFrame:
    """The rows of judgments.jsonl read line by line (``read_replicates``), a verdict at a time: a score
    outside [0, 1] is a problem and its verdict is skipped."""
    rows: list[tuple[Any, ...]] = []
    for (qid, judge, replicate), rec in verdicts.items():
        unscored = bool(rec.get("unscored")) or rec.get("score") is None or rec.get("label") == "unscored"
        score = None if unscored else _score(rec.get("score"), run, qid, judge, strict)
        if not unscored and score is None:
            continue
        label, explanation = "unscored" if unscored else rec.get("label"), rec.get("explanation")
        rows.append(
            (qid, judge, replicate, score, label, explanation, unscored, judge == primary, "judgments")
        )
    return _verdict_frame(rows)


def _plain_frame(verdicts: dict[tuple[str, str, int], PlainVerdict], primary: str) -> pl.LazyFrame:
    """The rows of judgments.jsonl read at once (``read_plain_verdicts``), column by column: the same rows
    as ``_lines_frame`` (every score is in [0, 1] there, so no verdict is skipped)."""
    plain = list(verdicts.values())
    frame = pl.DataFrame(
        {
            "question_id": [v.questionId for v in plain],
            "judge": [v.judge for v in plain],
            "replicate": [v.replicate for v in plain],
            "score": [v.score for v in plain],
            "label": [v.label for v in plain],
            "explanation": [v.explanation for v in plain],
            "unscored": [v.unscored for v in plain],
        },
        schema={c: JUDGMENT_SCHEMA[c] for c in _VERDICT_COLUMNS[:7]},
    )
    unscored = (
        pl.col("unscored").fill_null(False)
        | pl.col("score").is_null()
        | (pl.col("label") == "unscored").fill_null(False)
    )
    return (
        frame.lazy()
        .with_columns(unscored=unscored)
        .select(
            *_VERDICT_COLUMNS[:3],
            score=pl.when("unscored").then(None).otherwise("score"),
            label=pl.when("unscored").then(pl.lit("unscored")).otherwise("label"),
            explanation="explanation",
            unscored="unscored",
            primary=pl.col("judge") == primary,
            source=pl.lit("judgments", pl.Utf8),
        )
    )


def _imported_rows(run: Run, judge: str) -> list[tuple[Any, ...]]:
    """Every verdict an imported file records: one row per (question, replicate)."""
    assert run.imported is not None
    rows: list[tuple[Any, ...]] = []
    for qid, verdicts in run.imported.verdicts.items():
        for replicate, verdict in enumerate(verdicts, start=1):
            score = None if verdict is None else int(verdict)
            label = "unscored" if verdict is None else "correct" if verdict else "incorrect"
            unscored = verdict is None
            rows.append((qid, judge, replicate, score, label, None, unscored, True, "imported"))
    return rows


def _verdict_frame(rows: list[tuple[Any, ...]]) -> pl.DataFrame:
    """Verdict rows (tuples in ``_VERDICT_COLUMNS`` order) as a frame."""
    columns = [list(c) for c in zip(*rows, strict=True)] if rows else [[] for _ in _VERDICT_COLUMNS]
    return pl.DataFrame(
        dict(zip(_VERDICT_COLUMNS, columns, strict=True)),
        schema={c: JUDGMENT_SCHEMA[c] for c in _VERDICT_COLUMNS},
    )


def _of_run(run: Run, verdict_rows: pl.DataFrame | pl.LazyFrame) -> pl.LazyFrame:
    """A run's verdict rows with the run's id, path and provider (a query, run with the other runs')."""
    return verdict_rows.lazy().with_columns(
        run_id=pl.lit(run.run_id, pl.Utf8),
        run_path=pl.lit(str(run.path), pl.Utf8),
        # the run-level fields (view): no complete decode of a lenient load_runs's run
        run_provider=pl.lit(
            run.view.provider if run.view is not None else str((run.report or {}).get("provider", "")),
            pl.Utf8,
        ),
    )


def _with_info(verdicts: pl.LazyFrame, info: pl.DataFrame) -> pl.LazyFrame:
    """Verdict rows joined to their question's provider and types (``info``: one row per run and question)."""
    types = info.lazy().select(
        "run_path", "question_id", "provider", "question_type", "question_type_norm", "haystack_id"
    )
    provider = pl.col("provider")
    return verdicts.join(types, on=["run_path", "question_id"], how="left", maintain_order="left").select(
        "run_id",
        # The question's provider, else the run's (a verdict for a question the checkpoint lacks).
        provider=pl.when(provider.is_null() | (provider == "")).then("run_provider").otherwise(provider),
        question_id=pl.col("question_id"),
        question_type=pl.col("question_type"),
        question_type_norm=pl.col("question_type_norm"),
        haystack_id=pl.col("haystack_id"),
        **{c: pl.col(c) for c in _VERDICT_COLUMNS[1:]},
        run_path=pl.col("run_path"),
    )


def _score(value: Any, run: Run, qid: str, judge: str, strict: bool) -> float | None:
    """A number in [0, 1] (0 or 1 for binary judges; a fraction for graded ones, BEAM's rubric); anything else
    raises in strict mode, else becomes a problem and the verdict is skipped."""
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 1:
        return float(value)
    problem = Problem(
        str(run.path), f"score {value!r} of judge {judge!r} is not in [0, 1]; verdict skipped", "score", qid
    )
    _add_problems(run, [problem], strict)
    return None


def _add_problems(run: Run, problems: list[Problem], strict: bool) -> None:
    """Strict: raise the first problem; else add those the run does not list yet."""
    if problems and strict:
        raise RunFormatError.of(problems[0])
    known = {(p.path, p.message) for p in run.problems}
    run.problems.extend(p for p in problems if (p.path, p.message) not in known)


def judgments_given(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame``, given where judgments are wanted; a questions frame (``questions_df``: the primary judge's
    verdict only, one row per question) raises ``ValueError`` saying so: read as judgments it gave every
    question one judge, so no agreement and no dispute, without a word."""
    if "ingest_status" in frame.columns and "primary" not in frame.columns:
        raise ValueError(
            "a questions frame (questions_df: the primary judge's verdict only) where judgments are wanted: "
            "pass the runs themselves (their paths, a RunSet) or judgments_df(runs)"
        )
    return frame


def known_judges(
    frame: pl.DataFrame, judges: str | Sequence[str] | None, *, error: Callable[[str], Exception] = ValueError
) -> list[str] | None:
    """``judges`` as a list (a string is one judge), each checked against ``frame`` (a judgments frame): a
    name none of its verdicts has raises ``error`` (``ValueError``) naming it, the nearest judge and the
    judges present (a typo would otherwise filter every verdict out, and the table come back empty). None
    stays None."""
    if judges is None:
        return None
    chosen = [judges] if isinstance(judges, str) else list(judges)
    present = [str(j) for j in frame["judge"].unique(maintain_order=True).to_list() if j is not None]
    unknown = [j for j in chosen if j not in present]
    if unknown:
        from bench_nb.registry import did_you_mean

        raise error(
            f"judge {unknown[0]!r} has no verdict in these runs{did_you_mean(unknown[0], present)}; "
            f"judges present: {', '.join(present) or 'none'}"
        )
    return chosen


def disputed_questions_frame(
    data: Any,
    *,
    judges: list[str] | None = None,
    runs: RunSet | None = None,
    n_hits: int = 3,
    include_unscored: bool = False,
) -> pl.DataFrame:
    """The answers judges split on, most split first, with what a reader needs to settle them.

    A question is disputed when at least one judge scored it correct and another incorrect (with
    replicates, a judge's n-th replicate counts as a rater of its own, ``judge#n``, so a judge that split with
    itself shows here too; with
    ``include_unscored=True``, also when one judge scored it and another could not). ``split`` is the
    minority share of the scored verdicts (0.5 = an even split). Columns: ``run_id, provider, question_id,
    question_type_norm, question, ground_truth, hypothesis, context`` (the top ``n_hits`` retrieved texts),
    ``n_judges, n_correct, n_incorrect, n_unscored, split, correct_judges, incorrect_judges``, then
    ``label:<judge>`` and ``explanation:<judge>`` for each judge.

    Args:
        data: run sources (anything ``load_runs`` takes) or a ``judgments_df`` frame (its runs are read
            from ``run_path`` for the question, answer and retrieved context).
        judges: only these judges' verdicts (default all).
        runs: the loaded runs behind a ``judgments_df`` frame, so they are not read again (and their
            questions frame, already built, is reused).
        n_hits: how many retrieved items to show in ``context``.
        include_unscored: count "scored by one judge, unscored by another" as a dispute.
    """
    given = as_polars(data)
    runset: Any
    if given is not None:
        frame = judgments_given(given)
        runset = (
            runs if runs is not None else load_runs(frame["run_path"].unique(maintain_order=True).to_list())
        )
    else:
        runset = data if isinstance(data, StoredFrames) else load_runs(data)
        frame = judgments_frame(runset)
    judges = known_judges(frame, judges)
    if judges is not None:
        frame = frame.filter(pl.col("judge").is_in(judges))
    frame = with_verdicts(replicates_as_raters(frame))
    judge_names = frame["judge"].unique(maintain_order=True).to_list()
    keys = ["run_id", "question_id"]
    disputed = split_verdicts(frame, include_unscored=include_unscored).sort(
        ["split", "n_judges", "run_id", "question_id"], descending=[True, True, False, False]
    )
    # Who said what, for the disputed answers only (a small share of the verdicts).
    verdicts = frame.join(disputed.select(keys), on=keys, how="semi", maintain_order="left")
    names = verdicts.group_by(keys, maintain_order=True).agg(
        correct_judges=pl.col("judge").filter(pl.col("score") == 1).str.join(", "),
        incorrect_judges=pl.col("judge").filter(pl.col("score") == 0).str.join(", "),
    )
    disputed = disputed.join(names, on=keys, how="left", maintain_order="left")
    wide = verdicts.select(*keys, "judge", "label", "explanation")
    for j in judge_names:
        part = wide.filter(pl.col("judge") == j).select(
            *keys, pl.col("label").alias(f"label:{j}"), pl.col("explanation").alias(f"explanation:{j}")
        )
        disputed = disputed.join(part, on=keys, how="left", maintain_order="left")
    context = _question_context(runset, disputed, n_hits)
    disputed = disputed.join(context, on=["run_path", "question_id"], how="left", maintain_order="left")
    front = ["run_id", "provider", "question_id", "question_type_norm", "question", "ground_truth"]
    front += ["hypothesis", "context", "n_judges", "n_correct", "n_incorrect", "n_unscored", "split"]
    front += ["correct_judges", "incorrect_judges"]
    rest = [c for c in disputed.columns if c not in front and c != "run_path"]
    return disputed.select(*front, *rest)


disputed_questions = with_backend(disputed_questions_frame, "disputed_questions")


def split_verdicts(frame: pl.DataFrame, *, include_unscored: bool = False) -> pl.DataFrame:
    """The (run, question) pairs of a judgments frame its raters split on (the rule of ``disputed_questions``:
    one scored it correct, another incorrect; with ``include_unscored``, also scored by one and unscored by
    another), with ``provider, question_type_norm, run_path, n_judges, n_correct, n_incorrect, n_unscored`` and
    ``split`` (the minority share of the scored verdicts). Replicates count as raters when the frame went
    through ``replicates_as_raters``.

    Verdicts are read by the one rule every metric applies (``frames.verdicts.with_verdicts``): a score that
    is null or NaN is no verdict (``correct`` is read when there is no score), an evaluated verdict without
    one is unscored, and a graded score (0.5) is a scored verdict, neither correct nor incorrect: it counts
    in the scored verdicts (``split``'s denominator, and "scored by one" with ``include_unscored``), and a
    dispute still needs a 1 and a 0."""
    frame = with_verdicts(frame)
    counts = frame.group_by(["run_id", "question_id"], maintain_order=True).agg(
        pl.col("provider").first(),
        pl.col("question_type_norm").first(),
        pl.col("run_path").first(),
        n_judges=pl.len().cast(pl.Int64),
        n_correct=(pl.col("score") == 1).sum().cast(pl.Int64),
        n_incorrect=(pl.col("score") == 0).sum().cast(pl.Int64),
        n_unscored=pl.col("unscored").sum().cast(pl.Int64),
        n_scored=pl.col("score").is_not_null().sum().cast(pl.Int64),
    )
    scored = pl.col("n_scored")
    split_on = (pl.col("n_correct") > 0) & (pl.col("n_incorrect") > 0)
    if include_unscored:
        split_on = split_on | ((pl.col("n_unscored") > 0) & (scored > 0))
    return (
        counts.filter(split_on)
        .with_columns(split=pl.min_horizontal("n_correct", "n_incorrect") / scored)
        .drop("n_scored")
    )


def _question_context(runset: Any, disputed: pl.DataFrame, n_hits: int) -> pl.DataFrame:
    """run_path, question_id -> question, ground truth, answer, and the top retrieved texts."""
    wanted = disputed.select("run_path", "question_id").unique()
    # The run set's questions frame (built once per loaded RunSet, see questions_frame), disputed rows only.
    questions = (
        questions_frame(runset)
        .select("run_id", "run_path", "question_id", "question", "ground_truth", "hypothesis")
        .join(wanted, on=["run_path", "question_id"], how="semi")
    )
    context = [
        "\n".join(f"{i}. {one_line(text, 500)}" for i, text in enumerate(texts, start=1))
        for texts in retrieved_texts_of(runset, questions, n_hits)
    ]
    return questions.drop("run_id").with_columns(context=pl.Series(context, dtype=pl.Utf8))


def retrieved_texts(run: Run, qid: str, n_hits: int | None = 5) -> list[str]:
    """The texts of the top ``n_hits`` (None: all) results a run retrieved for a question (empty when not recorded)."""
    return [hit_text(h) for h in search_hits(run, qid, n_hits)]


def retrieved_texts_of(runs: Any, keys: pl.DataFrame, n_hits: int | None = None) -> list[list[str]]:
    """``retrieved_texts`` for each row of ``keys`` (``run_id``, ``question_id``; with ``run_path``, that
    picks the run of a ``RunSet``): the first ``n_hits`` texts (None: all), in rank order. ``runs``: a loaded
    ``RunSet`` or a run store (its hits table, read for those questions only)."""
    if isinstance(runs, StoredFrames):
        return runs.stored_hit_texts(keys.select("run_id", "question_id"), n_hits)
    by_key = "run_path" if "run_path" in keys.columns else "run_id"
    found = {str(run.path) if by_key == "run_path" else run.run_id: run for run in runs}
    out: list[list[str]] = []
    for key, qid in keys.select(by_key, "question_id").iter_rows():
        run = found.get(str(key))
        out.append([] if run is None else retrieved_texts(run, qid, n_hits))
    return out


def search_hits(run: Run, qid: str, n: int | None = None) -> list[Any]:
    """The question's raw search results, the first ``n`` (None: all): checkpoint (none, ``[]``, included),
    else results/<qid>.json, else report.json."""
    if run.checkpoint is not None:
        q = run.checkpoint.questions.get(qid)
        if q is not None and q.phases.search.results is not None:  # the file would repeat them
            return decode_results(q.phases.search.results[:n])  # only those asked for decoded
        recorded = q.phases.search.resultFile if q is not None else None
        name = recorded.replace("\\", "/").rsplit("/", 1)[-1] if recorded else result_file_name(qid)
        path = os.path.join(run.path, "results", name)  # not pathlib: a report looks for thousands of files
        if os.path.isfile(path):
            try:
                results = json.loads(Path(path).read_text(encoding="utf-8")).get("results")
            except (OSError, ValueError, AttributeError):
                return []
            return results[:n] if isinstance(results, list) else []
        return []
    for ev in (run.report or {}).get("evaluations", []):
        if str(ev.get("questionId")) == qid:
            results = ev.get("searchResults")
            return results[:n] if isinstance(results, list) else []
    return []


def collapse_replicates(frame: pl.DataFrame) -> pl.DataFrame:
    """One verdict per (run, question, judge): the majority of the judge's replicates.

    A judge that graded an answer several times (``replicate`` > 1) gets the verdict most of its replicates
    gave, as EverMemOS's majority vote does; a tie, or no scored replicate, is unscored. Agreement between
    judges and paired tests read judges this way; ``replicate_summary`` reads the replicates themselves.
    A frame without a ``replicate`` column, or with one replicate per verdict, is returned as it is.
    """
    if "replicate" not in frame.columns:
        return frame
    keys = [c for c in ("run_id", "question_id", "judge") if c in frame.columns]
    if not frame.select(pl.struct(keys).is_duplicated().any()).item():
        return frame
    scored = pl.col("score").is_not_null()
    if "unscored" in frame.columns:
        scored = scored & ~pl.col("unscored").fill_null(False)
    yes = (scored & (pl.col("score") == 1)).sum()
    no = (scored & (pl.col("score") == 0)).sum()
    others = [c for c in frame.columns if c not in (*keys, "score", "label", "unscored", "replicate")]
    collapsed = frame.group_by(keys, maintain_order=True).agg(
        *[pl.col(c).first() for c in others], replicate=pl.len().cast(pl.Int64), _yes=yes, _no=no
    )
    score = pl.when(pl.col("_yes") > pl.col("_no")).then(1).when(pl.col("_no") > pl.col("_yes")).then(0)
    collapsed = collapsed.with_columns(score=score.otherwise(None).cast(frame.schema["score"]))
    if "unscored" in frame.columns:
        collapsed = collapsed.with_columns(unscored=pl.col("score").is_null())
    if "label" in frame.columns:
        collapsed = collapsed.with_columns(
            label=pl.when(pl.col("score") == 1)
            .then(pl.lit("correct"))
            .when(pl.col("score") == 0)
            .then(pl.lit("incorrect"))
            .otherwise(pl.lit("unscored"))
        )
    return collapsed.select(frame.columns).drop("replicate")


def replicates_as_raters(frame: pl.DataFrame) -> pl.DataFrame:
    """A judge's replicates as raters of their own: replicate 1 keeps the judge's name, replicate n > 1 is
    ``<judge>#<n>`` (for tables that need one verdict per rater, such as the disputed questions)."""
    if "replicate" not in frame.columns or frame.filter(pl.col("replicate") > 1).is_empty():
        return frame
    many = pl.col("replicate") > 1
    return frame.with_columns(
        judge=pl.when(many)
        .then(pl.col("judge") + pl.lit("#") + pl.col("replicate").cast(pl.Utf8))
        .otherwise(pl.col("judge"))
    )
