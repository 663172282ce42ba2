"""Importers for other harnesses' result files: EverMemOS's eval_results.json, Zep's grades, Mem0's results,
LongMemEval's judged answers (``*.eval-results-*``, JSON lines), AML's judgments and answers (JSON lines).

Each importer (an ``Importer``, registered with ``register_importer``) turns one file into checkpoints of the run
format held in memory (one per run it holds), each with an ``ImportInfo`` (the harness, its judge as named or
``unknown``, the judge's verdicts by replicate, what the file does not record). ``runformat.load.load_runs``
reads every file it is given with ``import_runs``, which finds the importer (``find_importer``) unless a format
is named; LoCoMo questions get LoCoMo's canonical ids (``locomo_ids``), LongMemEval's keep their own, so runs
of different harnesses pair up.
docs/loading.md documents each format's mapping.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from bench_nb.errors import Problem, RunFormatError
from bench_nb.registry import Registry
from bench_nb.runformat.format import Checkpoint
from bench_nb.runformat.harnesses import amb, aml, evermemos, lmev2, longmemeval, mem0, mem0_benchmarks, zep
from bench_nb.runformat.harnesses.common import ImportInfo, first_json_line, read_json
from bench_nb.runformat.harnesses.locomo_ids import LocomoIndex, load_locomo_index

__all__ = [
    "ImportInfo",
    "Importer",
    "LocomoIndex",
    "find_importer",
    "import_runs",
    "list_importers",
    "load_locomo_index",
    "locate_importer",
    "needs_locomo",
    "register_importer",
    "unregister_importer",
]

HarnessFormat = Literal[
    "longmemeval-v2", "longmemeval", "aml", "mem0-benchmarks", "evermemos", "zep", "mem0", "amb"
]
"""The built-in importers' names, in the order they are tried (``tests/test_registry.py`` checks the
registry holds exactly these)."""

Runs = list[tuple[Checkpoint, ImportInfo]]


@dataclass(frozen=True)
class Importer:
    """One harness's result files.

    Attributes:
        name: the format's name (``load_runs(format=...)``).
        read: every run of a file, ``read(path, index, problems, data)``: ``index`` LoCoMo's questions (None when
            ``locomo_ids`` is False or no dataset is at hand), ``data`` the decoded JSON (None for an importer
            with no ``looks_like``). Rows that cannot be read are added to ``problems``; a file that cannot be
            read at all raises ``RunFormatError``.
        looks_like: whether decoded JSON is this harness's (tried in registration order).
        locate: the file of this harness at a path (a folder, a file beside it, the file itself) when it can be
            told without decoding JSON (a JSON-lines file by its name); None when it is not one. Tried first.
        locomo_ids: its question ids are matched to LoCoMo's, which may need LoCoMo's dataset.
    """

    name: str
    read: Callable[[Path, LocomoIndex | None, list[Problem], Any], Runs]
    looks_like: Callable[[Any], bool] | None = None
    locate: Callable[[Path], Path | None] | None = None
    locomo_ids: bool = True


_IMPORTERS: Registry[Importer] = Registry("run format", ValueError)


def register_importer(importer: Importer, *, replace: bool = False) -> Importer:
    """Register ``importer`` under its name (tried after those registered before it).

    Raises:
        ValueError: the name is taken and ``replace`` is False.
    """
    return _IMPORTERS.register(importer.name, importer, replace=replace)


def unregister_importer(name: str) -> None:
    """Remove a registered importer."""
    _IMPORTERS.unregister(name)


def list_importers() -> list[str]:
    """The registered importers' names, in the order they are tried."""
    return _IMPORTERS.names()


def locate_importer(path: Path) -> tuple[Importer, Path] | None:
    """The importer that tells ``path`` by its name or place (``Importer.locate``), and the file it reads there;
    None when none does (a JSON file is told by its content: ``find_importer``)."""
    for imp in map(_IMPORTERS.get, _IMPORTERS.names()):
        file = imp.locate(path) if imp.locate is not None else None
        if file is not None:
            return imp, file
    return None


def find_importer(path: Path, data: Any = None) -> tuple[Importer, Path] | None:
    """The importer that reads ``path`` and the file it reads there (None: none of them). ``data``: the file
    already decoded (JSON files)."""
    found = locate_importer(path) if data is None else None
    if found is not None or path.is_dir():
        return found
    if data is None:
        try:
            data = read_json(path)
        except RunFormatError:
            return None
    for imp in map(_IMPORTERS.get, _IMPORTERS.names()):
        if imp.looks_like is not None and imp.looks_like(data):
            return imp, path
    return None


def needs_locomo(path: Path, fmt: str | None) -> bool:
    """Whether reading this file may need LoCoMo's dataset (an importer whose ids are its benchmark's never
    does)."""
    if fmt is not None:
        return _IMPORTERS.get(fmt).locomo_ids
    found = locate_importer(path)
    return found is None or found[0].locomo_ids


