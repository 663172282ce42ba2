"""Every frame's columns, declared once: name, dtype, where the value comes from, what it means.

The frames' schemas are built from these tables (``QUESTION_SCHEMA = QUESTIONS.schema()``, and likewise
``JUDGMENT_SCHEMA``, ``HARNESS_SCHEMA``, ``HITS_SCHEMA``, the runs frame's and the run store's runs table), in
the order declared here: that order is the frames' column order, and the Parquet store's. docs/frames.md's
column lists are generated from them::

    python -m bench_nb.frames.columns --write docs/frames.md    # rewrites the generated part of the page
    python -m bench_nb.frames.columns                           # prints it

tests/frames/test_columns.py fails when the page differs from what these tables generate, and checks that
frames built from real runs have exactly their table's columns, in order, with its dtypes.

A column's ``source`` says where its value comes from (``SOURCES``): the builders read one value per run for
``run`` columns, the question's record for ``question`` columns, leave ``errata`` columns null unless
``errata=`` is given, and so on.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import polars as pl

from bench_nb.runformat.format import PHASES

Source = Literal["run", "question", "taxonomy", "derived", "errata", "verdicts", "store"]
SOURCES: dict[str, str] = {
    "run": "the run's own record (the top of its checkpoint or report.json, its directory, its settings): "
    "one value per run",
    "question": "the question's record in the run (its checkpoint entry: phases and `benchNb`; or its "
    "evaluation in report.json)",
    "taxonomy": "worked out from the question's id and recorded type (`runformat.question_types`, "
    "`bench_nb.taxonomy`); the benchmark file given as `dataset=` wins",
    "derived": "computed by the frame from the row's other values",
    "errata": "the answer-key errata given as `errata=` (`frames.errata`); null without",
    "verdicts": "one verdict: a line of judgments.jsonl or labels.jsonl, the checkpoint's own verdict, or an "
    "imported file's",
    "store": "the run store's own bookkeeping (`frames.store`)",
}

_STR, _INT, _FLT, _BOOL = pl.Utf8, pl.Int64, pl.Float64, pl.Boolean


@dataclass(frozen=True)
class Column:
    """One column: its name, polars dtype, where its value comes from and what it means."""

    name: str
    dtype: Any
    source: Source
    description: str


@dataclass(frozen=True)
class Group:
    """Columns that belong together (the documented column list shows them under ``name``)."""

    name: str
    columns: tuple[Column, ...]


@dataclass(frozen=True)
class Frame:
    """A frame's columns in order, grouped; ``schema()`` is the frame's polars schema."""

    name: str  # what docs/frames.md calls it: the public function or the store file
    rows: str  # what one row is
    groups: tuple[Group, ...]
    schema_name: str  # the module constant holding ``schema()``, named in the docs

    @property
    def columns(self) -> tuple[Column, ...]:
        """Every column of the frame, in order, its groups flattened."""
        return tuple(c for g in self.groups for c in g.columns)

    def schema(self, source: Source | None = None) -> dict[str, Any]:
        """Column name -> polars dtype, in order (those from ``source`` only, when given)."""
        return {c.name: c.dtype for c in self.columns if source is None or c.source == source}

    def empty(self) -> pl.DataFrame:
        """The frame of no rows."""
        return pl.DataFrame(schema=self.schema())


def _group(name: str, *columns: Column | tuple[str, Any, Source, str]) -> Group:
    return Group(name, tuple(c if isinstance(c, Column) else Column(*c) for c in columns))


# questions_df's retrieval columns: name, dtype, the checkpoint's retrievalMetrics field it is read from, meaning
RETRIEVAL = (
    ("hit_at_k", _FLT, "hitAtK", "a hit among the top k"),
    ("precision_at_k", _FLT, "precisionAtK", "precision of the top k"),
    ("recall_at_k", _FLT, "recallAtK", "recall of the top k"),
    ("f1_at_k", _FLT, "f1AtK", "F1 of the top k"),
    ("mrr", _FLT, "mrr", "reciprocal rank of the first relevant hit"),
    ("ndcg", _FLT, "ndcg", "normalised discounted cumulative gain"),
    ("k", _INT, "k", "the k the metrics were computed at"),
)

QUESTIONS = Frame(
    "questions_df",
    "one row per (run, question)",
    (
        _group(
            "identity",
            ("run_id", _STR, "run", "the run's id"),
            (
                "harness",
                _STR,
                "run",
                "who wrote the run: `bench_nb`, `memorybench`, or the harness an imported file came from "
                "(`evermemos`, `zep`, `mem0`)",
            ),
            ("provider", _STR, "run", "the memory provider"),
            ("benchmark", _STR, "run", "the benchmark"),
            ("judge", _STR, "run", "the run's judge (`unknown` when an imported file does not name it)"),
            ("answering_model", _STR, "run", "the model that answered"),
            ("question_id", _STR, "question", "the question's id"),
            ("question", _STR, "question", "the question's text"),
            ("ground_truth", _STR, "question", "the gold answer"),
            (
                "question_date",
                _STR,
                "question",
                "the date the question is asked on, when the benchmark has one",
            ),
            ("container_tag", _STR, "question", "the provider's container the question's haystack went into"),
            (
                "haystack_id",
                _STR,
                "taxonomy",
                "the cluster: the LoCoMo conversation, the BEAM chat, the LongMemEval question's own haystack "
                "(as the run recorded it, else as `bench_nb.benchmarks.registry.haystack_id_of` derives it)",
            ),
        ),
        _group(
            "types",
            ("question_type", _STR, "question", "the raw type, as the run wrote it"),
            (
                "question_type_norm",
                _STR,
                "taxonomy",
                "the normalised type (`bench_nb.taxonomy`): the dataset's, else the run's `benchNb.normType`, "
                "else derived from the raw type",
            ),
            ("true_category", _INT, "taxonomy", "LoCoMo's true category id, when known"),
            (
                "type_source",
                _STR,
                "taxonomy",
                "where the normalised type came from: `run`, `dataset` or `memorybench-label`",
            ),
        ),
        _group(
            "phases",
            *(
                (
                    f"{p}_status",
                    _STR,
                    "question",
                    f"the {p} phase's status: `pending`, `in_progress`, `completed` or `failed`",
                )
                for p in PHASES
            ),
            *(
                (
                    f"{p}_ms",
                    _FLT,
                    "question",
                    f"the {p} phase's duration in milliseconds; null when not timed",
                )
                for p in PHASES
            ),
            (
                "total_ms",
                _FLT,
                "derived",
                "the sum of the five durations, added in phase order from 0 (MemoryBench's definition; a "
                "report-only run: the report's own total); null for an imported run (not timed)",
            ),
        ),
        _group(
            "outcome",
            (
                "status",
                _STR,
                "derived",
                "`evaluated`, `failed`, `in_progress` or `pending`, from the phase statuses",
            ),
            ("failed_phase", _STR, "derived", "the first phase that failed; null when none did"),
            (
                "error",
                _STR,
                "derived",
                "the failed phase's error (`(no error message recorded)` when it has none); null when none failed",
            ),
            ("hypothesis", _STR, "question", "the answer given"),
            (
                "score",
                _FLT,
                "question",
                "the primary judge's score: 0 or 1, a fraction in [0, 1] when `graded`; null unless evaluated",
            ),
            ("label", _STR, "question", "the primary judge's label"),
            ("explanation", _STR, "question", "the primary judge's explanation"),
            (
                "unscored",
                _BOOL,
                "derived",
                "evaluated but not scored (the judge said it cannot score it, or no score was recorded)",
            ),
            ("correct", _BOOL, "derived", "a score of 1; null unless evaluated and scored"),
            (
                "graded",
                _BOOL,
                "question",
                "a fractional score from a rubric judge (BEAM): `score` is in [0, 1] and `correct` means a "
                "score of 1",
            ),
            (
                "published_score",
                _FLT,
                "question",
                "a graded answer's score as the benchmark's official code reads it; null otherwise",
            ),
        ),
        _group(
            "tokens",
            (
                "prompt_tokens",
                _INT,
                "question",
                "tokens of the answer prompt with the retrieved context (`promptTokens`)",
            ),
            (
                "base_prompt_tokens",
                _INT,
                "question",
                "tokens of the same prompt built with no hits (`basePromptTokens`)",
            ),
            (
                "context_tokens",
                _INT,
                "question",
                "the retrieved context's tokens, the difference (`contextTokens`: MemScore's tokens)",
            ),
            (
                "tokenizer",
                _STR,
                "question",
                "the tokenizer that counted them (the question's, else the run's)",
            ),
            (
                "report_context_tokens",
                _INT,
                "run",
                "a run that has only report.json (no tokens per question): the report's own MemScore tokens "
                "(`memscoreComponents.contextTokens`) on each of its rows; null elsewhere",
            ),
        ),
        _group(
            "usage (model calls, list prices)",
            ("answer_input_tokens", _INT, "question", "the answerer's input tokens (`benchNb.usage.answer`)"),
            ("answer_output_tokens", _INT, "question", "the answerer's output tokens"),
            (
                "answer_cost_usd",
                _FLT,
                "question",
                "the answer's cost; 0 when the run's answerer calls no model (extractive), null when unknown "
                "(no price, or an answerer not known to call none)",
            ),
            (
                "judge_cost_usd",
                _FLT,
                "question",
                "the judges' cost; a judge that calls no model (f1, contains, ...) counts 0, null as soon as one judge's "
                "cost is unknown",
            ),
            (
                "cost_usd",
                _FLT,
                "derived",
                "answer and judges together; a part that calls no model costs 0, null only as soon as one part is "
                "unknown (an unpriced call, an imported run that records no cost)",
            ),
            (
                "memory_calls",
                _FLT,
                "question",
                "the provider's own model calls (`benchNb.usage.memory`): this question's search plus its "
                "share of its container's ingest (the ingest's calls / `sharedBy`, so a run's sum is its "
                "total); null when the provider does not report them",
            ),
            (
                "memory_input_tokens",
                _FLT,
                "question",
                "those calls' input tokens, the ingest's shared as the calls are; null when not reported",
            ),
            ("memory_output_tokens", _FLT, "question", "those calls' output tokens, shared the same way"),
            (
                "memory_cost_usd",
                _FLT,
                "question",
                "those calls' cost, shared the same way; 0 for a provider that reports it calls no model, null "
                "when it does not report or one call has no price",
            ),
            (
                "total_cost_usd",
                _FLT,
                "derived",
                "answer, judges and memory together; null when the provider does not report its calls or "
                "one part is unknown (`cost_usd` keeps its meaning: answer and judges)",
            ),
        ),
        _group(
            "retrieval",
            ("search_result_count", _INT, "question", "how many results the search returned"),
            *(
                (name, dtype, "question", f"{what} (`retrievalMetrics.{attr}`)")
                for name, dtype, attr, what in RETRIEVAL
            ),
            (
                "retrieval_level",
                _STR,
                "question",
                "`message` or `session`: what the metrics were computed against (the question's, else the "
                "run's declared level; see docs/runner.md)",
            ),
        ),
        _group(
            "provenance",
            ("source", _STR, "run", "`checkpoint` or `report`: what the row was read from"),
            (
                "custom_prompt",
                _BOOL,
                "question",
                "graded with a provider's own prompt (the question's or its run's): not like the others",
            ),
            (
                "settings_fingerprint",
                _STR,
                "run",
                "what the run was run under, hashed (`runformat.spec.RunSpec.fingerprint`); equal for "
                "runs made under the same settings",
            ),
            ("run_path", _STR, "run", "the run's directory"),
        ),
        _group(
            "answer key (with `errata=`, else null)",
            ("gold_error_type", _STR, "errata", "the errata's error type for the question"),
            ("gold_corrected", _STR, "errata", "the corrected answer"),
            ("gold_wrong", _BOOL, "errata", "the gold answer itself is wrong"),
        ),
    ),
    "frames.questions.QUESTION_SCHEMA",
)

RUN_COUNTS = ("completed", "failed", "pending", "in_progress")
RUNS = Frame(
    "runs_df",
    "one row per run",
    (
        _group(
            "run",
            ("run_id", _STR, "run", "the run's id"),
            ("run_path", _STR, "run", "the run's directory"),
            ("source", _STR, "run", "`checkpoint` or `report`: what the run was read from"),
            ("provider", _STR, "run", "the memory provider"),
            ("benchmark", _STR, "run", "the benchmark"),
            ("judge", _STR, "run", "the run's judge"),
            ("answering_model", _STR, "run", "the model that answered"),
            ("status", _STR, "run", "the run's status (`completed` for a report-only run)"),
            ("created_at", _STR, "run", "when it was created (a report-only run: the report's timestamp)"),
            ("updated_at", _STR, "run", "when it was last written"),
            ("target_questions", _INT, "run", "the questions it was asked to run"),
            ("questions", _INT, "derived", "the questions it has"),
            ("k", _INT, "run", "the search's k (`benchNb.k`; null when not recorded)"),
            ("written_by", _STR, "run", "the harness that wrote it (`harness` in `questions_df`)"),
            ("problems", _INT, "derived", "the problems met reading it (lenient loading)"),
            (
                "settings_fingerprint",
                _STR,
                "run",
                "what the run was run under, hashed (as in `questions_df`)",
            ),
        ),
        _group(
            "questions per phase status",
            *(
                (f"{p}_{st}", _INT, "derived", f"questions whose {p} phase is `{st}`")
                for p in PHASES
                for st in RUN_COUNTS
            ),
        ),
    ),
    "frames.questions.RUN_SCHEMA",
)

JUDGMENTS = Frame(
    "judgments_df",
    "one row per (run, question, judge, replicate)",
    (
        _group(
            "question",
            ("run_id", _STR, "run", "the run's id"),
            ("provider", _STR, "question", "the question's provider (`questions_df`), else the run's"),
            ("question_id", _STR, "verdicts", "the question judged"),
            ("question_type", _STR, "question", "its raw type (`questions_df`)"),
            ("question_type_norm", _STR, "taxonomy", "its normalised type (`questions_df`)"),
            (
                "haystack_id",
                _STR,
                "question",
                "its haystack, the cluster the paired tests resample (`questions_df`); null for a verdict on a "
                "question the run does not hold",
            ),
        ),
        _group(
            "verdict",
            ("judge", _STR, "verdicts", "the judge (`human` for labels.jsonl)"),
            (
                "replicate",
                _INT,
                "verdicts",
                "numbers a judge's repeated verdicts on one answer from 1 (EverMemOS's `judgment_1..3`; "
                "`--judge-replicates N`); a judge that graded once has replicate 1 only",
            ),
            (
                "score",
                _FLT,
                "verdicts",
                "0 or 1 (a fraction in [0, 1] for a graded judge: BEAM); null exactly when `unscored`",
            ),
            ("label", _STR, "verdicts", "the judge's label (`unscored` when unscored)"),
            ("explanation", _STR, "verdicts", "the judge's explanation"),
            ("unscored", _BOOL, "verdicts", "the judge gave no score (a human's `unsure` included)"),
            ("primary", _BOOL, "derived", "the judge is the run's primary judge"),
            (
                "source",
                _STR,
                "verdicts",
                "where the verdict was read: `judgments`, `labels`, `checkpoint` or `imported`",
            ),
            ("run_path", _STR, "run", "the run's directory"),
        ),
    ),
    "frames.judgments.JUDGMENT_SCHEMA",
)

HARNESSES = Frame(
    "harness_frame",
    "one row per run: who wrote it (`tables.table_harnesses` shows them)",
    (
        _group(
            "run",
            ("run_id", _STR, "run", "the run's id"),
            ("harness", _STR, "run", "who wrote it (as in `questions_df`)"),
            ("imported", _BOOL, "run", "read from another harness's results file"),
            (
                "judge",
                _STR,
                "run",
                "the primary judge (an imported file's, else `benchNb.primaryJudge`, else the run's judge); "
                "null when not recorded",
            ),
            (
                "answer_prompt",
                _STR,
                "run",
                "the answer prompt (its hash, `benchNb.promptHashes.answer`, or as an imported file names it)",
            ),
            ("answering_model", _STR, "run", "the model that answered; null when not recorded"),
            (
                "replicates",
                _INT,
                "verdicts",
                "the most verdicts the primary judge gave one answer (1 without replicates)",
            ),
            (
                "not_recorded",
                pl.List(_STR),
                "run",
                "what the run's file does not record (`latency`, `tokens`, or `tokens per question` when it states "
                "only run totals, `retrieved context`); empty when it records all",
            ),
            (
                "questions_checked_against",
                _STR,
                "run",
                "the dataset an imported file's question texts were checked against; null when not checked",
            ),
            (
                "answer_input_tokens_run_total",
                _INT,
                "run",
                "the answerer's input tokens over the whole run, as an imported file states them and only as a "
                "total (EverMemOS's `metadata.total_prompt_tokens`): not split per question; null when not stated",
            ),
            (
                "answer_output_tokens_run_total",
                _INT,
                "run",
                "the answerer's output tokens over the whole run, stated the same way "
                "(`metadata.total_completion_tokens`); null when not stated",
            ),
        ),
    ),
    "frames.harnesses.HARNESS_SCHEMA",
)

HITS = Frame(
    "hits.parquet (run store)",
    "one row per search result of each question",
    (
        _group(
            "hit",
            ("run_id", _STR, "run", "the run's id"),
            ("question_id", _STR, "question", "the question searched for"),
            ("rank", _INT, "question", "the result's rank, from 1"),
            ("text", _STR, "question", "the result's text, as reports show it"),
            ("score", _FLT, "question", "the result's own `score`, when numeric"),
            ("raw", _STR, "question", "the result as JSON"),
        ),
    ),
    "frames.store.HITS_SCHEMA",
)

FAILURES = Frame(
    "failure_reasons",
    "one row per wrong answer (a verdict below full marks) of each run",
    (
        _group(
            "question",
            ("run_id", _STR, "run", "the run's id"),
            ("provider", _STR, "run", "the memory provider"),
            ("question_id", _STR, "question", "the question's id"),
            ("question_type_norm", _STR, "taxonomy", "its normalised type (`questions_df`)"),
            ("haystack_id", _STR, "question", "its haystack (`questions_df`)"),
            ("score", _FLT, "verdicts", "the primary judge's score, below 1"),
        ),
        _group(
            "evidence",
            ("gold_wrong", _BOOL, "errata", "the gold answer itself is wrong (null without `errata=`)"),
            (
                "judge_disputed",
                _BOOL,
                "verdicts",
                "the judges split on the answer (one correct, another incorrect: `disputed_questions`' rule)",
            ),
            (
                "hit_at_k",
                _FLT,
                "question",
                "the gold evidence among the results (`questions_df`); null: not recorded",
            ),
            ("retrieval_level", _STR, "question", "what `hit_at_k` was computed against (`questions_df`)"),
            (
                "context_cut",
                _BOOL,
                "question",
                "the provider cut the context to a budget (its hits' `raw.contextCut`: full-context's "
                "`max_context_tokens`)",
            ),
            (
                "reanswer_score",
                _FLT,
                "question",
                "the primary judge's score of the answer given from the gold evidence alone "
                "(`reanswer.jsonl`, `bench-nb reanswer`); null: not re-answered",
            ),
        ),
        _group(
            "reason",
            (
                "failure_reason",
                _STR,
                "derived",
                "the first that holds of `answer_key_erratum`, `judge_dispute`, `truncation`, `retrieval_miss`, "
                '`reader_error_confirmed`, `reader_error`, `unknown` (docs/statistics.md, "Why answers were '
                'wrong")',
            ),
        ),
    ),
    "metrics.failures.FAILURE_SCHEMA",
)

STORE_RUNS = Frame(
    "runs.parquet (run store)",
    "one row per run: `runs_df`'s columns, then these",
    (
        _group(
            "store",
            ("partition", _STR, "store", "the run's partition key (its id, percent-encoded)"),
            ("version", _STR, "store", "the name of the run's current files"),
            (
                "fingerprint",
                _STR,
                "store",
                "the names, sizes and modification times of the run's files, the dataset given and the "
                "store's format version: a run whose fingerprint is unchanged is not read again",
            ),
            ("exported_at", _STR, "store", "when the run was exported"),
            ("dataset", _STR, "store", "the dataset given at export (null: none)"),
            (
                "source_path",
                _STR,
                "store",
                "the resolved path the export was given for the run (its directory, or a harness's file or "
                "folder): what the incremental check looks up",
            ),
        ),
    ),
    "frames.store.STORE_COLUMNS",
)

FRAMES: tuple[Frame, ...] = (QUESTIONS, RUNS, JUDGMENTS, HARNESSES, HITS, STORE_RUNS, FAILURES)

BEGIN = "<!-- generated by `python -m bench_nb.frames.columns --write docs/frames.md`: do not edit below -->"
END = "<!-- end of generated columns -->"


def markdown() -> str:
    """The documented column lists: a table per frame, and what each source means."""
    out = ["Where a value comes from (`from`):", ""]
    out += [f"- `{name}`: {what}" for name, what in SOURCES.items()]
    for frame in FRAMES:
        out += [
            "",
            f"### `{frame.name}`",
            "",
            f"{frame.rows[0].upper()}{frame.rows[1:]} (`{frame.schema_name}`).",
            "",
        ]
        out += ["| group | column | dtype | from | meaning |", "|---|---|---|---|---|"]
        for group in frame.groups:
            for i, c in enumerate(group.columns):
                label = group.name if i == 0 else ""
                what = c.description.replace("|", "\\|")
                out.append(f"| {label} | `{c.name}` | {c.dtype} | {c.source} | {what} |")
    return "\n".join(out) + "\n"


def generated_part(text: str, path: str = "docs/frames.md") -> str:
    """What a page holds between the markers."""
    if BEGIN not in text or END not in text:
        raise ValueError(f"{path} lacks the generated columns' markers ({BEGIN!r} ... {END!r})")
    return text.split(BEGIN, 1)[1].split(END, 1)[0].strip("\n") + "\n"


def with_generated(text: str, path: str = "docs/frames.md") -> str:
    """The page with its generated part replaced by ``markdown()``."""
    generated_part(text, path)  # the markers are there
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    return f"{head}{BEGIN}\n\n{markdown()}\n{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    """Print the frames' column lists as markdown, or with ``--write PAGE`` replace the generated part of
    PAGE."""
    parser = argparse.ArgumentParser(
        prog="python -m bench_nb.frames.columns",
        description="Print (or write into a page) the frames' columns.",
    )
    parser.add_argument("--write", metavar="PAGE", help="replace the generated part of PAGE (docs/frames.md)")
    args = parser.parse_args(argv)
    if args.write is None:
        sys.stdout.write(markdown())
        return 0
    page = Path(args.write)
    page.write_text(with_generated(page.read_text(encoding="utf-8"), args.write), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
