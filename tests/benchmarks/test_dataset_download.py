"""Download, cache and verification, against a real HTTP server on 127.0.0.1 (see conftest.file_server)."""

from __future__ import annotations

import hashlib
import warnings
from pathlib import Path

import pytest

from bench_nb.benchmarks import (
    DatasetWarning,
    fetch_benchmark,
    load_benchmark,
    read_custom,
    register_benchmark,
)
from bench_nb.benchmarks.download import download_file
from bench_nb.benchmarks.registry import get_benchmark_spec
from bench_nb.errors import DatasetError

pytestmark = pytest.mark.usefixtures("scratch_registry")


@pytest.fixture
def sample_bytes() -> bytes:
    path = get_benchmark_spec("sample").bundled
    assert path is not None
    return path.read_bytes()


def _register(url: str, sha256: str | None) -> None:
    register_benchmark("remote", read_custom, url=url, sha256=sha256, description="served locally")


def test_download_verifies_caches_and_is_reused(file_server, sample_bytes: bytes, tmp_path: Path) -> None:
    file_server.files["files/remote.json"] = sample_bytes
    sha = hashlib.sha256(sample_bytes).hexdigest()
    _register(file_server.url("files/remote.json"), sha)
    bench = load_benchmark("remote", cache_dir=tmp_path, progress=False)
    cached = tmp_path / "remote" / "remote.json"
    assert cached.read_bytes() == sample_bytes
    assert bench.sha256 == sha and len(bench.questions) == len(load_benchmark("sample").questions)
    assert list((tmp_path / "remote").iterdir()) == [cached]  # no temporary file left behind
    again = load_benchmark("remote", cache_dir=tmp_path, progress=False)
    assert again.questions == bench.questions
    assert file_server.requests == ["/files/remote.json"]  # the second load read the cache


def test_wrong_hash_is_refused_and_nothing_is_cached(
    file_server, sample_bytes: bytes, tmp_path: Path
) -> None:
    file_server.files["remote.json"] = sample_bytes
    wrong = "0" * 64
    _register(file_server.url("remote.json"), wrong)
    with pytest.raises(DatasetError) as err:
        load_benchmark("remote", cache_dir=tmp_path, progress=False)
    actual = hashlib.sha256(sample_bytes).hexdigest()
    assert f"expected {wrong}, got {actual}" in str(err.value)
    assert file_server.url("remote.json") in str(err.value)
    assert not (tmp_path / "remote").exists()  # nor the folder made for it


def test_http_404_is_a_clear_error(file_server, tmp_path: Path) -> None:
    _register(file_server.url("missing.json"), None)
    with pytest.raises(DatasetError, match=r"missing.json: download failed with HTTP 404.*local copy") as err:
        load_benchmark("remote", cache_dir=tmp_path, progress=False)
    # each way to pass a copy worded for where it is typed; no Python argument mixed with a flag
    assert "load_benchmark('remote', 'FILE') in Python, --dataset FILE on the command line" in str(err.value)
    assert "path=" not in str(err.value)
    assert not (tmp_path / "remote").exists()  # no empty folder left behind


def test_a_failed_folder_download_leaves_no_folder(file_server, tmp_path: Path) -> None:
    register_benchmark(
        "remote-folder",
        read_custom,
        files=(
            ("questions.jsonl", file_server.url("questions.jsonl"), "0" * 64),
            ("more/x.json", "", "1" * 64),
        ),
        folder_files=lambda root: ["questions.jsonl"],
    )
    with pytest.raises(DatasetError, match="HTTP 404") as err:
        load_benchmark("remote-folder", cache_dir=tmp_path / "cache", progress=False)
    assert "load_benchmark('remote-folder', 'DIR') in Python, --dataset DIR on the command line" in str(
        err.value
    )
    assert not (tmp_path / "cache").exists()  # the cache folder this load made is gone again, being empty


def test_a_refused_connection_is_a_clear_error(tmp_path: Path) -> None:
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(DatasetError, match=r"download failed: ConnectError"):
        download_file(f"http://127.0.0.1:{port}/x.json", tmp_path / "x.json", progress=False, timeout=2)
    assert not (tmp_path / "x.json").exists()


def test_unpinned_download_warns_and_records_the_hash(
    file_server, sample_bytes: bytes, tmp_path: Path
) -> None:
    file_server.files["remote.json"] = sample_bytes
    _register(file_server.url("remote.json"), None)
    with pytest.warns(DatasetWarning, match="no pinned sha256"):
        bench = load_benchmark("remote", cache_dir=tmp_path, progress=False)
    assert bench.sha256 == hashlib.sha256(sample_bytes).hexdigest()


def test_no_download_when_told_not_to(file_server, tmp_path: Path) -> None:
    _register(file_server.url("remote.json"), None)
    with pytest.raises(
        DatasetError, match=r"not downloaded \(download=False\).*bench-nb datasets download remote"
    ):
        load_benchmark("remote", cache_dir=tmp_path, download=False)
    assert file_server.requests == []


def test_a_corrupted_cache_is_reported_and_force_refetches(
    file_server, sample_bytes: bytes, tmp_path: Path
) -> None:
    file_server.files["remote.json"] = sample_bytes
    sha = hashlib.sha256(sample_bytes).hexdigest()
    _register(file_server.url("remote.json"), sha)
    cached = fetch_benchmark("remote", cache_dir=tmp_path, progress=False)
    cached.write_bytes(sample_bytes[:-10])
    with pytest.raises(DatasetError, match=rf"cached remote file has sha256 .*expected {sha}.*--force"):
        load_benchmark("remote", cache_dir=tmp_path)
    fetch_benchmark("remote", cache_dir=tmp_path, progress=False, force=True)
    assert load_benchmark("remote", cache_dir=tmp_path).sha256 == sha
    assert len(file_server.requests) == 2


def test_a_failed_forced_download_keeps_the_good_cached_copy(
    file_server, sample_bytes: bytes, tmp_path: Path
) -> None:
    file_server.files["remote.json"] = sample_bytes
    _register(file_server.url("remote.json"), hashlib.sha256(sample_bytes).hexdigest())
    cached = fetch_benchmark("remote", cache_dir=tmp_path, progress=False)
    file_server.files["remote.json"] = sample_bytes[:-10]  # upstream changed: the download fails its pin
    with pytest.raises(DatasetError, match="sha256 mismatch"):
        fetch_benchmark("remote", cache_dir=tmp_path, progress=False, force=True)
    assert cached.read_bytes() == sample_bytes


def test_explicit_path_that_differs_from_the_pin_warns(tmp_path: Path, sample_bytes: bytes) -> None:
    copy = tmp_path / "modified.json"
    copy.write_bytes(sample_bytes.replace(b"Pilot", b"Pilat"))
    register_benchmark("pinned", read_custom, url="http://127.0.0.1:9/none.json", sha256="ab" * 32)
    with pytest.warns(DatasetWarning, match=r"differs from the pinned pinned dataset"):
        bench = load_benchmark("pinned", copy)
    assert bench.sha256 == hashlib.sha256(copy.read_bytes()).hexdigest()
    with pytest.raises(DatasetError, match="sha256 mismatch: expected"):
        load_benchmark("pinned", copy, sha256="cd" * 32)  # a hash asked for explicitly must match
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_benchmark("pinned", copy, sha256=bench.sha256)
