"""Small project-written memory sets for the ROI tests, in both import formats (built in the test)."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

KNOWLEDGE = ("decision", "gotcha", "convention")


def mem(
    id: str,
    scope: str,
    kind: str,
    content: str,
    created_at: str,
    *,
    owner: str | None = None,
    visibility: str = "private",
    invalidated_at: str | None = None,
) -> dict[str, Any]:
    owner = owner or scope.split(".")[1]
    out = {
        "id": id,
        "owner": owner,
        "scope": scope,
        "visibility": visibility,
        "kind": kind,
        "content": content,
        "created_at": created_at,
    }
    if invalidated_at:
        out["invalidated_at"] = invalidated_at
    return out


def alice_and_bob() -> list[dict[str, Any]]:
    """Two owners; alice has two projects and a team bob belongs to; 24 probeable memories for alice."""
    rows = [
        mem(
            "a-web-1",
            "proj.alice.web",
            "decision",
            "We deploy the storefront with blue-green switches on Fridays.",
            "2024-03-01T10:00:00Z",
            visibility="shared",
        ),
        mem(
            "a-web-2",
            "proj.alice.web",
            "gotcha",
            "The Safari checkout breaks when the cart cookie exceeds 4 KB.",
            "2024-03-02T10:00:00Z",
        ),
        mem(
            "a-web-3",
            "proj.alice.web",
            "convention",
            "Component files are named in kebab-case under src/ui.",
            "2024-03-03T10:00:00Z",
        ),
        mem(
            "a-web-ep",
            "proj.alice.web",
            "episode",
            "Pairing session with Carol on the invoice page.",
            "2024-03-04T10:00:00Z",
        ),
        mem("a-web-task", "proj.alice.web", "task", "Upgrade the router to v7.", "2024-03-05T10:00:00Z"),
        # another project of alice whose memory is the best lexical match for a-web-1's template question
        mem(
            "a-api-1",
            "proj.alice.api",
            "fact",
            'What did we decide about "We deploy the storefront with blue-green switches on Fridays"? Not this: the API deploys on Tuesdays.',
            "2024-03-06T10:00:00Z",
        ),
        mem(
            "a-api-2",
            "proj.alice.api",
            "decision",
            "The billing API returns amounts in integer cents.",
            "2024-03-07T10:00:00Z",
        ),
        mem(
            "a-personal",
            "user.alice",
            "preference",
            "Alice prefers short commit messages in the imperative mood.",
            "2024-01-01T10:00:00Z",
        ),
        mem(
            "a-core",
            "user.alice.core",
            "fact",
            "Alice's laptop runs Debian with zsh.",
            "2024-01-02T10:00:00Z",
        ),
        mem(
            "a-team-1",
            "team.alice.platform",
            "convention",
            "Every service exposes /healthz returning JSON.",
            "2024-03-08T10:00:00Z",
            visibility="shared",
        ),
        mem(
            "a-team-private",
            "team.alice.platform",
            "gotcha",
            "Alice's private note: the staging VPN drops after 8 hours.",
            "2024-03-09T10:00:00Z",
        ),
        # bob: his own project with a memory that matches alice's question best, private and shared
        mem(
            "b-web-1",
            "proj.bob.web",
            "decision",
            'What did we decide about "We deploy the storefront with blue-green switches on Fridays"? Bob decided Mondays.',
            "2024-03-10T10:00:00Z",
        ),
        mem(
            "b-web-2",
            "proj.bob.web",
            "gotcha",
            "Bob's cron jobs must be idempotent because the scheduler retries.",
            "2024-03-11T10:00:00Z",
            visibility="shared",
        ),
        mem(
            "b-personal",
            "user.bob",
            "decision",
            "Bob reviews pull requests before noon.",
            "2024-03-12T10:00:00Z",
        ),
        mem(
            "b-team",
            "team.alice.platform",
            "gotcha",
            "Bob found that /healthz must not hit the database.",
            "2024-03-13T10:00:00Z",
            owner="bob",
            visibility="shared",
        ),
    ]
    for n in range(21):  # older knowledge for top-ups
        kind = KNOWLEDGE[n % 3]
        rows.append(
            mem(
                f"a-old-{n:02d}",
                "proj.alice.web",
                kind,
                f"Legacy rule number {n} about the quarry{n} module.",
                f"2023-01-{n + 1:02d}T09:00:00Z",
            )
        )
    return rows


MEMBERS = [{"record": "member", "scope": "team.alice.platform", "member": "bob"}]


def write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def front_matter_file(row: dict[str, Any], **extra: Any) -> str:
    keys = [
        "id",
        "kind",
        "scope",
        "visibility",
        "lang",
        "created_at",
        "author_kind",
        "agent_name",
        "superseded_by",
        "invalidated_at",
    ]
    values = {"lang": "en", "author_kind": "agent", "agent_name": "claude", **row, **extra}
    lines = ["---"] + [f"{k}: {values[k]}" for k in keys if values.get(k) is not None]
    lines.append('source: {"tool": "memory-export", "session": "s-1"}')
    lines.append("unknown_key: ignored")
    lines += ["---", "", row["content"], ""]
    return "\n".join(lines)


def write_export_zip(path: Path, rows: Iterable[dict[str, Any]]) -> Path:
    """The memory export: ``<scope>/<slug>.md``, invalidated ones under ``archive/<scope>/<slug>.md``."""
    with zipfile.ZipFile(path, "w") as zf:
        for row in rows:
            folder = f"archive/{row['scope']}" if row.get("invalidated_at") else row["scope"]
            zf.writestr(f"{folder}/{row['id']}.md", front_matter_file(row))
        zf.writestr("README.txt", "not a memory")
    return path
