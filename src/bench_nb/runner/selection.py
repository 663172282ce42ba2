"""Which questions a run asks: all, the first N, the first N of each type, or a given list of ids.

Selections are deterministic (benchmark order, no randomness), so rerunning a command asks the same
questions and every provider of a comparison gets the same set.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from bench_nb.errors import BenchNbError, RunFormatError
from bench_nb.records import Benchmark, Question
from bench_nb.registry import did_you_mean
from bench_nb.runformat.format import Sampling

NO_QUESTIONS = "the benchmark has no questions to run"


def select_questions(
    benchmark: Benchmark,
    *,
    limit: int | None = None,
    per_type: int | None = None,
    question_ids: Sequence[str] | None = None,
    exclude: str | Sequence[str] | None = None,
) -> tuple[list[Question], Sampling]:
    """The target questions, in benchmark order, and MemoryBench's ``sampling`` record for them; none is a
    ``RunFormatError`` (``NO_QUESTIONS``), as a run and its dry run refuse it.

    Args:
        benchmark: the loaded benchmark.
        exclude: question types left out first (``exclude_types``).
        limit: keep the first ``limit`` questions.
        per_type: keep the first ``per_type`` questions of each raw question type.
        question_ids: keep exactly these questions (every id must exist).
    """
    chosen = [limit is not None, per_type is not None, question_ids is not None]
    if sum(chosen) > 1:
        raise BenchNbError("choose one of limit, per_type (--sample) and question_ids, not several")
    questions = list((exclude_types(benchmark, exclude) if exclude else benchmark).questions)
    sampling = Sampling(mode="full")
    if limit is not None:
        if limit < 1:
            raise BenchNbError(f"limit must be at least 1, not {limit}")
        questions, sampling = questions[:limit], Sampling(mode="limit", limit=limit)
    elif per_type is not None:
        if per_type < 1:
            raise BenchNbError(f"--sample must be at least 1 per type, not {per_type}")
        counts: dict[str, int] = {}
        out = []
        for q in questions:
            n = counts.get(q.question_type, 0)
            if n < per_type:
                counts[q.question_type] = n + 1
                out.append(q)
        questions, sampling = out, Sampling(mode="sample", sampleType="consecutive", perCategory=per_type)
    elif question_ids is not None:
        by_id = {q.question_id: q for q in questions}
        missing = [qid for qid in question_ids if qid not in by_id]
        if missing:
            raise BenchNbError(
                f"benchmark {benchmark.name!r} has no question {missing[0]!r}"
                + (f" (and {len(missing) - 1} more missing)" if len(missing) > 1 else "")
            )
        wanted = set(question_ids)
        questions = [q for q in questions if q.question_id in wanted]
    if not questions:
        raise RunFormatError(benchmark.name, NO_QUESTIONS)
    return questions, sampling


def exclude_types(benchmark: Benchmark, types: str | Sequence[str]) -> Benchmark:
    """``benchmark`` without the questions of ``types`` (comma-separated or a list), matched case-insensitively
    against each question's raw type and its normalised type: ``adversarial`` (LoCoMo's category 5, whose
    normalised type is ``abstention``) leaves LoCoMo's 1,540 questions of categories 1-4, the set the
    literature scores.

    Raises:
        BenchNbError: a type the benchmark does not have, naming the nearest one and the types it has.
    """
    wanted = [t.strip() for t in (types.split(",") if isinstance(types, str) else types) if t.strip()]
    known = sorted({t for q in benchmark.questions for t in (q.question_type, q.norm_type)})
    lowered = {t.lower() for t in known}
    for name in wanted:
        if name.lower() not in lowered:
            hint = did_you_mean(name, known, cutoff=0.5)
            raise BenchNbError(
                f"benchmark {benchmark.name!r} has no question type {name!r}{hint}; its types: {', '.join(known)}"
            )
    dropped = {t.lower() for t in wanted}
    kept = tuple(
        q for q in benchmark.questions if not ({q.question_type.lower(), q.norm_type.lower()} & dropped)
    )
    return dataclasses.replace(benchmark, questions=kept)
