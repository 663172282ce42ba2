"""Errata for a benchmark's answer key: which gold answers are wrong, how, and what the right answer is.

LoCoMo's answer key is wrong for 99 of its 1,540 scored questions (the public LoCoMo audit, dial481/locomo-audit):
a perfect system tops out at 93.57%. ``load_errata`` reads the audit's ``errors.json`` (downloaded from the
audit's repository, pinned by sha256 in LoCoMo's registration: ``registry.ErrataSpec``) or a file in bench_nb's
own errata format, which any team can write for its benchmark (docs/benchmarks.md, "Errata"):

    {"format": "bench_nb-errata/1", "benchmark": "locomo",
     "entries": [{"question_id": "conv-26-q43", "error_type": "AMBIGUOUS", "gold_wrong": true,
                  "corrected_answer": "...", "question": "...", "reasoning": "..."}]}

``gold_wrong`` says whether the gold answer itself is wrong (the audit's ``WRONG_CITATION`` entries have a right
answer and wrong evidence ids: not wrong gold). Question ids are the benchmark's ids as bench_nb names them;
the audit's ``locomo_<conv>_qa<i>`` ids are mapped to them (``benchmarks.locomo.locomo_id_from_numbered``).
"""

from __future__ import annotations

import collections
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench_nb.benchmarks.download import DatasetWarning, check_sha256, sha256_file
from bench_nb.benchmarks.jsonfile import read_json
from bench_nb.benchmarks.locomo import locomo_id_from_numbered
from bench_nb.benchmarks.registry import DEFAULT_CACHE_DIR, ErrataSpec, _cached, get_errata_spec
from bench_nb.errors import DatasetError, Problem

ERRATA_FORMAT = "bench_nb-errata/1"
# The audit's error types whose gold answer is right (only its evidence ids are wrong).
AUDIT_GOLD_RIGHT = frozenset({"WRONG_CITATION"})


@dataclass(frozen=True)
class Erratum:
    """One known error in the answer key.

    Attributes:
        question_id: the benchmark's question id, as bench_nb names it (``conv-26-q43``).
        error_type: the kind of error, as the errata file names it (``HALLUCINATION``, ``TEMPORAL_ERROR``...).
        gold_wrong: the gold answer itself is wrong (False: e.g. only its cited evidence is).
        corrected: the right answer, when the file gives one.
        question, category: as the file gives them.

    The file's other fields (the gold answer it quotes, its reasoning, its own question id) are for people
    auditing the file, which ``Errata.source`` and ``Errata.sha256`` name; bench_nb reads none of them.
    """

    question_id: str
    error_type: str
    gold_wrong: bool
    corrected: str | None = None
    question: str | None = None
    category: int | None = None


@dataclass(frozen=True)
class Errata:
    """A benchmark's errata: entries by question id, the file they came from and its sha256, and the entries
    that could not be read (``problems``: each names the file and the entry; the others still load)."""

    benchmark: str
    entries: Mapping[str, Erratum]
    source: str
    sha256: str
    problems: tuple[Problem, ...] = field(default=(), compare=False)

    def __len__(self) -> int:
        return len(self.entries)

    def __repr__(self) -> str:
        """A line, not every entry (all of LoCoMo's would be 130 KB): the benchmark, how many entries of which
        type, the file they came from and the problems met."""
        counts = ", ".join(f"{n} {kind}" for kind, n in self.counts().items())
        problems = f", {len(self.problems)} problem(s)" if self.problems else ""
        return (
            f"Errata({self.benchmark!r}: {len(self)} entries ({counts}), {len(self.wrong_gold)} with a wrong gold "
            f"answer, from {self.source} sha256 {self.sha256[:12]}{problems})"
        )

    def __iter__(self) -> Iterator[Erratum]:
        return iter(self.entries.values())

    def __contains__(self, question_id: object) -> bool:
        return question_id in self.entries

    @property
    def wrong_gold(self) -> frozenset[str]:
        """The question ids whose gold answer is wrong."""
        return frozenset(q for q, e in self.entries.items() if e.gold_wrong)

    def counts(self) -> dict[str, int]:
        """Entries per error type, most frequent first."""
        return dict(collections.Counter(e.error_type for e in self).most_common())


