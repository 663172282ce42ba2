"""Identical requests made at once share one call and one reply, in threads and in processes sharing the
cache file, and a rerun replays exactly that reply (issue 31: 20 identical questions each got their own reply
while the cache kept the last one, so a run scored 75% and its rerun from the cache 100%).

The server (tests/llm_server.py, real HTTP on 127.0.0.1) numbers its replies, so any second call shows.
"""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from llm_settings import SECRET, fast_settings

from bench_nb.models.client import LLMClient
from llm_server import LLMServer

MSGS = [{"role": "user", "content": "Is the answer yes or no?"}]
SRC = Path(__file__).resolve().parents[2] / "src"


def numbered(server: LLMServer, delay: float) -> None:
    """Reply ``reply-1``, ``reply-2``, ... each after ``delay`` seconds."""
    counter = itertools.count(1)
    lock = threading.Lock()

    def respond(path: str, body: dict[str, Any]) -> str:
        with lock:
            n = next(counter)
        time.sleep(delay)
        return f"reply-{n}"

    server.responder = respond


def test_threads_asking_the_same_at_once_share_one_call(
    llm_server: LLMServer, tmp_path: Path, keys: str
) -> None:
    numbered(llm_server, delay=0.5)
    client = LLMClient(fast_settings(llm_server, tmp_path / "llm.sqlite", timeout_s=10.0))
    with ThreadPoolExecutor(20) as pool:
        replies = list(pool.map(lambda _: client.complete("gpt-4o-mini", MSGS), range(20)))
    assert {r.text for r in replies} == {"reply-1"}
    assert llm_server.count() == 1
    assert sorted(r.cached for r in replies) == [False] + [True] * 19
    assert client.usage.as_dict()["httpAttempts"] == 1
    rerun = LLMClient(fast_settings(llm_server, tmp_path / "llm.sqlite")).complete("gpt-4o-mini", MSGS)
    assert (rerun.text, rerun.cached, llm_server.count()) == ("reply-1", True, 1)


CHILD = """
import json, os, sys, time
from concurrent.futures import ThreadPoolExecutor
sys.path[:0] = [{tests!r}, {models!r}]
from types import SimpleNamespace
from bench_nb.models.client import LLMClient
from llm_settings import fast_settings

server = SimpleNamespace(openai_base_url=sys.argv[1], base_url=sys.argv[1])  # the parent's server
client = LLMClient(fast_settings(server, sys.argv[2], timeout_s=float(sys.argv[5])))
print("ready", flush=True)
while not os.path.exists(sys.argv[3]):
    time.sleep(0.01)
threads = int(sys.argv[4])
with ThreadPoolExecutor(threads) as pool:
    replies = list(pool.map(lambda _: client.complete("gpt-4o-mini", {msgs!r}), range(threads)))
print(json.dumps([[r.text, r.cached] for r in replies]), flush=True)
"""


def _child_script(tmp_path: Path) -> Path:
    tests = Path(__file__).resolve().parents[1]
    script = tmp_path / "child.py"
    script.write_text(
        textwrap.dedent(CHILD).format(tests=str(tests), models=str(tests / "models"), msgs=MSGS)
    )
    return script


def _start(
    script: Path, server: LLMServer, cache: Path, go: Path, threads: int, timeout_s: float = 60.0
) -> subprocess.Popen[str]:
    """A child process with ``threads`` threads asking the same once ``go`` exists (its imports done)."""
    server.idle_timeout = 900.0  # a child's imports can take a minute on a busy machine
    env = {**os.environ, "PYTHONPATH": str(SRC), "OPENAI_API_KEY": SECRET}
    proc = subprocess.Popen(
        [
            sys.executable,
            str(script),
            server.openai_base_url,
            str(cache),
            str(go),
            str(threads),
            str(timeout_s),
        ],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    return proc


def test_processes_sharing_the_cache_file_share_one_call(llm_server: LLMServer, tmp_path: Path) -> None:
    import json

    numbered(llm_server, delay=1.0)
    script, cache, go = _child_script(tmp_path), tmp_path / "llm.sqlite", tmp_path / "go"
    procs = [_start(script, llm_server, cache, go, threads=5) for _ in range(4)]
    go.touch()
    replies = []
    for proc in procs:
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0
        replies.extend(json.loads(out.strip().splitlines()[-1]))
    assert len(replies) == 20 and {text for text, _ in replies} == {"reply-1"}
    assert llm_server.count() == 1
    assert sorted(cached for _, cached in replies) == [False] + [True] * 19


def test_a_killed_callers_claim_is_taken_over(llm_server: LLMServer, tmp_path: Path) -> None:
    """The process calling for everyone dies mid-call: a waiting process sees its claim's process gone, calls
    itself, and the reply it stores is the one kept."""
    import json

    release = threading.Event()
    counter = itertools.count(1)

    def respond(path: str, body: dict[str, Any]) -> str:
        n = next(counter)
        if n == 1:
            release.wait(60)  # the first caller's reply never comes while it lives
        return f"reply-{n}"

    llm_server.responder = respond
    script, cache = _child_script(tmp_path), tmp_path / "llm.sqlite"
    first = _start(script, llm_server, cache, tmp_path / "go1", threads=1, timeout_s=600.0)
    second = _start(script, llm_server, cache, tmp_path / "go2", threads=2)
    (tmp_path / "go1").touch()
    deadline = time.monotonic() + 60
    while llm_server.count() < 1 and time.monotonic() < deadline:
        time.sleep(0.02)
    (tmp_path / "go2").touch()
    time.sleep(1.0)
    assert llm_server.count() == 1  # the second waits for the first's claim
    os.kill(first.pid, signal.SIGKILL)
    first.wait()
    out, _ = second.communicate(timeout=60)
    release.set()
    assert second.returncode == 0
    assert {text for text, _ in json.loads(out.strip().splitlines()[-1])} == {"reply-2"}
    assert llm_server.count() == 2


OPENER = """
import os, sys, time
sys.path[:0] = [{src!r}]
from bench_nb.models.cache import ResponseCache

print("ready", flush=True)
while not os.path.exists(sys.argv[1]):
    time.sleep(0.001)
for i in range(40):
    ResponseCache(os.path.join(sys.argv[2], f"cache-{{i}}.sqlite")).put({{"i": i}}, "reply", 1, 1)
"""


def test_processes_opening_a_new_cache_file_at_once_all_open_it(tmp_path: Path) -> None:
    """A client opens its cache on its first call, so processes started together (a sweep's runs sharing one
    cache) open a new cache file at the same moment: each must open it, not fail with "database is locked"
    (switching a new file to WAL does not wait SQLite's busy timeout)."""
    script, go = tmp_path / "opener.py", tmp_path / "go"
    script.write_text(textwrap.dedent(OPENER).format(src=str(SRC)))
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), str(go), str(tmp_path)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(6)
    ]
    for proc in procs:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    go.touch()
    errors = [proc.communicate(timeout=120)[1] for proc in procs]
    assert [e for e in errors if e] == [] and all(p.returncode == 0 for p in procs)