def import_runs(
    path: Path, fmt: str | None, index: LocomoIndex | None
) -> tuple[Path, list[tuple[Checkpoint, ImportInfo, list[Problem]]]]:
    """The file read at ``path`` and every run it holds (``fmt`` None: find the importer), each with its
    problems (the file's go with the first run). Rows that cannot be read or matched become problems.

    Raises:
        RunFormatError: the file is not JSON, not in the format asked for, holds no run, or (Zep, Mem0) no LoCoMo
            dataset.
        ValueError: ``fmt`` is not a registered importer.
    """
    if fmt is not None:
        imp = _IMPORTERS.get(fmt)
        file = (imp.locate(path) if imp.locate is not None else None) or path
    else:
        found = locate_importer(path)
        imp, file = found if found is not None else (None, path)  # type: ignore[assignment]
    if file.is_dir():
        raise RunFormatError(file, "a folder holding no harness file bench_nb reads")
    data = None
    if imp is None or imp.looks_like is not None:
        data = read_json(file)
        if imp is None:
            found = find_importer(file, data)
            if found is None:
                raise RunFormatError(file, _dataset_not_run(file) or _not_a_run_format())
            imp = found[0]
        elif imp.looks_like is not None and not imp.looks_like(data):
            raise RunFormatError(
                file, f"not a {imp.name} file: {(imp.looks_like.__doc__ or imp.name).splitlines()[0]}"
            )
    problems: list[Problem] = []
    runs = imp.read(file, index, problems, data)
    if not runs:
        raise RunFormatError(file, f"no run in this {imp.name} file")
    return file, [(ck, info, problems if i == 0 else []) for i, (ck, info) in enumerate(runs)]


def _not_a_run_format() -> str:
    return (
        "not a run format bench_nb reads: not a checkpoint/report.json, nor a file of "
        f"{', '.join(list_importers())} (pass format= to force one)"
    )


def _dataset_not_run(file: Path) -> str:
    """What to say of a benchmark's dataset file given where a run goes (a newcomer's ``bench-nb summary
    locomo10.json``), or "" for any other file."""
    from bench_nb.benchmarks.registry import SNIFF_LIMIT, detect_benchmark
    from bench_nb.errors import DatasetError

    try:
        if file.stat().st_size > SNIFF_LIMIT:  # not read again only to word an error
            return ""
        name = detect_benchmark(file)
    except (DatasetError, OSError):
        return ""
    # the dataset= of load_runs and questions_df, --dataset of summary, export, gate ... (read_memorybench_dataset)
    return (
        f"a {name} dataset (the benchmark's questions), not a run: make a run on it (bench-nb run -b {name} "
        "--dataset FILE); a LoCoMo or LongMemEval file is also given beside runs made on it (--dataset FILE, "
        "dataset= in Python)"
    )


def _lmev2_file(path: Path) -> Path | None:
    """LongMemEval-V2's ``per_question.jsonl`` (plain or .gz): the file, its folder, or the summary beside it."""
    if path.is_dir() or path.name == lmev2.AGGREGATED:
        return lmev2.run_file(path if path.is_dir() else path.parent)
    return path if lmev2.is_run_file(path) else None


def _judged_lines(path: Path) -> Path | None:
    """LongMemEval's judged answers: named ``*.eval-results-*``, or a ``.jsonl`` file whose first line is one."""
    ok = path.is_file() and (
        longmemeval.has_name(path)
        or (path.name.endswith((".jsonl", ".jsonl.gz")) and longmemeval.looks_like(first_json_line(path)))
    )
    return path if ok else None


def _evermemos_folder(path: Path) -> Path | None:
    file = path / evermemos.FILENAME
    return file if path.is_dir() and file.is_file() else None


for _importer in (
    Importer(lmev2.HARNESS, lambda p, i, pr, d: [lmev2.read(p, pr)], locate=_lmev2_file, locomo_ids=False),
    Importer(
        longmemeval.HARNESS,
        lambda p, i, pr, d: [longmemeval.read(p, pr)],
        locate=_judged_lines,
        locomo_ids=False,
    ),
    Importer(aml.HARNESS, lambda p, i, pr, d: [aml.read(p, pr)], locate=aml.locate, locomo_ids=False),
    Importer(
        mem0_benchmarks.HARNESS,
        lambda p, i, pr, d: mem0_benchmarks.read_all(p, pr, d),
        mem0_benchmarks.looks_like,
        locomo_ids=False,  # its own LoCoMo ids, mapped without the dataset
    ),
    Importer(
        evermemos.HARNESS,
        lambda p, i, pr, d: [evermemos.read(p, i, pr, d)],
        evermemos.looks_like,
        _evermemos_folder,
    ),
    Importer(zep.HARNESS, lambda p, i, pr, d: [zep.read(p, i, pr, d)], zep.looks_like),
    Importer(mem0.HARNESS, lambda p, i, pr, d: [mem0.read(p, i, pr, d)], mem0.looks_like),
    Importer(amb.HARNESS, lambda p, i, pr, d: [amb.read(p, i, pr, d)], amb.looks_like),
):
    register_importer(_importer)
