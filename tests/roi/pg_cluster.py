"""A throwaway Postgres server for the tests: Debian's postgresql package, a cluster in a temporary directory,
listening on a Unix socket only (no TCP), trust authentication, stopped at the end of the session.

The server refuses to run as root, so as root (CI) the cluster belongs to the unprivileged user ``nobody`` and
initdb/pg_ctl run as that user; otherwise as the current user.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

ADMIN = "roi_admin"


def find_bindir() -> Path | None:
    """The directory holding initdb and pg_ctl (Debian's /usr/lib/postgresql/<major>/bin, or PATH)."""
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    if candidates:
        return Path(candidates[-1]).parent
    found = shutil.which("initdb")
    return Path(found).parent if found else None


@dataclass
class Cluster:
    bindir: Path
    root: Path
    user: str | None  # the unprivileged user running the server (None: the current user)

    @property
    def socket_dir(self) -> Path:
        return self.root

    def url(self, role: str = ADMIN, database: str = "postgres") -> str:
        return f"postgresql://{role}@/{database}?host={self.socket_dir}"

    def _run(self, *args: str) -> None:
        subprocess.run(
            [str(self.bindir / args[0]), *args[1:]],
            check=True,
            capture_output=True,
            user=self.user,
            cwd=self.root,
        )

    def start(self) -> None:
        data = self.root / "data"
        self._run("initdb", "-D", str(data), "-U", ADMIN, "--auth=trust", "-E", "UTF8", "--no-locale")
        options = f"-c listen_addresses='' -k {self.socket_dir} -c fsync=off -c full_page_writes=off"
        # -t 300: pg_ctl's own 60 s wait can run out on two shared cores (a wait, not a speed check)
        self._run(
            "pg_ctl", "-D", str(data), "-o", options, "-l", str(self.root / "log"), "-w", "-t", "300", "start"
        )

    def stop(self) -> None:
        try:
            self._run("pg_ctl", "-D", str(self.root / "data"), "-m", "immediate", "-w", "-t", "300", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


def start_cluster() -> Cluster | str:
    """A running cluster, or the reason there is none."""
    bindir = find_bindir()
    if bindir is None:
        return "Postgres is not installed (apt-get install postgresql: initdb and pg_ctl not found)"
    root = Path(tempfile.mkdtemp(prefix="bnb-pg-", dir="/tmp"))  # short: a Unix socket path is <108 bytes
    user = None
    if os.geteuid() == 0:
        user = "nobody"
        shutil.chown(root, user=user)
    cluster = Cluster(bindir, root, user)
    try:
        cluster.start()
    except (subprocess.CalledProcessError, OSError) as err:
        detail = getattr(err, "stderr", b"") or b""
        log = root / "log"
        tail = log.read_text(errors="replace")[-500:] if log.exists() else ""
        return f"cannot start a throwaway Postgres in {root}: {err} {detail.decode(errors='replace')} {tail}"
    return cluster
