"""A columnar run store: runs' frames as a Parquet dataset, one partition per run (see docs/loading.md).

``export_runs`` reads runs through the public loaders (``load_runs``, ``questions_frame``,
``judgments_frame``, ``runs_frame``, ``search_hits``) and writes, for each run::

    STORE/bench_nb_store.json                      marks the folder as a store (format and version)
    STORE/runs.parquet                             the runs table: one row per run (runs_df's columns, the
                                                   run's fingerprint, its partition and the file version)
    STORE/questions/run=<key>/<version>.parquet    questions_df's rows of that run
    STORE/judgments/run=<key>/<version>.parquet    judgments_df's rows
    STORE/hits/run=<key>/<version>.parquet         one row per search result: run_id, question_id, rank,
                                                   text, score, raw (the result as JSON)
    STORE/settings/run=<key>/<version>.json        read_spec(run) and frames.harnesses.harness_record(run)
                                                   as JSON (read only when asked for: it holds the run's
                                                   question ids)

``<key>`` is the run id, percent-encoded (hive-style directories, so DuckDB or polars can also read
``STORE/questions/*/*.parquet``). Incremental: a run whose fingerprint (the names, sizes and modification
times of its files, the dataset given and the store's format version) equals the recorded one is not read
again. A changed run is written under a new ``<version>`` first and becomes current only when
``runs.parquet`` is replaced (write-then-move: atomic on a local filesystem, a single whole-object write on
object storage); the old version's files are then moved to ``STORE/superseded/`` (out of the tables' glob),
where readers that opened the store before still find them for ``KEEP_SUPERSEDED_S``; a later export deletes
them. A crash leaves the previous version current and the new files unreferenced (readers go through
``runs.parquet``; the next export moves them out). One writer at a time: an export of a local store holds
its lock (``lock_store``, a ``flock`` on ``STORE/.lock``, removed when it is done); a second one waits.
A refused first export (``ExportResult.refused``, or an error) leaves nothing it created. Each version's
settings file also keeps the run's row of ``runs.parquet``: a lost or damaged ``runs.parquet`` is rebuilt from
the partitions by the next export (each run at its newest version that reads back), or, when some run's files
cannot be read back, the export refuses and changes nothing; an intact run is never retired.

``load_runs(STORE)`` returns a ``StoredRuns``: lazy polars scans of the current files, only the selected
runs' files (``runs=[run ids]``), so a report over 3 runs of a 1,000-run store reads 3 partitions. The frame
functions, every metric built on ``questions_df`` / ``judgments_df``, the settings and harness tables,
``check_like_for_like``, paired comparisons, disputed questions (their retrieved context from the hits
table) and the compare report accept it. What reads a run's checkpoint itself (the explorer and labelling
widgets, the judge-disagreement report) raises a ``RunFormatError`` saying so.

Filesystems: a local path, a URI pyarrow understands (``s3://bucket/store``, ``gs://...``), or any
``pyarrow.fs.FileSystem`` / fsspec filesystem passed as ``filesystem=`` with a path inside it.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import logging
import os
import time
import uuid
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar
from urllib.parse import quote

import msgspec
import polars as pl

from bench_nb.errors import Problem, RunFormatError
from bench_nb.frames.columns import HITS, JUDGMENTS, QUESTIONS, RUNS, STORE_RUNS
from bench_nb.frames.harnesses import harness_record
from bench_nb.frames.judgments import judgments_frame, search_hits
from bench_nb.frames.questions import questions_frame, runs_frame
from bench_nb.runformat.load import Run, RunSet, Sources, find_run_paths
from bench_nb.runformat.load import load_runs as load_run_dirs
from bench_nb.runformat.lock import FileLock, same_file, take_lock
from bench_nb.runformat.spec import Invocation, RunSpec, read_spec
from bench_nb.text import hit_text

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.fs as pafs

STORE_FORMAT = "bench_nb.store"
STORE_VERSION = 2  # 2: settings/*.json also hold the run's harness record (frames.harnesses)
MARKER = "bench_nb_store.json"
RUNS_FILE = "runs.parquet"
LOCK = ".lock"  # the writer's lock (lock_store)
SUPERSEDED = "superseded"  # replaced versions' files, kept for readers that opened the store before
RETIRED_FILE = "retired.json"  # superseded/'s record: file name -> when it was replaced (epoch seconds)
KEEP_SUPERSEDED_S = 3600.0  # how long a replaced version stays readable (deleted by the next export after)
_T = TypeVar("_T")
TABLES: tuple[Literal["questions", "judgments", "hits"], ...] = ("questions", "judgments", "hits")
Table = Literal["questions", "judgments", "hits", "runs"]

HITS_SCHEMA: dict[str, Any] = HITS.schema()
# The store's own columns of the runs table, after runs_df's.
STORE_COLUMNS: dict[str, Any] = STORE_RUNS.schema()
# Each table's columns and dtypes: its frame's (frames.columns).
_SCHEMAS: dict[str, dict[str, Any]] = {
    "questions": QUESTIONS.schema(),
    "judgments": JUDGMENTS.schema(),
    "hits": HITS_SCHEMA,
    "runs": RUNS.schema(),
}


# --- filesystems ------------------------------------------------------------------------------------------


def resolve_filesystem(store: str | os.PathLike[str], filesystem: Any = None) -> tuple[pafs.FileSystem, str]:
    """(pyarrow filesystem, path inside it) for a store location.

    ``filesystem``: a ``pyarrow.fs.FileSystem``, an fsspec filesystem (wrapped with pyarrow's
    ``FSSpecHandler``), or None: a URI (``s3://...``) or a local path.
    """
    import pyarrow.fs as pafs

    text = os.fspath(store)
    if filesystem is None:
        if "://" in text:
            fs, path = pafs.FileSystem.from_uri(text)
            return fs, path.rstrip("/")
        return pafs.LocalFileSystem(), Path(text).absolute().as_posix()
    if isinstance(filesystem, pafs.FileSystem):
        return filesystem, text.rstrip("/")
    return pafs.PyFileSystem(pafs.FSSpecHandler(filesystem)), text.rstrip("/")


def _exists(fs: pafs.FileSystem, path: str) -> bool:
    import pyarrow.fs as pafs

    return bool(fs.get_file_info(path).type != pafs.FileType.NotFound)


def is_store(source: object, filesystem: Any = None) -> bool:
    """Whether ``source`` is a run store (a location holding ``bench_nb_store.json``)."""
    if not isinstance(source, (str, os.PathLike)):
        return False
    text = os.fspath(source)
    if filesystem is None and "://" not in text:
        return (Path(text) / MARKER).is_file()
    try:
        fs, root = resolve_filesystem(source, filesystem)
        return _exists(fs, f"{root}/{MARKER}")
    except (OSError, ValueError):
        return False


def partition_key(run_id: str) -> str:
    """The run's directory name inside each table: the run id, percent-encoded (``.`` too), when that is at
    most 120 bytes; else its first 96 encoded bytes (whole escapes), ``-`` and 32 hex digits of its sha256
    (121 to 129 bytes: longer than any plain key, so unique). The run id itself is in every file's
    ``run_id`` column and runs.parquet."""
    key = quote(run_id, safe="-_~").replace(".", "%2E")
    if len(key) <= 120:
        return key
    cut = 96
    while "%" in key[cut - 2 : cut]:  # never split an escape
        cut -= 1
    digest = hashlib.sha256(run_id.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return f"{key[:cut]}-{digest}"


# --- writing ---------------------------------------------------------------------------------------------


def run_fingerprint(path: Path, *, dataset: str | None = None) -> str:
    """sha256 of the run's files (relative name, size, modification time in ns), the dataset given and the
    store's version: what decides whether an export reads a run again."""
    h = hashlib.sha256(f"{STORE_FORMAT}/{STORE_VERSION}\0{dataset or ''}\0".encode())
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    for f in files:
        st = f.stat()
        name = f.name if f == path else f.relative_to(path).as_posix()
        h.update(f"{name}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


@dataclass
class ExportResult:
    """What ``export_runs`` did: run ids written (new or changed), skipped (unchanged), and problems."""

    store: str
    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    @property
    def refused(self) -> bool:
        """Nothing exported (no run written or unchanged) and problems say why: ``bench-nb export`` fails."""
        return bool(self.problems) and not (self.written or self.unchanged)

    def __str__(self) -> str:
        return f"{self.store}: {len(self.written)} run(s) written, {len(self.unchanged)} unchanged" + (
            f", {len(self.problems)} problem(s)" if self.problems else ""
        )


def hits_frame(runset: RunSet, questions: pl.DataFrame) -> pl.DataFrame:
    """One row per search result of each question of ``questions`` (a questions frame of ``runset``)."""
    cols: dict[str, list[Any]] = {name: [] for name in HITS_SCHEMA if name != "raw"}
    hits: list[Any] = []
    by_path = {str(run.path): run for run in runset}
    for run_id, qid, run_path in questions.select("run_id", "question_id", "run_path").iter_rows():
        for rank, hit in enumerate(search_hits(by_path[run_path], qid), start=1):
            score = hit.get("score") if isinstance(hit, dict) else None
            cols["run_id"].append(run_id)
            cols["question_id"].append(qid)
            cols["rank"].append(rank)
            cols["text"].append(hit_text(hit))
            cols["score"].append(
                float(score) if isinstance(score, int | float) and not isinstance(score, bool) else None
            )
            hits.append(hit)
    # every hit encoded in one call, one JSON document a line (a newline inside a string is escaped)
    cols["raw"] = msgspec.json.Encoder(enc_hook=str).encode_lines(hits).decode().split("\n")[:-1]
    return pl.DataFrame({name: cols[name] for name in HITS_SCHEMA}, schema=HITS_SCHEMA)


def _write_parquet(fs: pafs.FileSystem, path: str, table: pa.Table) -> None:
    import pyarrow.parquet as pq

    fs.create_dir(path.rsplit("/", 1)[0], recursive=True)
    pq.write_table(table, path, filesystem=fs, compression="zstd")


def _read_runs_table(fs: pafs.FileSystem, root: str) -> pl.DataFrame | None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = f"{root}/{RUNS_FILE}"
    if not _exists(fs, path):
        return None
    try:
        frame = pl.from_arrow(pq.read_table(path, filesystem=fs))
    except (OSError, pa.ArrowException) as err:
        raise RunFormatError(path, f"cannot read the store's runs table ({err})") from None
    assert isinstance(frame, pl.DataFrame)
    return frame


def _commit_runs_table(fs: pafs.FileSystem, root: str, runs: pl.DataFrame) -> None:
    """Replace runs.parquet: written beside it, then moved over it."""
    tmp = f"{root}/.{RUNS_FILE}.{uuid.uuid4().hex}.tmp"
    _write_parquet(fs, tmp, runs.to_arrow())
    fs.move(tmp, f"{root}/{RUNS_FILE}")


def _file_names(key: str, version: str) -> list[str]:
    """A version's files, relative to the store: one per table and its settings."""
    return [f"{t}/run={key}/{version}.parquet" for t in TABLES] + [f"settings/run={key}/{version}.json"]


def _read_retired(fs: pafs.FileSystem, root: str) -> dict[str, float]:
    path = f"{root}/{SUPERSEDED}/{RETIRED_FILE}"
    if not _exists(fs, path):
        return {}
    try:
        with fs.open_input_stream(path) as f:
            retired = json.loads(f.read())
    except (OSError, ValueError):  # unreadable: every superseded file counts as retired now
        return {}
    return {str(k): float(v) for k, v in retired.items()} if isinstance(retired, dict) else {}


def _write_retired(fs: pafs.FileSystem, root: str, retired: dict[str, float]) -> None:
    fs.create_dir(f"{root}/{SUPERSEDED}", recursive=True)
    tmp = f"{root}/{SUPERSEDED}/.{RETIRED_FILE}.{uuid.uuid4().hex}.tmp"
    with fs.open_output_stream(tmp) as f:
        f.write(json.dumps(retired, sort_keys=True, indent=0).encode())
    fs.move(tmp, f"{root}/{SUPERSEDED}/{RETIRED_FILE}")


def _retire(fs: pafs.FileSystem, root: str, names: Iterable[str]) -> None:
    """Move files out of the tables (so a glob over them no longer sees them) into ``superseded/``, where a
    reader that opened the store before they were replaced still finds them; deleted by a later export once
    older than ``KEEP_SUPERSEDED_S``."""
    names = list(names)
    if not names:
        return
    retired = _read_retired(fs, root)
    now = time.time()
    for name in names:
        dest = f"{root}/{SUPERSEDED}/{name}"
        fs.create_dir(dest.rsplit("/", 1)[0], recursive=True)
        fs.move(f"{root}/{name}", dest)
        retired[name] = now
    _write_retired(fs, root, retired)


def _clean(fs: pafs.FileSystem, root: str, table: pl.DataFrame) -> None:
    """Under the store's lock: retire every file of the tables that runs.parquet does not name (what a crash
    or an older concurrent export left), and delete superseded files retired more than
    ``KEEP_SUPERSEDED_S`` ago."""
    import pyarrow.fs as pafs

    current = {
        name
        for key, version in table.select("partition", "version").iter_rows()
        for name in _file_names(key, version)
    }
    orphans = []
    for folder in (*TABLES, "settings"):
        if not _exists(fs, f"{root}/{folder}"):
            continue
        for info in fs.get_file_info(pafs.FileSelector(f"{root}/{folder}", recursive=True)):
            name = info.path[len(root) + 1 :]
            if info.type == pafs.FileType.File and name not in current:
                orphans.append(name)
    _retire(fs, root, orphans)
    retired = _read_retired(fs, root)
    if not _exists(fs, f"{root}/{SUPERSEDED}"):
        return
    cutoff = time.time() - KEEP_SUPERSEDED_S
    kept = {}
    for info in fs.get_file_info(pafs.FileSelector(f"{root}/{SUPERSEDED}", recursive=True)):
        name = info.path[len(root) + len(SUPERSEDED) + 2 :]
        if info.type != pafs.FileType.File or name == RETIRED_FILE or info.base_name.startswith("."):
            continue
        if retired.get(name, 0.0) > cutoff:  # not in the record: retired by an export that died
            kept[name] = retired[name]
        else:
            fs.delete_file(info.path)
    _write_retired(fs, root, kept)
    for folder in (*TABLES, "settings"):  # empty partition folders
        for info in fs.get_file_info(pafs.FileSelector(f"{root}/{folder}", allow_not_found=True)):
            if info.type == pafs.FileType.Directory and not fs.get_file_info(pafs.FileSelector(info.path)):
                fs.delete_dir(info.path)


def _open_root(fs: pafs.FileSystem, root: str) -> None:
    marker = f"{root}/{MARKER}"
    if _exists(fs, marker):
        with fs.open_input_stream(marker) as f:
            raw = f.read()
        try:
            info = json.loads(raw)
        except (UnicodeDecodeError, ValueError) as err:
            raise RunFormatError(
                marker, f"the store's marker is not JSON ({err}): not a bench_nb run store, or a damaged one"
            ) from None
        if (
            not isinstance(info, dict)
            or info.get("format") != STORE_FORMAT
            or info.get("version") != STORE_VERSION
        ):
            raise RunFormatError(marker, f"not a bench_nb run store of version {STORE_VERSION}: {info}")
        return
    if _exists(fs, root):
        import pyarrow.fs as pafs

        entries = [e for e in fs.get_file_info(pafs.FileSelector(root)) if e.base_name != LOCK]
        if entries:
            raise RunFormatError(root, "not empty and not a run store: export to a new or empty folder")
    fs.create_dir(root, recursive=True)
    with fs.open_output_stream(marker) as f:
        f.write(json.dumps({"format": STORE_FORMAT, "version": STORE_VERSION}).encode())


# --- one writer per store ---------------------------------------------------------------------------------


def lock_store(
    store: str | os.PathLike[str], *, wait: bool = True, on_wait: Callable[[str], None] | None = None
) -> FileLock:
    """Take a local store's write lock (``runformat.lock``, removed on release); one process writes a store
    at a time.

    With ``wait`` (the default) a process that finds the lock held says whom it waits for (``on_wait``, else
    a warning on the ``bench_nb.store`` logger) and blocks until the holder ends (the kernel frees a
    ``flock`` when its process dies, so a killed export leaves no lock); without, it raises
    ``RunFormatError`` naming the holder. Like a run directory's lock: one machine only.
    """
    root = Path(store).absolute()
    path = root / LOCK

    def held(holder: dict[str, Any]) -> None:
        who = f"process {holder.get('pid', '?')} on {holder.get('host', '?')}, started {holder.get('startedAt', '?')}"
        if not wait:
            raise RunFormatError(root, f"the store is being written by {who}: one export at a time")
        message = f"{root} is being written by {who}: waiting for it to finish (one export at a time)"
        (on_wait or logging.getLogger("bench_nb.store").warning)(message)

    while True:
        root.mkdir(parents=True, exist_ok=True)  # again: a refused first export removes the folder it made
        try:
            lock = take_lock(path, "bench-nb export", held, remove=True)
        except FileNotFoundError:
            if root.is_dir():
                raise RunFormatError(path, "cannot open the store's lock file: no such file") from None
            continue  # its folder was removed meanwhile (a refused first export): make it again
        except OSError as err:
            raise RunFormatError(path, f"cannot open the store's lock file: {err.strerror}") from None
        if same_file(path, lock.fd):
            return lock
        lock.remove = False
        lock.release()  # the holder removed the file as it let go: lock the one that is there now


def export_runs(
    runs: Sources,
    to: str | os.PathLike[str],
    *,
    filesystem: Any = None,
    dataset: str | os.PathLike[str] | None = None,
    strict: bool = False,
    on_wait: Callable[[str], None] | None = None,
) -> ExportResult:
    """Write runs' questions, judgments and search hits into the store at ``to`` (created if absent).

    Args:
        runs: what ``load_runs`` accepts (run directories, globs, a runs folder, a compare manifest,
            harness result files). Runs are read one at a time, so memory stays that of the largest run.
        to: the store: a local folder, a URI (``s3://bucket/store``), or a path inside ``filesystem``.
        filesystem: a pyarrow or fsspec filesystem the store lives on (default: from ``to``).
        dataset: the benchmark file the runs were made on (true question types, as in ``questions_df``).
        strict: raise on the first problem instead of exporting what loads and listing the rest.
        on_wait: called with a message when another process is writing the store (a local store has one
            writer at a time: ``lock_store``); the export then waits for it.

    Returns:
        An ``ExportResult``: the run ids written and unchanged, and the problems met.
    """
    fs, root = resolve_filesystem(to, filesystem)
    made = _missing_folders(fs, root)
    lock = _lock_if_local(to, filesystem, on_wait)
    refused = False
    try:
        new_store = _is_new(fs, root)  # under the lock: nothing in the folder is another export's
        try:
            result = _export(runs, to, fs, root, dataset, strict)
        except BaseException:
            refused = new_store
            raise
        refused = new_store and result.refused
        return result
    finally:
        if refused:  # a refused first export leaves nothing it created
            _empty_folder(fs, root)
        if lock is not None:
            lock.release()
        if refused:
            _remove_if_empty(fs, made)


def _missing_folders(fs: pafs.FileSystem, root: str) -> list[str]:
    """The store's folder and its parents that do not exist yet (what an export creates), innermost first."""
    made = []
    path = root
    while path and "/" in path and not _exists(fs, path):
        made.append(path)
        path = path.rsplit("/", 1)[0]
    return made


def _is_new(fs: pafs.FileSystem, root: str) -> bool:
    """No store is there yet: the folder is missing or holds nothing but the writer's lock."""
    import pyarrow.fs as pafs

    entries = fs.get_file_info(pafs.FileSelector(root, allow_not_found=True))
    return all(e.base_name == LOCK for e in entries)


def _empty_folder(fs: pafs.FileSystem, root: str) -> None:
    """Delete what a refused first export wrote in the store's folder (its marker, any run's files), all but
    the lock, which its holder removes as it lets go (``FileLock.release``)."""
    import pyarrow.fs as pafs

    for entry in fs.get_file_info(pafs.FileSelector(root, allow_not_found=True)):
        if entry.base_name == LOCK:
            continue
        with contextlib.suppress(OSError):
            if entry.type == pafs.FileType.Directory:
                fs.delete_dir(entry.path)
            else:
                fs.delete_file(entry.path)


def _remove_if_empty(fs: pafs.FileSystem, folders: list[str]) -> None:
    """Remove the folders an export created, innermost first, each only while empty (another export may
    have started in it since)."""
    import pyarrow.fs as pafs

    for folder in folders:
        try:
            if isinstance(fs, pafs.LocalFileSystem):
                os.rmdir(folder)  # refused, atomically, when not empty
            elif fs.get_file_info(pafs.FileSelector(folder, allow_not_found=True)):
                return
            else:
                fs.delete_dir(folder)
        except OSError:
            return


def _lock_if_local(
    to: str | os.PathLike[str], filesystem: Any, on_wait: Callable[[str], None] | None
) -> FileLock | None:
    """The store's lock when it is a local folder (a ``flock`` needs one); other filesystems have none."""
    import pyarrow.fs as pafs

    if (filesystem is None and "://" not in os.fspath(to)) or isinstance(filesystem, pafs.LocalFileSystem):
        return lock_store(to, on_wait=on_wait)
    return None


def _export(
    runs: Sources,
    to: str | os.PathLike[str],
    fs: pafs.FileSystem,
    root: str,
    dataset: str | os.PathLike[str] | None,
    strict: bool,
) -> ExportResult:
    _open_root(fs, root)
    paths, problems = find_run_paths(runs)
    if problems and strict:
        raise RunFormatError(problems[0].path, problems[0].message, problems[0].field)
    result = ExportResult(store=os.fspath(to), problems=list(problems))
    runs_columns = {**_SCHEMAS["runs"], **STORE_COLUMNS}
    damage = f"no {RUNS_FILE}"
    try:
        table = _read_runs_table(fs, root)
    except RunFormatError as err:
        if strict:
            raise
        table, damage = None, err.problem.message
    if table is None:
        table = _rebuild_runs_table(fs, root, runs_columns)
        if len(table):  # a runs table lost or damaged: every intact run's files are current again
            _commit_runs_table(fs, root, table)
            result.problems.append(
                Problem(
                    f"{root}/{RUNS_FILE}",
                    f"{damage}: rebuilt from the {len(table)} run(s) whose files are intact",
                )
            )
    _clean(fs, root, table)
    recorded = dict(zip(table["source_path"].to_list(), table["fingerprint"].to_list(), strict=True))
    seen: dict[str, str] = {}
    ds = None if dataset is None else os.fspath(dataset)
    for path in paths:
        fingerprint = run_fingerprint(path, dataset=ds)
        source = str(path.resolve())
        if recorded.get(source) == fingerprint:
            # Every run the source gave (mem0's memory-benchmarks file: one per retrieval depth), each counted.
            rows = (
                table.filter(pl.col("source_path") == source).select("run_id", "partition", "version").rows()
            )
            if all(_readable(fs, root, str(key), str(version)) for _, key, version in rows):
                for run_id, _, _ in rows:
                    result.unchanged.append(str(run_id))
                    seen.setdefault(str(run_id), str(path))
                continue
        try:
            # completely: every question's search results are exported, and every field's problems listed
            runset = load_run_dirs([path], dataset=ds, strict=strict, complete=True)
        except RunFormatError as err:
            if strict:
                raise
            result.problems.append(err.problem)
            continue
        result.problems.extend(runset.all_problems)
        for run in runset:
            other = seen.setdefault(run.run_id, str(run.path))
            if other != str(run.path):
                raise RunFormatError(
                    run.path,
                    f"run id {run.run_id!r} is also the id of {other}: a store keys runs by id",
                    "runId",
                )
            table = _write_run(fs, root, run, runset, table, fingerprint, ds, source)
            result.written.append(run.run_id)
    return result


def _rebuild_runs_table(fs: pafs.FileSystem, root: str, columns: dict[str, Any]) -> pl.DataFrame:
    """The runs table as the partitions give it (runs.parquet lost or damaged): each run's newest version
    whose files are all readable, its row from its settings file (``_settings_json``).

    Raises:
        RunFormatError: a run's files are there but none of its versions can be read back (or they predate
            the row kept in the settings file): rebuilding would drop it, so the export touches nothing.
    """
    import pyarrow.fs as pafs

    rows: list[dict[str, Any]] = []
    folder = f"{root}/settings"
    if not _exists(fs, folder):
        return pl.DataFrame(schema=columns)
    for part in sorted(fs.get_file_info(pafs.FileSelector(folder)), key=lambda i: i.base_name):
        if part.type != pafs.FileType.Directory or not part.base_name.startswith("run="):
            continue
        key = part.base_name.removeprefix("run=")
        versions = sorted(
            (
                i.base_name.removesuffix(".json")
                for i in fs.get_file_info(pafs.FileSelector(part.path))
                if i.type == pafs.FileType.File
                and i.base_name.endswith(".json")
                and not i.base_name.startswith(".")
            ),
            reverse=True,
        )
        if not versions:  # an empty folder (a crash before any settings file): no run there
            continue
        row = next((r for v in versions if (r := _recorded_row(fs, root, key, v)) is not None), None)
        if row is None:
            raise RunFormatError(
                f"{root}/{RUNS_FILE}",
                f"the store's runs table is missing or damaged, and the files of run partition {key!r} cannot "
                "be read back into it (damaged, or written by an older bench_nb): nothing was changed; export "
                "every run again into a new store",
            )
        rows.append(row)
    return pl.DataFrame(rows, schema=columns) if rows else pl.DataFrame(schema=columns)


def _recorded_row(fs: pafs.FileSystem, root: str, key: str, version: str) -> dict[str, Any] | None:
    """The runs-table row a version's settings file keeps, when every file of that version is readable."""
    if not _readable(fs, root, key, version):
        return None
    with fs.open_input_stream(f"{root}/settings/run={key}/{version}.json") as f:
        row = json.loads(f.read()).get("run")
    ok = isinstance(row, dict) and row.get("partition") == key and row.get("version") == version
    return row if ok else None


def _readable(fs: pafs.FileSystem, root: str, key: str, version: str) -> bool:
    """Whether a version's files are all there and readable (Parquet footers, settings JSON): a re-export
    writes a run again whose files were damaged or lost."""
    import pyarrow.parquet as pq

    try:
        for name in _file_names(key, version):
            if name.endswith(".json"):
                with fs.open_input_stream(f"{root}/{name}") as f:
                    json.loads(f.read())
            else:
                pq.read_metadata(f"{root}/{name}", filesystem=fs)
    except (OSError, ValueError):
        return False
    return True


def _settings_json(run: Run, row: pl.DataFrame) -> str:
    """The run's settings file: its spec, harness record, and its row of the runs table (``row``: what
    rebuilds runs.parquet if it is lost or damaged)."""
    record = {
        "spec": msgspec.to_builtins(read_spec(run)),
        "harness": harness_record(run),
        "run": row.row(0, named=True),
    }
    return json.dumps(record, ensure_ascii=False, sort_keys=True)


def _settings_from_json(text: str) -> tuple[RunSpec, dict[str, Any]]:
    record = json.loads(text)
    if "spec" in record:
        return msgspec.convert(record["spec"], RunSpec), record["harness"]
    old = record["settings"]  # a store written before RunSpec (issue 30): the settings record of then
    invocation = old.get("invocation")
    spec = RunSpec(
        run_id=old["run_id"],
        provider=old["provider"],
        benchmark=old.get("benchmark"),
        question_ids=tuple(old["question_ids"]),
        written_by_bench_nb=bool(old.get("written_by_bench_nb")),
        k=old.get("k"),
        answerer=old.get("answerer"),
        judges=list(old.get("judges") or ()) or None,
        primary_judge=old.get("judge"),
        isolate_per_question=old.get("isolate_per_question"),
        benchmark_sha256=old.get("benchmark_sha256"),
        question_set_hash=old.get("question_set"),
        judge_replicates=old.get("judge_replicates"),
        prompt_hashes=old.get("prompt_hashes") or None,
        custom_prompt=bool(old.get("custom_prompt")),
        invocation=msgspec.convert(invocation, Invocation) if invocation is not None else None,
    )
    return spec, record["harness"]


def _write_run(
    fs: pafs.FileSystem,
    root: str,
    run: Run,
    runset: RunSet,
    table: pl.DataFrame,
    fingerprint: str,
    dataset: str | None,
    source: str,
) -> pl.DataFrame:
    """Write one run's files under a new version, then make it current in runs.parquet. ``source``: the path
    the export was given (a harness's folder, where the run's path is the file in it), which the incremental
    check looks up."""
    one = RunSet([run])
    questions = questions_frame(one, dataset=dataset)
    frames = {
        "questions": questions,
        "judgments": judgments_frame(one, dataset=dataset),
        "hits": hits_frame(runset, questions),
    }
    key = partition_key(run.run_id)
    version = f"{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}-{uuid.uuid4().hex[:8]}"
    row = runs_frame(one).with_columns(
        partition=pl.lit(key),
        version=pl.lit(version),
        fingerprint=pl.lit(fingerprint),
        exported_at=pl.lit(time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())),
        dataset=pl.lit(dataset, pl.Utf8),
        source_path=pl.lit(source),
    )
    for name, frame in frames.items():
        _write_parquet(fs, f"{root}/{name}/run={key}/{version}.parquet", frame.to_arrow())
    fs.create_dir(f"{root}/settings/run={key}", recursive=True)
    with fs.open_output_stream(f"{root}/settings/run={key}/{version}.json") as f:
        f.write(_settings_json(run, row).encode())  # last: a version with its settings file is whole
    previous = table.filter(pl.col("run_id") == run.run_id).select("partition", "version").rows()
    # one chunk, not one a run: the table is rewritten after every run (0.76 s for 1,000 chunks, 0.005 s for one)
    table = pl.concat([table.filter(pl.col("run_id") != run.run_id), row.cast(table.schema)], rechunk=True)
    _commit_runs_table(fs, root, table)
    _retire(fs, root, [name for k, v in previous for name in _file_names(k, v)])
    return table


# --- reading ---------------------------------------------------------------------------------------------


class StoredRuns:
    """Runs read from a run store: lazy scans of their frames (see ``load_runs``).

    ``questions``, ``judgments`` and ``hits`` are polars ``LazyFrame``s over the selected runs' files only;
    ``runs`` is the runs table (runs_df's columns plus the store's: partition, version, fingerprint,
    exported_at, dataset). ``questions_df``, ``judgments_df``, ``runs_df``, ``memscore``,
    ``accuracy_by_type`` (every metric of a questions frame) accept it.
    """

    def __init__(self, store: str, fs: pafs.FileSystem | None, root: str, runs: pl.DataFrame) -> None:
        self.store = store
        self._fs = fs
        self._root = root
        self.runs = runs
        self.problems: list[Problem] = []
        self._frames: dict[str, pl.DataFrame] = {}
        self._recorded: list[tuple[RunSpec, dict[str, Any]]] | None = None

    @property
    def run_ids(self) -> list[str]:
        """The store's run ids, in the order read."""
        return [str(r) for r in self.runs["run_id"].to_list()]

    @property
    def all_problems(self) -> list[Problem]:
        """The problems met reading the store (a store's runs carry none of their own)."""
        return self.problems

    def __len__(self) -> int:
        return len(self.runs)

    def __repr__(self) -> str:
        return f"StoredRuns({self.store!r}, {len(self)} run(s))"

    def files(self, table: Literal["questions", "judgments", "hits"]) -> list[str]:
        """The files of ``table`` for the selected runs (paths inside the store's filesystem): each run's
        version as runs.parquet named it when the store was opened, in the table or, once an export replaced
        it, in ``superseded/`` (kept ``KEEP_SUPERSEDED_S`` for readers that opened the store before)."""
        return [self._locate(name) for name in self._names(table)]

    def _names(self, table: Literal["questions", "judgments", "hits", "settings"]) -> list[str]:
        """The selected runs' files of ``table``, relative to the store, at the versions read at open."""
        ext = "json" if table == "settings" else "parquet"
        return [
            f"{table}/run={key}/{version}.{ext}"
            for key, version in self.runs.select("partition", "version").iter_rows()
        ]

    def _is_file(self, path: str) -> bool:
        return Path(path).is_file() if self._fs is None else _exists(self._fs, path)

    def _locate(self, name: str) -> str:
        for path in (f"{self._root}/{name}", f"{self._root}/{SUPERSEDED}/{name}"):
            if self._is_file(path):
                return path
        raise RunFormatError(
            f"{self._root}/{name}",
            f"not in the store: the store was exported again since it was opened, and the files of the "
            f"version read then were deleted (kept {KEEP_SUPERSEDED_S:g} s after being replaced); load it again",
        )

    def _read_pinned(self, names: list[str], read: Callable[[list[str]], _T]) -> _T:
        """``read(paths of names)``, where a file an export moved out of the tables between finding it and
        reading it is found again in ``superseded/``.

        A pinned version's file moves at most once (from its table to ``superseded/``, where it stays
        ``KEEP_SUPERSEDED_S``; a version name is never current again), so a failed read is retried only when
        finding the files again gives another path for one of them: that bounds the retries by the number of
        files however slow the reader, and whatever error the reader raised for the vanished file (polars'
        ``FileNotFoundError``, a ``ComputeError`` or pyarrow's ``OSError`` wrapping ENOENT). A failure with
        every file where it was is raised as it is."""
        paths = [self._locate(name) for name in names]
        while True:
            try:
                return read(paths)
            except (pl.exceptions.PolarsError, OSError):
                again = [self._locate(name) for name in names]
                if again == paths:
                    raise
                paths = again

    def scan(self, table: Literal["questions", "judgments", "hits"]) -> pl.LazyFrame:
        """A lazy scan of ``table`` over the selected runs: filters and projections push down to Parquet."""
        return self._scan(table, self.files(table))

    def _scan(self, table: Literal["questions", "judgments", "hits"], files: list[str]) -> pl.LazyFrame:
        schema = _SCHEMAS[table]
        if not files:
            return pl.LazyFrame(schema=schema)
        if self._fs is None:  # a local store: polars reads it, no pyarrow
            lazy = pl.scan_parquet(files, hive_partitioning=False)
        else:
            import pyarrow.dataset as pads

            lazy = pl.scan_pyarrow_dataset(pads.dataset(files, filesystem=self._fs, format="parquet"))
        # A column added to a frame after the store was written (the judgments' haystack_id) reads as null.
        have = lazy.collect_schema()
        return lazy.select(
            [pl.col(c).cast(t) if c in have else pl.lit(None, t).alias(c) for c, t in schema.items()]
        )

    def _collect(self, table: Literal["questions", "judgments", "hits"], query: Any = None) -> pl.DataFrame:
        """``query(scan of table)`` collected, each file read where it is (``_read_pinned``); a file that
        cannot be read is an error naming it."""

        def read(paths: list[str]) -> pl.DataFrame:
            lazy = self._scan(table, paths)  # may read the files' schemas already
            return (lazy if query is None else query(lazy)).collect()

        try:
            return self._read_pinned(self._names(table), read)
        except (pl.exceptions.PolarsError, OSError) as err:
            self._name_unreadable(table, err)
            raise

    def _name_unreadable(self, table: Literal["questions", "judgments", "hits"], err: Exception) -> None:
        for path in self.files(table):
            try:
                if self._fs is None:
                    pl.read_parquet(path)
                else:
                    import pyarrow.parquet as pq

                    pq.read_table(path, filesystem=self._fs)
            except Exception as bad:  # any failure to read it is what is reported
                raise RunFormatError(
                    path, f"cannot read this store file ({bad}); export its run again to repair it"
                ) from err

    @property
    def questions(self) -> pl.LazyFrame:
        """The questions frame of the runs read, as a lazy scan of its Parquet files."""
        return self.scan("questions")

    @property
    def judgments(self) -> pl.LazyFrame:
        """The judgments frame of the runs read, as a lazy scan of its Parquet files."""
        return self.scan("judgments")

    @property
    def hits(self) -> pl.LazyFrame:
        """The search results kept at export (one row per result: rank, text, ...), as a lazy scan of their
        Parquet files."""
        return self.scan("hits")

    def stored_frame(self, table: Table) -> pl.DataFrame:
        """The table collected (kept: the tables and metrics of one report read it once)."""
        if table == "runs":
            return self.runs.select([pl.col(c).cast(t) for c, t in _SCHEMAS["runs"].items()])
        if table not in self._frames:
            self._frames[table] = self._collect(table)
        return self._frames[table]

    def _settings(self) -> list[tuple[RunSpec, dict[str, Any]]]:
        if self._recorded is None:
            self._recorded = []
            for name in self._names("settings"):
                path, text = self._read_pinned([name], self._read_text)
                try:
                    self._recorded.append(_settings_from_json(text))
                except (ValueError, KeyError, TypeError, msgspec.ValidationError) as err:
                    raise RunFormatError(
                        path, f"cannot read this store file ({err}); export its run again to repair it"
                    ) from None
        return self._recorded

    def _read_text(self, paths: list[str]) -> tuple[str, str]:
        (path,) = paths
        if self._fs is None:
            return path, Path(path).read_text(encoding="utf-8")
        with self._fs.open_input_stream(path) as f:
            return path, f.read().decode()

    def recorded_settings(self) -> list[RunSpec]:
        """Each selected run's settings as ``runformat.spec.read_spec`` read them at export (what
        ``check_like_for_like`` and the settings table compare); one small file per run, read once."""
        return [rs for rs, _ in self._settings()]

    @property
    def imported_run_ids(self) -> set[str]:
        """The runs imported from another harness's results file (``Run.imported`` was set)."""
        return {rs.run_id for rs, harness in self._settings() if harness["imported"]}

    def harness_records(self) -> list[dict[str, Any]]:
        """Each selected run's ``frames.harnesses.harness_record``, as read at export."""
        return [dict(harness) for _, harness in self._settings()]

    def stored_hit_texts(self, keys: pl.DataFrame, n_hits: int | None = None) -> list[list[str]]:
        """For each (run_id, question_id) row of ``keys``: the texts of its run's results for the question
        in rank order (the first ``n_hits``), as ``frames.judgments.retrieved_texts`` gives them; read from
        the hits table of the selected runs, only those questions' rows."""
        wanted = keys.select(pl.col("run_id").cast(pl.Utf8), pl.col("question_id").cast(pl.Utf8))

        def query(lazy: pl.LazyFrame) -> pl.LazyFrame:
            hits = lazy.select("run_id", "question_id", "rank", "text")
            if n_hits is not None:
                hits = hits.filter(pl.col("rank") <= n_hits)
            return (
                hits.join(wanted.unique().lazy(), on=["run_id", "question_id"], how="semi")
                .sort("run_id", "question_id", "rank")
                .group_by("run_id", "question_id", maintain_order=True)
                .agg(pl.col("text"))
            )

        texts = self._collect("hits", query)
        found = {(r, q): t for r, q, t in texts.iter_rows()}
        return [list(found.get((r, q), [])) for r, q in wanted.iter_rows()]

    def __iter__(self) -> Iterator[Run]:
        raise RunFormatError(
            self.store,
            "a run store holds the runs' frames (questions, judgments, search hits) and settings, not their "
            "checkpoints: what reads a run's checkpoint itself (the explorer and labelling widgets, the "
            "judge-disagreement report) cannot use it; load those runs from their directories (their paths "
            "are in runs_df's run_path column). The compare report, paired comparisons and disputed "
            "questions do read a store",
        )


def open_store(
    store: str | os.PathLike[str], *, runs: Iterable[str] | None = None, filesystem: Any = None
) -> StoredRuns:
    """Open a run store; ``runs``: the run ids to read, in that order (default: all, by run id). An unknown
    id is an error naming it. A local store is read with polars and pathlib (no pyarrow import); others
    through their pyarrow filesystem."""
    fs: pafs.FileSystem | None
    table: pl.DataFrame | None
    if filesystem is None and "://" not in os.fspath(store):
        fs, root = None, Path(store).absolute().as_posix()
        if not Path(root, MARKER).is_file():
            raise RunFormatError(os.fspath(store), f"not a run store (no {MARKER})")
        runs_file = Path(root, RUNS_FILE)
        try:
            # read whole, in one open: polars may open a path more than once, and an export may replace it
            table = pl.read_parquet(io.BytesIO(runs_file.read_bytes())) if runs_file.is_file() else None
        except (pl.exceptions.PolarsError, OSError) as err:
            raise RunFormatError(
                runs_file,
                f"cannot read the store's runs table ({err}); any export into the store rebuilds it from "
                "the runs' files",
            ) from None
    else:
        fs, root = resolve_filesystem(store, filesystem)
        if not _exists(fs, f"{root}/{MARKER}"):
            raise RunFormatError(os.fspath(store), f"not a run store (no {MARKER})")
        table = _read_runs_table(fs, root)
    if table is None:
        table = pl.DataFrame(schema={**_SCHEMAS["runs"], **STORE_COLUMNS})
    if runs is not None:
        wanted = [runs] if isinstance(runs, str) else list(runs)
        held = table["run_id"].to_list()
        missing = sorted(set(wanted) - set(held))
        if missing:
            from bench_nb.registry import did_you_mean

            listed = ", ".join(held[:20]) + (f", ... ({len(held)} in all)" if len(held) > 20 else "")
            raise RunFormatError(
                f"{os.fspath(store)}/{RUNS_FILE}",
                f"no run {', '.join(map(repr, missing))} in the store{did_you_mean(missing[0], held)}; "
                f"its runs: {listed or 'none'}",
                "run_id",
            )
        table = table.filter(pl.col("run_id").is_in(wanted))
        order = {run_id: i for i, run_id in enumerate(dict.fromkeys(wanted))}
        table = table.sort(pl.col("run_id").replace_strict(order, return_dtype=pl.Int64))
    else:
        table = table.sort("run_id")
    return StoredRuns(os.fspath(store), fs, root, table)


def load_runs(
    sources: Any,
    *,
    runs: Iterable[str] | None = None,
    filesystem: Any = None,
    format: Any = None,
    dataset: str | os.PathLike[str] | None = None,
    strict: bool = False,
) -> RunSet | StoredRuns:
    """Load runs: a run store (``bench-nb export``) as a ``StoredRuns``, anything else as a ``RunSet``.

    Args:
        sources: a run store (a folder holding ``bench_nb_store.json``, a URI such as ``s3://bucket/store``,
            or a path inside ``filesystem``), or what ``runformat.load.load_runs`` reads: run directories,
            globs, a runs folder, a compare manifest, other harnesses' result files, a ``RunSet`` or ``Run``.
        runs: a store's run ids to read, in that order (default: all, by run id); only their files are read.
        filesystem: the pyarrow or fsspec filesystem a store lives on.
        format, dataset, strict: as ``runformat.load.load_runs`` (run directories and harness files only).

    Returns:
        A ``StoredRuns`` for a store (lazy frames: see ``frames.store``), else a ``RunSet`` whose
        ``problems`` lists what could not be read.
    """
    if isinstance(sources, StoredRuns):
        return sources
    if filesystem is not None or is_store(sources):
        return open_store(sources, runs=runs, filesystem=filesystem)
    if runs is not None:
        raise ValueError("runs= selects runs of a run store; this is not one")
    with warnings.catch_warnings(record=True) as caught:  # re-raised below, pointing at the caller
        warnings.simplefilter("always")
        loaded = load_run_dirs(sources, format=format, dataset=dataset, strict=strict)
    for w in caught:
        warnings.warn(w.message, stacklevel=2)
    return loaded
