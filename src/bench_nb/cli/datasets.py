"""``bench-nb datasets``: list the registered benchmarks, download one into the cache, verify a file."""

from __future__ import annotations

import collections
import warnings
from pathlib import Path
from typing import Any

import click

from bench_nb.benchmarks import (
    DatasetWarning,
    detect_benchmark,
    fetch_benchmark,
    get_benchmark_spec,
    list_benchmarks,
    load_benchmark,
)
from bench_nb.benchmarks.download import sha256_file
from bench_nb.benchmarks.errata import load_errata
from bench_nb.benchmarks.registry import folder_sha256, get_errata_spec, list_errata
from bench_nb.cli import Group
from bench_nb.errors import DatasetError, Problem
from bench_nb.registry import did_you_mean

_CACHE = click.option(
    "--cache-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default="data/benchmarks",
    show_default=True,
    help="Where downloaded datasets are kept.",
)


@click.group(cls=Group)
def datasets() -> None:
    """Benchmark datasets: list, download (verified by sha256), verify."""


@datasets.command("list")
@_CACHE
def list_cmd(cache_dir: Path) -> None:
    """The registered benchmarks, their pinned hash and whether they are cached."""
    for name in list_benchmarks():
        spec = get_benchmark_spec(name)
        aliases = f" (alias {', '.join(spec.aliases)})" if spec.aliases else ""
        click.echo(f"{name}{aliases}: {spec.description}")
        cached = spec.cache_path(cache_dir)
        if spec.bundled is not None:
            where = "bundled with the package"
        elif cached is None:
            where = "no download: pass your file"
        else:
            where = f"cached at {cached}" if spec.is_cached(cache_dir) else "not downloaded"
        if spec.is_folder:
            pinned = sum(1 for _, _, sha in spec.files if sha)
            pin = f"{pinned} of {len(spec.files)} files pinned ({spec.source})"
        else:
            pin = f"sha256 {spec.sha256}" if spec.sha256 else ("unpinned" if spec.url else "")
        click.echo("    " + "; ".join(x for x in (where, pin) if x))
        if (errata := spec.errata) is not None:
            click.echo(f"{errata.name} (answer-key errata for {name}): {errata.description}")
            cached = errata.cache_path(cache_dir)
            where = f"cached at {cached}" if cached.is_file() else "not downloaded"
            click.echo(f"    {where}; sha256 {errata.sha256}")


@datasets.command()
@click.argument("name")
@_CACHE
@click.option("--force", is_flag=True, help="Download again even when a cached copy exists.")
def download(name: str, cache_dir: Path, force: bool) -> None:
    """Download NAME from its official URL into the cache, verifying its sha256."""
    if name.lower() in list_errata():
        path = fetch_benchmark(name, cache_dir=cache_dir, force=force)
        click.echo(f"{name.lower()}: {path}")
        click.echo(f"sha256 {sha256_file(path)} (verified)")
        return
    spec = _dataset_spec(name)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DatasetWarning)
        path = fetch_benchmark(spec.name, cache_dir=cache_dir, force=force)
    click.echo(f"{spec.name}: {path}")
    if spec.is_folder:
        actual = folder_sha256(path, [rel for rel, _, _ in spec.files])
        click.echo(f"sha256 {actual} (the list of its {len(spec.files)} files' hashes, each verified)")
    else:
        actual = sha256_file(path)
        click.echo(f"sha256 {actual} ({'verified' if spec.sha256 else 'unpinned: recorded, not verified'})")
    for w in caught:
        click.echo(f"warning: {w.message}", err=True)


@datasets.command()
@click.argument("target")
@click.option("-b", "--benchmark", help="Read the file as this benchmark (default: detect).")
@click.option("--sha256", "expected", help="The hash the file must have.")
@_CACHE
def verify(target: str, benchmark: str | None, expected: str | None, cache_dir: Path) -> None:
    """Check a dataset: TARGET is a benchmark name (its cached copy) or a file path.

    Prints the file's sha256 against the pin, then loads it and prints what it holds; every record that
    cannot be read is listed. Exits with status 1 on a hash mismatch or unreadable records.
    """
    path = Path(target)
    errata = list_errata()
    if (benchmark or "").lower() in errata or (not path.exists() and target.lower() in errata):
        _verify_errata(path if path.exists() else None, benchmark or target, expected, cache_dir)
        return
    if path.exists():
        name = benchmark or detect_benchmark(path)
    else:
        spec = _dataset_spec(target)
        name = spec.name
        cached = spec.cache_path(cache_dir)
        if spec.bundled is not None:
            path = spec.bundled
        elif cached is None or not spec.is_cached(cache_dir):
            raise DatasetError(f"{target}: not downloaded; run `bench-nb datasets download {target}`")
        else:
            path = cached
    spec = get_benchmark_spec(name)
    if spec.is_folder:
        _verify_folder(spec, path, cache_dir)
        return
    pin = (expected or spec.sha256 or "").lower() or None
    actual = sha256_file(path)
    click.echo(f"file: {path}")
    click.echo(f"benchmark: {spec.name}")
    click.echo(f"sha256: {actual}")
    ok = pin in (None, actual)
    unpinned = "pin: none (unpinned: the hash above is what a run records)"
    click.echo(unpinned if pin is None else "pin: matches" if ok else f"pin: MISMATCH, expected {pin}")
    _holds(spec, path, ok, cache_dir)


