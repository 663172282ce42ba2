"""The benchmark registry: a name -> how to read it, where to download it, and which sha256 it must have.

``load_benchmark`` reads an explicit path directly; otherwise it looks the file up in the cache directory
(``<cache_dir>/<name>/<filename>``) and downloads it from its official URL when missing, verifying the pinned
sha256. ``Benchmark.sha256`` always records the hash of the file actually read.

A folder benchmark (BEAM's tiers) is many files, each pinned (``BenchmarkSpec.files``): it is cached as
``<cache_dir>/<name>/<relative path>``, each file downloaded and verified on its own, and its
``Benchmark.sha256`` is ``folder_sha256``: the hash of the list of its files' hashes.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import hashlib
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import partial
from importlib import resources
from pathlib import Path
from typing import Any

from bench_nb.errors import BenchNbError, DatasetError, Problem
from bench_nb.records import Benchmark
from bench_nb.registry import Registry, did_you_mean

from .beam import TIERS, read_beam, tier_pins
from .beam import folder_files as beam_folder_files
from .download import DatasetWarning, check_sha256, download_file, sha256_file
from .jsonfile import read_json
from .lmev2 import OWN_TYPES as LMEV2_TYPES
from .lmev2 import QUESTIONS_FILE, TRAJECTORIES_FILE, haystack_file, read_longmemeval_v2
from .lmev2 import TIERS as LMEV2_TIERS
from .locomo import locomo_haystack, read_locomo
from .longmemeval import read_longmemeval


@dataclass(frozen=True)
class BenchmarkTraits:
    """What code outside the benchmark package knows about a benchmark: read from its registration, never from
    its name (an unregistered name, an imported run's own, has the defaults).

    Attributes:
        default_judges: the judges a run gets when none are given (the first is primary).
        graded: scored by a graded rubric (fractional scores): the primary judge must be a graded one, and the
            reports show scores per ability (``bench_nb.tables.beam``).
        tiers: the tiers ``--tier`` picks, each the registered name it loads (``{"500k": "beam-500k"}``).
        haystacks: how many haystacks the whole benchmark has (a run with fewer is partial).
        locomo_questions: LoCoMo's questions: category ids 1-5 (MemoryBench relabels them), ids
            ``<sample_id>-q<index>`` whose sample is the haystack.
        haystack_per_question: each question is its own haystack (LongMemEval).
        lafs_reference: the LAFS reference frontiers (``metrics.budget.REFERENCE_FRONTIERS``) are scores on its
            questions.
        question_types: the benchmark's own question types that bench_nb's normalised set has no name for: a
            raw label (lower case) -> the type its questions are reported under (``question_type_norm``) and
            judged as (LongMemEval-V2's ``static-environment`` -> ``static``, where the normalised set would
            say ``other``).
    """

    default_judges: tuple[str, ...] = ("contains", "f1")
    graded: bool = False
    tiers: Mapping[str, str] = field(default_factory=dict)
    haystacks: int | None = None
    locomo_questions: bool = False
    haystack_per_question: bool = False
    lafs_reference: bool = False
    question_types: Mapping[str, str] = field(default_factory=dict)


BenchmarkReader = Callable[[Path, list[Problem] | None], Benchmark]
"""Reads a file into a Benchmark: ``reader(path, problems)``; ``problems`` is None (raise on the first problem)
or a list to fill while loading leniently."""

DEFAULT_CACHE_DIR = "data/benchmarks"
_HF = "https://huggingface.co/datasets/xiaowu0162/longmemeval-cleaned/resolve/main"


@dataclass(frozen=True)
class ErrataSpec:
    """A benchmark's published answer-key errata file (``BenchmarkSpec.errata``; ``load_errata`` reads it):
    registered as ``<benchmark>-errata``, cached as ``<cache_dir>/<benchmark>-errata/<the url's file name>``,
    downloaded and verified against its pin as the benchmark's own file is.

    Attributes:
        url: where it is published.
        sha256: the pinned hash a download or cached copy must have.
        description: one line for ``bench-nb datasets list``.
        benchmark: the benchmark it corrects (``register_benchmark`` sets it).
    """

    url: str
    sha256: str
    description: str = ""
    benchmark: str = ""

    @property
    def name(self) -> str:
        """The name ``load_errata`` and ``bench-nb datasets`` take (besides the benchmark's own)."""
        return f"{self.benchmark}-errata"

    def cache_path(self, cache_dir: str | Path = DEFAULT_CACHE_DIR) -> Path:
        """Where the downloaded errata file lives in ``cache_dir``."""
        return Path(cache_dir) / self.name / self.url.rsplit("/", 1)[-1]


@dataclass(frozen=True)
class BenchmarkSpec:
    """One registered benchmark.

    Attributes:
        name: the canonical name (``Benchmark.name`` of what it loads).
        reader: turns a file into a Benchmark.
        description: one line for ``bench-nb datasets list``.
        url: the official download URL (None: the file must be given, or is bundled).
        sha256: the pinned hash of the official file (None: unpinned; the hash read is still recorded).
        filename: the file's name in the cache directory.
        aliases: other names that resolve to this one.
        bundled: a file shipped inside the package (the sample benchmark).
        files: a folder benchmark's files: ``(relative path, url, sha256 or None)``; a file without a hash is
            known upstream but unpinned, and refused for download.
        source: where a folder benchmark comes from (repository and commit), for messages and docs.
        folder_files: a folder benchmark's files in a local copy, ``folder_files(root)`` (default: those of
            ``files`` the copy holds).
        traits: what the rest of bench_nb knows about it (``BenchmarkTraits``).
        errata: its answer key's published errata file (``ErrataSpec``), if any.
    """

    name: str
    reader: BenchmarkReader
    description: str = ""
    url: str | None = None
    sha256: str | None = None
    filename: str | None = None
    aliases: tuple[str, ...] = ()
    bundled: Path | None = None
    files: tuple[tuple[str, str, str | None], ...] = ()
    source: str = ""
    folder_files: Callable[[Path], list[str]] | None = None
    traits: BenchmarkTraits = BenchmarkTraits()
    errata: ErrataSpec | None = None

    @property
    def is_folder(self) -> bool:
        """Whether the benchmark is a folder of pinned files (BEAM's tiers) rather than one file."""
        return bool(self.files)

    def cache_path(self, cache_dir: str | Path = DEFAULT_CACHE_DIR) -> Path | None:
        """Where the downloaded file (or a folder benchmark's folder) lives in ``cache_dir`` (None for
        benchmarks that are not downloaded)."""
        if self.files:
            return Path(cache_dir) / self.name
        return Path(cache_dir) / self.name / self.filename if self.filename else None

    def is_cached(self, cache_dir: str | Path = DEFAULT_CACHE_DIR) -> bool:
        """Whether the benchmark is downloaded in ``cache_dir`` (a folder benchmark: every one of its files)."""
        path = self.cache_path(cache_dir)
        if path is None:
            return False
        if self.files:
            return all((path / rel).is_file() for rel, _, _ in self.files)
        return path.is_file()


_BENCHMARKS: Registry[BenchmarkSpec] = Registry("benchmark", DatasetError)


def register_benchmark(
    name: str, reader: BenchmarkReader, *, replace: bool = False, **fields: Any
) -> BenchmarkSpec:
    """Register a benchmark under ``name`` (and its ``aliases``).

    Args:
        name: the name ``load_benchmark`` takes.
        reader: ``reader(path, problems) -> Benchmark`` (see ``BenchmarkReader``).
        replace: allow replacing an existing registration of ``name``.
        fields: the rest of its ``BenchmarkSpec``: ``description``, ``url``, ``sha256`` (the pinned hex digest a
            download or cached copy must have), ``filename`` (default: the url's last segment), ``aliases``,
            ``bundled``, ``files``, ``source``, ``folder_files``, ``traits``, ``errata``.

    Raises:
        DatasetError: the name or an alias is taken and ``replace`` is False, or a field is not a spec's.
    """
    if fields.get("url") and not fields.get("filename"):
        fields["filename"] = fields["url"].rstrip("/").rsplit("/", 1)[-1]
    fields["sha256"] = (fields.get("sha256") or "").lower() or None
    fields["aliases"] = tuple(a.lower() for a in fields.get("aliases", ()))
    fields["files"] = tuple(fields.get("files", ()))
    if fields.get("errata") is not None:
        fields["errata"] = dataclasses.replace(fields["errata"], benchmark=name.strip().lower())
    try:
        spec = BenchmarkSpec(name.strip().lower(), reader, **fields)
    except TypeError as err:
        raise DatasetError(f"benchmark {name!r}: {err}") from None
    return _BENCHMARKS.register(spec.name, spec, aliases=spec.aliases, replace=replace)


def unregister_benchmark(name: str) -> None:
    """Remove a registered benchmark and its aliases (mainly for tests and notebooks)."""
    _BENCHMARKS.unregister(name)


def list_benchmarks() -> list[str]:
    """The registered benchmark names, in registration order (aliases not included)."""
    return _BENCHMARKS.names()


def get_benchmark_spec(name: str) -> BenchmarkSpec:
    """The registration of ``name`` or one of its aliases (case-insensitive).

    Raises:
        DatasetError: no such benchmark; the message lists the known names.
    """
    return _BENCHMARKS.get(name)


def list_errata() -> list[str]:
    """The registered errata names (``<benchmark>-errata``), in the order of their benchmarks."""
    return [s.errata.name for s in map(_BENCHMARKS.get, _BENCHMARKS.names()) if s.errata is not None]


def get_errata_spec(name: str) -> ErrataSpec:
    """The published errata file registered as ``name``: ``<benchmark>-errata``, or the benchmark's name or an
    alias (``locomo``).

    Raises:
        DatasetError: no such errata; the message lists the known names.
    """
    spec = _BENCHMARKS.find(name.strip().lower().removesuffix("-errata"))
    if spec is None or spec.errata is None:
        known = list_errata()
        hint = did_you_mean(name, [*known, *(k.removesuffix("-errata") for k in known)])  # locmo -> locomo
        raise DatasetError(f"unknown errata {name!r}{hint}; known: {', '.join(known)}")
    return spec.errata


def benchmark_traits(name: str) -> BenchmarkTraits:
    """The traits of the benchmark registered as ``name`` (or an alias); the defaults for any other name (an
    imported run's own benchmark name, a custom file's)."""
    spec = _BENCHMARKS.find(name)
    return spec.traits if spec is not None else BenchmarkTraits()


def haystack_id_of(
    question_id: str,
    *,
    benchmark: str = "",
    recorded: str | None = None,
    container_tag: str | None = None,
    run_id: str | None = None,
) -> str:
    """The haystack (the cluster of questions that share what a provider stored) a question belongs to.

    In order: the haystack the run recorded (bench_nb writes ``benchNb.haystackId``); for LoCoMo's questions
    (``BenchmarkTraits.locomo_questions``) the conversation, from the question id (``conv-26-q3`` ->
    ``conv-26``, ``locomo_0_qa3`` -> ``locomo_0``); for a benchmark whose questions are their own haystacks
    (LongMemEval) the question itself; else the container tag without its ``-<run id>`` suffix (bench_nb names
    containers ``<haystack>-<run id>``); else the question id, so a question of unknown haystack is its own
    cluster.
    """
    if recorded:
        return recorded
    traits = benchmark_traits(benchmark)
    if traits.locomo_questions and (hay := locomo_haystack(question_id)):
        return hay
    if traits.haystack_per_question:
        return question_id
    if container_tag:
        suffix = f"-{run_id}" if run_id else ""
        if suffix and container_tag.endswith(suffix) and len(container_tag) > len(suffix):
            return container_tag[: -len(suffix)]
    return question_id


# The benchmark a comparison loaded once for all its runs: (name, dataset, Benchmark); see ``shared_benchmark``.
_SHARED: contextvars.ContextVar[tuple[str, str | None, Benchmark] | None] = contextvars.ContextVar(
    "bench_nb_shared_benchmark", default=None
)


@contextlib.contextmanager
def shared_benchmark(name: str, dataset: str | Path | None, loaded: Benchmark) -> Iterator[None]:
    """Within it, ``load_benchmark(name, dataset)`` (a run asked for them) takes ``loaded`` instead of reading the
    file again (a comparison reads it once for all its runs), while recording the name and the file as a run of
    its own does, so ``bench-nb run -r`` and ``bench-nb reanswer`` find them again."""
    token = _SHARED.set((name, None if dataset is None else str(dataset), loaded))
    try:
        yield
    finally:
        _SHARED.reset(token)


def load_benchmark(
    name: str | Benchmark,
    path: str | Path | None = None,
    *,
    cache_dir: str | Path = DEFAULT_CACHE_DIR,
    download: bool = True,
    sha256: str | None = None,
    problems: list[Problem] | None = None,
    progress: bool = True,
) -> Benchmark:
    """Load a benchmark by name (or take one ``shared_benchmark`` shares), or pass a loaded one through with
    its ``path``'s sha256 when it has none and ``path`` is given.

    Args:
        name: a registered name (see ``list_benchmarks``): "locomo", "longmemeval" (or "longmemeval-oracle"),
            "longmemeval-s", "longmemeval-m", "beam-100k" ... "beam-10m" (BEAM's tiers; "beam" is
            "beam-100k"), "longmemeval-v2-small" ("longmemeval-v2", "lme-v2") and "longmemeval-v2-medium",
            "custom" (needs ``path``), "sample" (bundled); or a Benchmark. A name with a typo raises, naming
            the nearest and the known names.
        path: read this file directly instead of the cache (None: the cached download, fetched when absent
            and ``download``). If it differs from the pinned hash a DatasetWarning names both hashes (a
            modified copy is allowed, never hidden).
        cache_dir: where downloads are kept, one folder per benchmark.
        download: fetch the official file when it is not cached.
        sha256: a hash the file must have (raises on mismatch); overrides the registry's pin.
        problems: None to raise on the first bad record; a list to load leniently (bad records are skipped and
            described there).
        progress: show a download progress bar.

    Returns:
        The Benchmark, with ``sha256`` set to the hash of the file read.

    Raises:
        DatasetError: unknown name, missing file, failed download, hash mismatch (a Benchmark not read from a
            file has none to check), or a malformed dataset.
    """
    sha256 = sha256.strip() if sha256 else None
    shared = _SHARED.get()
    if (
        shared is not None
        and isinstance(name, str)
        and shared[:2] == (name, None if path is None else str(path))
    ):
        name = shared[2]
    if isinstance(name, Benchmark):
        if name.sha256 is None and path is not None:
            name = dataclasses.replace(name, sha256=sha256_file(path))
        if sha256 is not None:  # the pin the user gave (--sha256)
            if name.sha256 is None:
                raise DatasetError(
                    f"benchmark {name.name!r} was not read from a file, so it has no sha256 to check"
                )
            check_sha256(name.sha256, sha256, source=str(path or name.name))
        return name
    spec = get_benchmark_spec(name)
    if spec.is_folder:
        return _load_folder(
            spec, path, cache_dir=cache_dir, download=download, problems=problems, progress=progress
        )
    pin = sha256.lower() if sha256 else spec.sha256
    if path is not None:
        file = Path(path)
        if file.is_dir():
            raise DatasetError(
                f"{file}: a folder, not a dataset file (benchmark {spec.name} reads one file)"
                f"{_looks_like_another(file, spec)}"
            )
        if not file.is_file():
            raise DatasetError(f"{file}: no such dataset file (benchmark {spec.name})")
    elif spec.bundled is not None:
        file = spec.bundled
    else:
        file = _cached(spec, cache_dir, download=download, pin=pin, progress=progress)
    actual = sha256_file(file)
    if path is not None and sha256 is None and pin is not None and actual != pin:
        warnings.warn(
            f"{file}: sha256 {actual} differs from the pinned {spec.name} dataset ({pin}); "
            "results may not compare with published numbers",
            DatasetWarning,
            stacklevel=2,
        )
    elif path is None and spec.bundled is None and pin is not None and actual != pin:
        raise DatasetError(
            f"{file}: the cached {spec.name} file has sha256 {actual}, expected {pin}; delete it or run "
            f"`bench-nb datasets download {spec.name} --force`"
        )
    else:
        check_sha256(actual, pin, source=str(file))
    first_problem = len(problems) if problems is not None else 0
    try:
        benchmark = spec.reader(file, problems)
    except DatasetError as err:
        raise DatasetError(f"{err}{_looks_like_another(file, spec)}") from None
    if problems is not None and len(problems) > first_problem and not benchmark.questions:
        hint = _looks_like_another(file, spec)
        if hint:  # said first: the problems below are every record read against the wrong shape
            problems.insert(first_problem, Problem(str(file), f"no question read{hint}"))
    return dataclasses.replace(benchmark, sha256=actual)


#: The largest file ``_looks_like_another`` reads again to name its benchmark: LongMemEval S (~277 MB) is
#: below it; LongMemEval M (several GB) is not read twice only to word an error.
SNIFF_LIMIT = 512 * 1024 * 1024


def _looks_like_another(path: Path, spec: BenchmarkSpec) -> str:
    """What to say when ``spec`` could not read ``path`` and the file or folder is another benchmark's (the
    reader ``detect_benchmark`` picks is not ``spec``'s): which one, and how to read it as that; else ""."""
    try:
        if path.is_file() and path.stat().st_size > SNIFF_LIMIT:
            return ""
        found = detect_benchmark(path)
        other = get_benchmark_spec(found)
    except (BenchNbError, OSError):
        return ""
    if getattr(other.reader, "func", other.reader) is getattr(spec.reader, "func", spec.reader):
        return ""
    return (
        f"; it looks like a {found} dataset, not {spec.name}: read it as one (-b {found} on the command line, "
        f"load_benchmark({found!r}, path) in Python)"
    )


def _cached(
    spec: BenchmarkSpec | ErrataSpec,
    cache_dir: str | Path,
    *,
    download: bool,
    pin: str | None,
    progress: bool,
    force: bool = False,
) -> Path:
    """A benchmark's (or errata's) file in the cache, downloaded and verified against ``pin`` when it is missing
    (or ``force``: a failed download keeps the copy there)."""
    target = spec.cache_path(cache_dir)
    if target is None or spec.url is None:
        raise DatasetError(
            f"benchmark {spec.name!r} has no download URL: pass the file, "
            f"e.g. load_benchmark({spec.name!r}, 'questions.json') in Python, --dataset FILE on the command line"
        )
    if target.is_file() and not force:
        return target
    if not download:
        raise DatasetError(
            f"{target}: {spec.name} is not downloaded (download=False); run `bench-nb datasets download "
            f"{spec.name}` or pass a local path"
        )
    download_file(spec.url, target, sha256=pin, progress=progress, instead=_local_copy(spec))
    return target


def _local_copy(spec: BenchmarkSpec | ErrataSpec) -> str:
    """What to do when a benchmark (or errata) cannot be downloaded, for both places it is asked for."""
    if isinstance(spec, ErrataSpec):
        return f"pass a local copy of the file instead: load_errata({spec.cache_path().name!r})"
    what, path = ("folder", "DIR") if spec.is_folder else ("file", "FILE")
    return (
        f"pass a local copy of the {what} instead: load_benchmark({spec.name!r}, {path!r}) in Python, "
        f"--dataset {path} on the command line"
    )


def folder_sha256(root: str | Path, relpaths: list[str]) -> str:
    """The hash of a folder benchmark: sha256 of the lines ``"<sha256>  <relative path>"``, one per file, in
    the given order (``sha256sum``'s format, so ``sha256sum -c`` can check a copy)."""
    lines = "".join(f"{sha256_file(Path(root) / rel)}  {rel}\n" for rel in relpaths)
    return hashlib.sha256(lines.encode("utf-8")).hexdigest()


def _load_folder(
    spec: BenchmarkSpec,
    path: str | Path | None,
    *,
    cache_dir: str | Path,
    download: bool,
    problems: list[Problem] | None,
    progress: bool,
) -> Benchmark:
    if path is not None:
        root = Path(path)
        if not root.is_dir():
            layout = (
                "a folder of chat folders (1/, 2/, ..., each holding chat.json)"
                if spec.folder_files is beam_folder_files
                else "a folder holding " + ", ".join(rel for rel, _, _ in spec.files)
            )
            hint = _looks_like_another(root, spec) if root.is_file() else ""
            raise DatasetError(f"{root}: not a folder (benchmark {spec.name} is {layout}){hint}")
        rels = (
            spec.folder_files(root)
            if spec.folder_files is not None
            else [rel for rel, _, _ in spec.files if (root / rel).is_file()]
        )
        pins = {rel: sha for rel, _, sha in spec.files}
        differ = [rel for rel in rels if pins.get(rel) and sha256_file(root / rel) != pins[rel]]
        unknown = [rel for rel in rels if rel not in pins]
        missing = [rel for rel in pins if rel not in rels]
        unpinned = [rel for rel in rels if rel in pins and pins[rel] is None]
        for what, names in (
            (f"have no pinned sha256 in {spec.name} (the project has not obtained them)", unpinned),
            (f"differ from their pins in {spec.name}", differ),
            (f"are not part of {spec.name}", unknown),
            (f"of {spec.name} are missing", missing),
        ):
            if names:
                warnings.warn(
                    f"{root}: {len(names)} file(s) {what} (e.g. {names[0]}); results may not compare with "
                    "published numbers",
                    DatasetWarning,
                    stacklevel=3,
                )
    else:
        root = _cached_folder(spec, cache_dir, download=download, progress=progress)
        rels = [rel for rel, _, _ in spec.files]
    return dataclasses.replace(spec.reader(root, problems), sha256=folder_sha256(root, rels))


def _cached_folder(spec: BenchmarkSpec, cache_dir: str | Path, *, download: bool, progress: bool) -> Path:
    """The cached folder of a folder benchmark, every file present and matching its pin (downloaded when
    missing, if allowed)."""
    root = Path(cache_dir) / spec.name
    unpinned = [(rel, url) for rel, url, sha in spec.files if sha is None]
    if unpinned:
        rel, url = unpinned[0]
        raise DatasetError(
            f"benchmark {spec.name}: {len(unpinned)} of its {len(spec.files)} files have no pinned sha256 yet "
            f"(e.g. {rel}, from {url}; source {spec.source}), so bench_nb will not download it. Download the "
            f"tier yourself and pass its folder (--dataset DIR, or load_benchmark({spec.name!r}, 'DIR'))"
        )
    absent = [(rel, url, sha) for rel, url, sha in spec.files if not (root / rel).is_file()]
    if absent and not download:
        raise DatasetError(
            f"{root}: {spec.name} is not downloaded ({len(absent)} file(s) missing, e.g. {absent[0][0]}; "
            f"download=False); run `bench-nb datasets download {spec.name}` or pass a local folder"
        )
    for rel, url, sha in absent:
        download_file(url, root / rel, sha256=sha, progress=progress, instead=_local_copy(spec))
    for rel, _, sha in spec.files:
        actual = sha256_file(root / rel)
        if actual != sha:
            raise DatasetError(
                f"{root / rel}: the cached {spec.name} file has sha256 {actual}, expected {sha}; delete it or run "
                f"`bench-nb datasets download {spec.name} --force`"
            )
    return root


def fetch_benchmark(
    name: str, *, cache_dir: str | Path = DEFAULT_CACHE_DIR, progress: bool = True, force: bool = False
) -> Path:
    """Download a benchmark's official file (or, named ``<benchmark>-errata``, its errata file) into the cache,
    verified when pinned, and return its path; ``force`` downloads it again (a failed download keeps the copy)."""
    if name.strip().lower() in list_errata():
        errata = get_errata_spec(name)
        return _cached(errata, cache_dir, download=True, pin=errata.sha256, progress=progress, force=force)
    spec = get_benchmark_spec(name)
    target = spec.cache_path(cache_dir)
    if spec.is_folder:
        if force and target is not None:
            for rel, _, sha in spec.files:
                if sha is not None:
                    (target / rel).unlink(missing_ok=True)
        return _cached_folder(spec, cache_dir, download=True, progress=progress)
    return _cached(spec, cache_dir, download=True, pin=spec.sha256, progress=progress, force=force)


def detect_benchmark(path: str | Path) -> str:
    """Guess which registered reader fits a file: by pinned hash first, then by shape.

    Raises:
        DatasetError: the file matches no known shape.
    """
    p = Path(path)
    if p.is_dir():
        if (p / "questions.jsonl").is_file() and (p / "trajectories.jsonl").is_file():
            return (
                "longmemeval-v2-medium"
                if (p / "haystacks" / "lme_v2_medium.json").is_file()
                and not (p / "haystacks" / "lme_v2_small.json").is_file()
                else "longmemeval-v2-small"
            )
        if (p / "chat.json").is_file() or any((c / "chat.json").is_file() for c in p.iterdir() if c.is_dir()):
            tier = p.name.upper()
            return f"beam-{tier.lower()}" if tier in TIERS else "beam-100k"
        raise DatasetError(f"{p}: a folder, but not a BEAM tier (chat folders holding chat.json)")
    actual = sha256_file(p)
    for spec in map(_BENCHMARKS.get, _BENCHMARKS.names()):
        if spec.sha256 == actual:
            return spec.name
    if p.suffix.lower() == ".jsonl":
        return "custom"
    data = read_json(p)
    if isinstance(data, dict) and "conversations" in data:
        return "custom"
    if isinstance(data, list) and data and isinstance(data[0], dict):
        if "qa" in data[0]:
            return "locomo"
        if "question_id" in data[0]:
            return "longmemeval"
    raise DatasetError(f"{p}: not LoCoMo, LongMemEval or the custom format; say which with a benchmark name")


register_benchmark(
    "locomo",
    read_locomo,
    description="LoCoMo: 10 long conversations, 1,986 questions (Maharana et al., ACL 2024; CC BY-NC 4.0)",
    url="https://raw.githubusercontent.com/snap-research/locomo/main/data/locomo10.json",
    sha256="79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4",
    traits=BenchmarkTraits(locomo_questions=True),
    errata=ErrataSpec(
        url=(
            "https://raw.githubusercontent.com/dial481/locomo-audit/"
            "9493fb4b4af4256ed17a18e8fd0b3cfdeec29539/errors.json"
        ),
        sha256="f298ef46263fada20688a1d672be37d4f488c6da3b19343eea55ae5c1b5fe55e",
        description="LoCoMo answer-key errata: 156 entries, 99 wrong gold answers (dial481/locomo-audit; CC BY-NC 4.0)",
    ),
)
_LONGMEMEVAL = BenchmarkTraits(haystack_per_question=True)
register_benchmark(
    "longmemeval",
    read_longmemeval,
    description="LongMemEval oracle split: 500 questions, evidence sessions only (Wu et al., ICLR 2025; MIT)",
    url=f"{_HF}/longmemeval_oracle.json",
    aliases=("longmemeval-oracle",),
    traits=_LONGMEMEVAL,
)
for _split, _size in (("s", "~48 sessions each (~277 MB)"), ("m", "~500 sessions each (several GB)")):
    register_benchmark(
        f"longmemeval-{_split}",
        partial(read_longmemeval, name=f"longmemeval-{_split}"),
        description=f"LongMemEval {_split.upper()}: 500 questions, {_size}",
        url=f"{_HF}/longmemeval_{_split}_cleaned.json",
        traits=_LONGMEMEVAL,
    )


def _read_custom(path: Path, problems: list[Problem] | None = None) -> Benchmark:
    """``custom.read_custom``, imported when a custom file is read: its pydantic models cost a tenth of a
    second that importing the registry (the run format's LoCoMo ids, the errata, every report) never needs."""
    from .custom import read_custom

    return read_custom(path, problems)


register_benchmark(
    "custom", _read_custom, description="your own questions (docs/benchmarks.md); needs a path"
)
register_benchmark(
    "sample",
    _read_custom,
    description="bundled sample: fictional conversations written by the project, for the demo and tests",
    bundled=Path(str(resources.files("bench_nb.benchmarks").joinpath("data", "sample.json"))),
)
_BEAM_CHATS = {"100K": "20 chats of ~128K tokens", "500K": "35 chats", "1M": "35 chats", "10M": "10 chats"}
_BEAM_TIERS = {t.lower(): f"beam-{t.lower()}" for t in TIERS}
for _tier in TIERS:
    _pins = tier_pins(_tier)
    register_benchmark(
        f"beam-{_tier.lower()}",
        partial(read_beam, tier=_tier),
        description=f"BEAM {_tier}: {_BEAM_CHATS[_tier]}, ten abilities, rubric-scored (Tavakoli et al. 2025; "
        "no license file upstream: cite the paper)",
        files=tuple((rel, _pins.url(rel), _pins.sha256.get(rel)) for rel in _pins.files()),
        source=f"github.com/{_pins.repository} at {_pins.commit[:7]}",
        folder_files=beam_folder_files,
        aliases=("beam",) if _tier == "100K" else (),
        traits=BenchmarkTraits(
            default_judges=("rubric",),  # BEAM is scored by its rubric (bench_nb.judges.beam)
            graded=True,
            tiers=_BEAM_TIERS,
            haystacks=_pins.chats,
        ),
    )

# LongMemEval-V2: a folder (questions, trajectories, one haystack file per tier) from its Hugging Face dataset,
# at the revision several independent public harnesses pin, with the sha256 they agree on (docs/benchmarks.md).
# Screenshots are not downloaded.
LMEV2_REVISION = "f152293e235517d504809563c833d7190b8c713b"
_LMEV2_HF = f"https://huggingface.co/datasets/xiaowu0162/longmemeval-v2/resolve/{LMEV2_REVISION}"
_LMEV2_PINS = {
    QUESTIONS_FILE: "0a3ae5ebea938c24d7800e1e0b0828e08ae1646f939a53853b2b8cdc08e292b7",
    TRAJECTORIES_FILE: "363cec9a8e87aa8d9101ce4e600aadbf7031d674056ebe4f969e8424abc5f3c6",
    haystack_file("small"): "9b5301defb23a088a5f06e45ff8d5f35e569d78305a66d492046a9fff9b46593",
    haystack_file("medium"): "4756d5126347f0d18f045bb6c47b08cb3b23e9db24386cc48a9b2879e7969b59",
}
_LMEV2 = BenchmarkTraits(
    default_judges=("lme-v2",),  # each question's eval_function (bench_nb.judges.lmev2)
    tiers={t: f"longmemeval-v2-{t}" for t in LMEV2_TIERS},
    haystack_per_question=True,
    lafs_reference=True,
    question_types=LMEV2_TYPES,
)
for _tier in LMEV2_TIERS:
    register_benchmark(
        f"longmemeval-v2-{_tier}",
        partial(read_longmemeval_v2, tier=_tier),
        description=f"LongMemEval-V2 {_tier}: 451 questions over web-agent trajectories, scored per question "
        "by its eval_function (Wu et al. 2026; Apache-2.0)",
        files=tuple(
            (rel, f"{_LMEV2_HF}/{rel}", _LMEV2_PINS[rel])
            for rel in (QUESTIONS_FILE, TRAJECTORIES_FILE, haystack_file(_tier))
        ),
        source=f"huggingface.co/datasets/xiaowu0162/longmemeval-v2 at {LMEV2_REVISION[:7]}",
        aliases=("longmemeval-v2", "lme-v2") if _tier == "small" else ("lme-v2-medium",),
        traits=_LMEV2,
    )