def load_errata(
    path: str | Path,
    *,
    cache_dir: str | Path = DEFAULT_CACHE_DIR,
    download: bool = True,
    sha256: str | None = None,
) -> Errata:
    """Read an errata file: a path, or a registered name (``"locomo"``) read from the cache or downloaded.

    Args:
        path: the errata file (the LoCoMo audit's errors.json, or bench_nb's errata format), or a registered
            name.
        cache_dir: where downloads are kept (``<cache_dir>/locomo-errata/errors.json``).
        download: fetch a registered file when it is not cached.
        sha256: a hash the file must have (raises on mismatch). A registered file is checked against its pin;
            a local copy of it that differs gets a DatasetWarning naming both hashes.

    Raises:
        DatasetError: no such file or name, a hash mismatch, or a file that is not errata (naming the entry).
    """
    file = Path(path)
    spec: ErrataSpec | None = None
    if not file.exists():
        try:
            spec = get_errata_spec(str(path))
        except DatasetError as unknown:  # its message has the nearest name and the registered ones
            raise DatasetError(f"{path}: no such errata file; {unknown}") from None
        file = _cached(spec, cache_dir, download=download, pin=spec.sha256, progress=False)
    actual = sha256_file(file)
    expected = sha256 if sha256 is not None else spec.sha256 if spec is not None else None
    check_sha256(actual, expected, source=str(file))
    data = read_json(file)
    if isinstance(data, list):
        errata = _read_audit(file, data, actual)
        pin = get_errata_spec("locomo").sha256
        if spec is None and sha256 is None and actual != pin:
            warnings.warn(
                f"{file}: sha256 {actual} differs from the published LoCoMo audit's errors.json ({pin}); "
                "read as a modified copy",
                DatasetWarning,
                stacklevel=2,
            )
        return errata
    if isinstance(data, dict) and data.get("format") == ERRATA_FORMAT:
        return _read_own(file, data, actual)
    raise DatasetError(
        f"{file}: not an errata file: expected the LoCoMo audit's list of entries, or an object with "
        f'"format": "{ERRATA_FORMAT}"'
    )


def _text(value: Any) -> str | None:
    return None if value is None else value if isinstance(value, str) else str(value)


def _read_audit(file: Path, data: list[Any], sha: str) -> Errata:
    entries: dict[str, Erratum] = {}
    problems: list[Problem] = []
    for i, item in enumerate(data):
        where = f"[{i}]"
        if not isinstance(item, dict) or not isinstance(item.get("error_type"), str):
            problems.append(
                Problem(str(file), "expected an object with an 'error_type'; entry skipped", field=f"{where}")
            )
            continue
        raw_id = str(item.get("question_id", ""))
        qid = locomo_id_from_numbered(raw_id)
        if qid is None:
            message = f"{raw_id!r} is not locomo_<conv 0-9>_qa<index>; entry skipped"
            problems.append(Problem(str(file), message, field=f"{where}.question_id"))
            continue
        if qid in entries:
            problems.append(
                Problem(str(file), f"a second entry for {raw_id}; entry skipped", field=f"{where}")
            )
            continue
        category = item.get("category")
        entries[qid] = Erratum(
            question_id=qid,
            error_type=item["error_type"],
            gold_wrong=item["error_type"] not in AUDIT_GOLD_RIGHT,
            corrected=_text(item.get("correct_answer")),
            question=_text(item.get("question")),
            category=category if isinstance(category, int) and not isinstance(category, bool) else None,
        )
    return Errata("locomo", entries, str(file), sha, tuple(problems))


def _read_own(file: Path, data: dict[str, Any], sha: str) -> Errata:
    problems: list[Problem] = []
    benchmark = data.get("benchmark")
    items = data.get("entries")
    if not isinstance(benchmark, str) or not isinstance(items, list):
        raise DatasetError(f"{file}: an errata file needs 'benchmark' (a name) and 'entries' (a list)")
    entries: dict[str, Erratum] = {}
    for i, item in enumerate(items):
        where = f"entries[{i}]"
        if not isinstance(item, dict):
            problems.append(Problem(str(file), "expected an object; entry skipped", field=f"{where}"))
            continue
        qid, etype, wrong = item.get("question_id"), item.get("error_type"), item.get("gold_wrong")
        if not isinstance(qid, str) or not qid:
            problems.append(
                Problem(str(file), "a question id is required; entry skipped", field=f"{where}.question_id")
            )
            continue
        if not isinstance(etype, str) or not isinstance(wrong, bool):
            message = "'error_type' (text) and 'gold_wrong' (true/false) are required; entry skipped"
            problems.append(Problem(str(file), message, field=where, question_id=qid))
            continue
        if qid in entries:
            problems.append(Problem(str(file), f"a second entry for {qid}; entry skipped", field=f"{where}"))
            continue
        category = item.get("category")
        entries[qid] = Erratum(
            question_id=qid,
            error_type=etype,
            gold_wrong=wrong,
            corrected=_text(item.get("corrected_answer")),
            question=_text(item.get("question")),
            category=category if isinstance(category, int) and not isinstance(category, bool) else None,
        )
    return Errata(benchmark, entries, str(file), sha, tuple(problems))
