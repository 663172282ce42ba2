"""The memory model of the ROI benchmark: memories, kinds, visibility and scopes.

Scopes are dotted labels that carry their owner:

- ``user.<owner>``: the owner's personal layer;
- ``user.<owner>.core``: the owner's portable facts;
- ``proj.<owner>.<slug>``: a project;
- ``team.<owner>.<slug>``: a team, whose members are listed in the store (``scope_members``).

A session attached to a project reads that project plus the owner's personal and core layers: that is the
*pinned* read set of a probe (:func:`pinned_scopes`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from bench_nb.roi.errors import MemoryImportError

MemoryKind = Literal[
    "fact", "decision", "preference", "convention", "gotcha", "reference", "episode", "task", "open-question"
]
Visibility = Literal["private", "shared"]

#: Only knowledge kinds are probed (never episodes, tasks or open questions).
PROBE_KINDS: tuple[str, ...] = ("decision", "gotcha", "convention")

_LABEL = r"[A-Za-z0-9_-]+"
_SCOPE_RE = re.compile(rf"^(?:user\.(?P<u>{_LABEL})(?:\.core)?|(?:proj|team)\.(?P<p>{_LABEL})\.{_LABEL})$")


@dataclass(frozen=True)
class Memory:
    """One stored memory. ``invalidated_at`` is set when it was forgotten or superseded."""

    id: str
    owner: str
    scope: str
    visibility: Visibility
    kind: MemoryKind
    content: str
    created_at: str  # ISO-8601 UTC, see normalize_time
    invalidated_at: str | None = None
    lang: str | None = None
    source: str | None = None  # one-line JSON as exported


@dataclass(frozen=True)
class ScopeMember:
    """``member`` may read the shared memories of ``scope`` (a team or project)."""

    scope: str
    member: str


def scope_owner(scope: str) -> str:
    """The owner label of a scope, e.g. ``proj.alice.web`` -> ``alice``.

    Raises:
        ValueError: the scope is not one of the four documented shapes.
    """
    match = _SCOPE_RE.match(scope)
    if match is None:
        raise ValueError(
            f"scope {scope!r} is not user.<owner>, user.<owner>.core, proj.<owner>.<slug> or team.<owner>.<slug>"
        )
    return match.group("u") or match.group("p")


def pinned_scopes(owner: str, source_scope: str) -> tuple[str, ...]:
    """The scopes a probe may read: its source scope plus the owner's personal and core layers."""
    scopes = [source_scope, f"user.{owner}", f"user.{owner}.core"]
    return tuple(dict.fromkeys(scopes))


def can_read(reader: str, memory: Memory, members: frozenset[str] = frozenset()) -> bool:
    """Whether ``reader`` may read ``memory``: the rule every recall applies.

    A reader reads their own memories (private or shared), and the shared memories of a scope they belong to:
    the scope's owner label, or a member listed for that scope (``members``). Private memories of others never.
    """
    if memory.owner == reader:
        return True
    if memory.visibility != "shared":
        return False
    try:
        label = scope_owner(memory.scope)
    except ValueError:
        return False
    return label == reader or reader in members


def normalize_time(value: str | datetime, *, where: str = "", field: str = "created_at") -> str:
    """An ISO-8601 time as a UTC string that sorts lexicographically (``2024-05-01T10:00:00.000000Z``).

    A time without a zone is taken as UTC.

    Raises:
        MemoryImportError: the value is not an ISO-8601 time.
    """
    if isinstance(value, datetime):
        moment = value
    else:
        try:
            moment = datetime.fromisoformat(str(value).strip())
        except ValueError:
            raise MemoryImportError(where, f"{value!r} is not an ISO-8601 time", field=field) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def utc_now() -> str:
    """Now, in the store's time format."""
    return normalize_time(datetime.now(UTC))
