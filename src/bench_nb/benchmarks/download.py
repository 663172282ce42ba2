"""Downloading a dataset file from its official URL, verified by sha256 and written atomically.

A download streams into a temporary file beside the target while hashing it; only a file whose hash matches the
pin is renamed into place, so the cache never holds a partial or unverified copy of a pinned dataset.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import warnings
from pathlib import Path

from bench_nb.errors import DatasetError

_CHUNK = 1 << 20


class DatasetWarning(UserWarning):
    """A dataset was read without a pinned hash to check it against, or with a hash that differs from the pin."""


def sha256_file(path: str | Path) -> str:
    """The hex sha256 of a file, read in chunks."""
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def check_sha256(actual: str, expected: str | None, *, source: str) -> None:
    """Raise a DatasetError naming both hashes unless ``actual`` equals ``expected`` (no-op without a pin)."""
    if expected is not None and actual.lower() != expected.lower():
        raise DatasetError(
            f"{source}: sha256 mismatch: expected {expected.lower()}, got {actual}. The file is not the pinned "
            "dataset (a modified mirror, a partial download, or a newer upstream version)."
        )


def download_file(
    url: str,
    dest: str | Path,
    *,
    sha256: str | None = None,
    progress: bool = True,
    timeout: float = 60.0,
    instead: str = "",
) -> str:
    """Download ``url`` to ``dest`` atomically and return the file's sha256.

    Args:
        url: where to fetch the file (redirects are followed).
        dest: the final path; its directory is created. Nothing is written there unless the download completes
            and, when ``sha256`` is given, the hash matches.
        sha256: the expected hex digest. Without it the file is kept and a DatasetWarning says it is
            unverified; the returned hash is what the caller should record.
        progress: show a progress bar (tqdm.auto: a widget in Jupyter, text in a terminal).
        timeout: seconds allowed for connecting and between received chunks.
        instead: what to do instead when the download fails, worded for the caller (``load_benchmark``
            names its path argument and ``--dataset``; ``load_errata`` its path), added to the error.

    Raises:
        DatasetError: on an HTTP error status, a network error, or a hash mismatch (naming expected and actual).
            A directory made for ``dest`` is removed again when the download fails and leaves it empty.
    """
    target = Path(dest)
    made = [d for d in (target.parent, *target.parent.parents) if not d.exists()]  # deepest first
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        return _download(url, target, sha256, progress, timeout, f"; {instead}" if instead else "")
    except BaseException:
        for folder in made:  # only what this call made, and only while empty
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise


def _download(url: str, target: Path, sha256: str | None, progress: bool, timeout: float, hint: str) -> str:
    import httpx  # imported here: only downloads need it
    from tqdm.auto import tqdm

    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    tmp = Path(tmp_name)
    digest = hashlib.sha256()
    try:
        with os.fdopen(fd, "wb") as out:
            try:
                with httpx.stream("GET", url, follow_redirects=True, timeout=timeout) as response:
                    if response.status_code != 200:
                        raise DatasetError(
                            f"{url}: download failed with HTTP {response.status_code} {response.reason_phrase}"
                            + hint
                        )
                    length = response.headers.get("content-length")
                    total = int(length) if length and length.isdigit() else None
                    with tqdm(
                        total=total,
                        unit="B",
                        unit_scale=True,
                        unit_divisor=1024,
                        desc=target.name,
                        disable=not progress,
                        leave=False,
                    ) as bar:
                        for chunk in response.iter_bytes(_CHUNK):
                            out.write(chunk)
                            digest.update(chunk)
                            bar.update(len(chunk))
            except httpx.HTTPError as err:
                raise DatasetError(
                    f"{url}: download failed: {err.__class__.__name__}: {err}" + hint
                ) from None
            out.flush()
            os.fsync(out.fileno())
        actual = digest.hexdigest()
        check_sha256(actual, sha256, source=url)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    if sha256 is None:
        warnings.warn(
            f"{url}: no pinned sha256 to verify against; downloaded file has sha256 {actual}",
            DatasetWarning,
            stacklevel=3,  # download_file's caller
        )
    return actual