def _dataset_spec(name: str) -> Any:
    """The benchmark registered as ``name``; for an unknown name, an error offering the nearest of every
    dataset ``download`` and ``verify`` take (benchmarks, their aliases and the errata files), sorted."""
    try:
        return get_benchmark_spec(name)
    except DatasetError:
        benchmarks = {a for b in list_benchmarks() for a in (b, *get_benchmark_spec(b).aliases)}
        known = sorted({*benchmarks, *list_errata()})
        raise DatasetError(
            f"unknown dataset {name!r}{did_you_mean(name, known)}; known: {', '.join(known)}"
        ) from None


def _verify_errata(path: Path | None, name: str, expected: str | None, cache_dir: Path) -> None:
    """``verify`` for an errata file: its hash against the pin, then what it holds."""
    spec = get_errata_spec(name)
    file = path or spec.cache_path(cache_dir)
    if not file.is_file():
        raise DatasetError(f"{name}: not downloaded; run `bench-nb datasets download {spec.name}`")
    pin = (expected or spec.sha256).lower()
    actual = sha256_file(file)
    click.echo(f"file: {file}")
    click.echo(f"errata: {spec.name} (answer key of {spec.benchmark})")
    click.echo(f"sha256: {actual}")
    click.echo("pin: matches" if actual == pin else f"pin: MISMATCH, expected {pin}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DatasetWarning)
        errata = load_errata(file)
    click.echo(f"holds: {len(errata)} entries, {len(errata.wrong_gold)} wrong gold answers")
    for etype, n in errata.counts().items():
        click.echo(f"    {etype}: {n}")
    for p in errata.problems:
        click.echo(f"problem: {p}", err=True)
    if errata.problems or actual != pin:
        raise SystemExit(1)


def _verify_folder(spec: Any, root: Path, cache_dir: Path) -> None:
    """``verify`` of a folder benchmark (BEAM's tiers): every file against its pin, then what it holds."""
    pins = {rel: sha for rel, _, sha in spec.files}
    ok = True
    click.echo(f"folder: {root}")
    click.echo(f"benchmark: {spec.name} ({spec.source})")
    for rel, sha in pins.items():
        file = root / rel
        if not file.is_file():
            click.echo(f"missing: {rel}")
            ok = False
        elif sha is None:
            click.echo(f"unpinned: {rel} sha256 {sha256_file(file)}")
        elif sha256_file(file) != sha:
            click.echo(f"MISMATCH: {rel}, expected {sha}")
            ok = False
    _holds(spec, root, ok, cache_dir)


def _holds(spec: Any, path: Path, ok: bool, cache_dir: Path) -> None:
    """The end of ``verify``: what the dataset holds (a folder's hash first) and every record that cannot be
    read; exit 1 on one, or when a hash did not match (``ok`` False)."""
    problems: list[Problem] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DatasetWarning)
        bench = load_benchmark(spec.name, path, problems=problems, progress=False, cache_dir=cache_dir)
    if spec.is_folder:
        click.echo(f"sha256: {bench.sha256}")
    sessions = sum(len(h.sessions) for h in bench.haystacks.values())
    messages = sum(len(s.messages) for h in bench.haystacks.values() for s in h.sessions)
    click.echo(
        f"holds: {len(bench.questions)} questions, {len(bench.haystacks)} haystacks, "
        f"{sessions} sessions, {messages} messages"
    )
    for qtype, n in collections.Counter(q.question_type for q in bench.questions).items():
        click.echo(f"    {qtype}: {n}")
    click.echo(f"    (abstention: {sum(q.is_abstention for q in bench.questions)})")
    for p in problems:
        click.echo(f"problem: {p}", err=True)
    if problems or not ok:
        raise SystemExit(1)
