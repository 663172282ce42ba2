"""Reading memories: JSONL (one memory a line) and the memory export zip (one Markdown file per memory).

Both formats are documented in docs/roi.md. :func:`read_memories` reads either (by extension), and
:func:`import_memories` writes what it read into the store: a known id is updated (so re-importing a newer
export marks forgotten memories invalidated), a new id is inserted.

An import is made by one owner and may only grant what that owner has: the owner's own memories, in scopes the
owner owns or is a member of, and memberships in scopes the owner owns. An admin import (``admin=True``)
writes several owners' files as they are and is logged as such in the store's ``import_log``. On Postgres the
database enforces the same rules (an owner's import is written in the owner's role, under row-level security).
"""

from __future__ import annotations

import getpass
import json
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from bench_nb.errors import Problem
from bench_nb.roi.errors import MemoryImportError
from bench_nb.roi.memory import Memory, MemoryKind, ScopeMember, Visibility, normalize_time, scope_owner
from bench_nb.roi.store import RoiStore, borrow_store

ARCHIVE_DIR = "archive"


class MemoryLine(BaseModel):
    """One memory as written on disk (a JSONL line, or an export file's front matter plus its content)."""

    model_config = ConfigDict(extra="ignore")

    id: str = Field(min_length=1)
    owner: str | None = None
    scope: str
    visibility: Visibility = "private"
    kind: MemoryKind
    content: str
    created_at: str
    invalidated_at: str | None = None
    lang: str | None = None
    source: Any = None

    @field_validator("scope")
    @classmethod
    def _scope_shape(cls, value: str) -> str:
        scope_owner(value)  # raises ValueError with the accepted shapes
        return value


class MemberLine(BaseModel):
    """A JSONL line ``{"record": "member", "scope": ..., "member": ...}``: ``member`` may read ``scope``."""

    model_config = ConfigDict(extra="ignore")

    scope: str
    member: str = Field(min_length=1)


@dataclass(frozen=True)
class MemoryFile:
    """What a memory file held, and (lenient mode) what could not be read."""

    memories: tuple[Memory, ...]
    members: tuple[ScopeMember, ...] = ()
    problems: tuple[Problem, ...] = ()


@dataclass(frozen=True)
class ImportSummary:
    """What :func:`import_memories` did."""

    path: str
    inserted: int
    updated: int
    members: int
    owners: tuple[str, ...]
    problems: tuple[Problem, ...] = field(default_factory=tuple)
    importer: str = ""  # the importing owner, or "admin:<user>" for an admin import


def read_memories(path: str | Path, *, lenient: bool = False) -> MemoryFile:
    """Read a ``.jsonl`` file or a memory export ``.zip``.

    Args:
        path: the file.
        lenient: return what could be read plus the problems, instead of raising at the first one.

    Raises:
        MemoryImportError: naming the file, line or entry, and field at fault (not in lenient mode).
    """
    path = Path(path)
    if not path.is_file():
        raise MemoryImportError(path, "no such file")
    if path.suffix.lower() == ".zip":
        items = list(_read_zip(path))
    elif path.suffix.lower() in (".jsonl", ".ndjson"):
        items = list(_read_jsonl(path))
    else:
        raise MemoryImportError(path, "expected a .jsonl file or a memory export .zip")
    memories: list[Memory] = []
    members: list[ScopeMember] = []
    problems: list[Problem] = []
    seen: dict[str, str] = {}
    for where, item in items:
        if isinstance(item, Memory) and item.id in seen:
            item = MemoryImportError(
                where, f"duplicate memory id {item.id!r} (first at {seen[item.id]})", "id"
            )
        if isinstance(item, MemoryImportError):
            if not lenient:
                raise item
            problems.append(Problem(path=where, message=str(item), field=item.field))
        elif isinstance(item, ScopeMember):
            members.append(item)
        else:
            seen[item.id] = where
            memories.append(item)
    return MemoryFile(tuple(memories), tuple(members), tuple(problems))


def import_memories(
    path: str | Path,
    db: str | Path | RoiStore,
    *,
    lenient: bool = False,
    owner: str | None = None,
    admin: bool = False,
) -> ImportSummary:
    """Read ``path`` (JSONL or export zip) and upsert its memories and memberships into the store ``db``.

    Args:
        path: the file.
        db: the store (a path, a ``postgresql://`` URL or an open store).
        lenient: import what may be imported and list the rest as problems, instead of raising.
        owner: the importing owner; default: the one owner of the file's memories.
        admin: an admin import: several owners' memories and memberships, as they are (logged).

    Raises:
        MemoryImportError: naming the file, entry and field: a memory of another owner, a scope the owner
            may not write, a membership in a scope the owner does not own, a file holding several owners'
            memories without ``admin`` (not in lenient mode).
    """
    read = read_memories(path, lenient=lenient)
    memories, members, problems = list(read.memories), list(read.members), list(read.problems)
    with borrow_store(db) as store:
        if admin:
            importer = f"admin:{getpass.getuser()}"
            writer = None
        else:
            writer = owner or _only_owner(path, memories, members)
            importer = writer
            memories, members, refused = _allowed(path, store, writer, memories, members)
            if refused and not lenient:
                raise refused[0]
            problems += [Problem(path=e.where, message=str(e), field=e.field) for e in refused]
        inserted, updated = store.upsert_memories(memories, where=str(path), owner=writer)
        granted = store.add_members(members, owner=writer)
        owners = tuple(sorted({m.owner for m in memories}))
        store.log_import(
            str(path),
            importer=importer,
            admin=admin,
            owners=owners,
            inserted=inserted,
            updated=updated,
            members=granted,
        )
    return ImportSummary(str(path), inserted, updated, granted, owners, tuple(problems), importer)


def _only_owner(path: str | Path, memories: list[Memory], members: list[ScopeMember]) -> str:
    owners = sorted({m.owner for m in memories})
    if len(owners) == 1:
        return owners[0]
    if not owners:
        if not members:
            return ""
        raise MemoryImportError(
            path, "a file of memberships only: name the importing owner (--owner), or import as an admin"
        )
    raise MemoryImportError(
        path,
        f"holds the memories of {len(owners)} owners ({', '.join(owners)}): import each owner's own export, "
        "or import as an admin (--admin, admin=True; logged)",
        "owner",
    )


def _allowed(
    path: str | Path, store: RoiStore, owner: str, memories: list[Memory], members: list[ScopeMember]
) -> tuple[list[Memory], list[ScopeMember], list[MemoryImportError]]:
    """What ``owner`` may import, and an error for each entry it may not."""
    refused: list[MemoryImportError] = []
    ok_memories: list[Memory] = []
    member_of: dict[str, bool] = {}
    for m in memories:
        label = scope_owner(m.scope)
        if m.owner != owner:
            why = f"memory {m.id!r} is owned by {m.owner!r}, not by the importing owner {owner!r}"
            refused.append(MemoryImportError(path, why, "owner"))
        elif label != owner and not member_of.setdefault(m.scope, owner in store.members(m.scope)):
            why = (
                f"memory {m.id!r}: owner {owner!r} may not write into scope {m.scope!r} "
                f"(it belongs to {label!r} and {owner!r} is not a member)"
            )
            refused.append(MemoryImportError(path, why, "scope"))
        else:
            ok_memories.append(m)
    ok_members: list[ScopeMember] = []
    for g in members:
        label = scope_owner(g.scope)
        if label != owner:
            why = (
                f"membership of {g.member!r} in {g.scope!r}: only the scope's owner {label!r} may grant it, "
                f"not the importing owner {owner!r}"
            )
            refused.append(MemoryImportError(path, why, "scope"))
        else:
            ok_members.append(g)
    return ok_memories, ok_members, refused


def _to_memory(where: str, data: dict[str, Any], *, owner: str | None = None) -> Memory:
    try:
        line = MemoryLine.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        loc = ".".join(str(p) for p in first["loc"]) or None
        raise MemoryImportError(where, first["msg"], field=loc) from None
    label = scope_owner(line.scope)
    mem_owner = owner or line.owner or label
    if line.scope.startswith("user.") and mem_owner != label:
        raise MemoryImportError(
            where, f"owner {mem_owner!r} cannot write the personal scope {line.scope!r}", "owner"
        )
    source = line.source
    if source is not None and not isinstance(source, str):
        source = json.dumps(source, ensure_ascii=False, separators=(",", ":"))
    return Memory(
        **line.model_dump(include={"id", "scope", "visibility", "kind", "content", "lang"}),
        owner=mem_owner,
        created_at=normalize_time(line.created_at, where=where, field="created_at"),
        invalidated_at=(
            None
            if line.invalidated_at in (None, "")
            else normalize_time(line.invalidated_at, where=where, field="invalidated_at")
        ),
        source=source,
    )


Item = Memory | ScopeMember | MemoryImportError


def _read_jsonl(path: Path) -> Iterator[tuple[str, Item]]:
    with open(path, encoding="utf-8") as fh:
        for n, raw in enumerate(fh, start=1):
            where = f"{path}:{n}"
            if not raw.strip():
                continue
            try:
                data = json.loads(raw)
                if not isinstance(data, dict):
                    raise MemoryImportError(where, "a line must be a JSON object")
                if data.get("record", "memory") == "member":
                    try:
                        member = MemberLine.model_validate(data)
                        scope_owner(member.scope)
                    except (ValidationError, ValueError) as err:
                        raise MemoryImportError(where, f"bad membership line: {err}", "scope") from None
                    yield where, ScopeMember(member.scope, member.member)
                else:
                    yield where, _to_memory(where, data)
            except json.JSONDecodeError as err:
                yield where, MemoryImportError(where, f"not JSON ({err.msg})")
            except MemoryImportError as err:
                yield where, err


def _read_zip(path: Path) -> Iterator[tuple[str, Item]]:
    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile as err:
        raise MemoryImportError(path, f"not a zip archive ({err})") from None
    with archive:
        for info in archive.infolist():
            if info.is_dir() or not info.filename.endswith(".md"):
                continue
            where = f"{path}!{info.filename}"
            parts = PurePosixPath(info.filename).parts
            archived = len(parts) == 3 and parts[0] == ARCHIVE_DIR
            if len(parts) != 2 and not archived:
                yield (
                    where,
                    MemoryImportError(where, "expected <scope>/<slug>.md or archive/<scope>/<slug>.md"),
                )
                continue
            scope = parts[-2]
            try:
                owner = scope_owner(scope)
                front, content = _split_front_matter(where, archive.read(info).decode("utf-8"))
                front.setdefault("scope", scope)
                if front["scope"] != scope:
                    raise MemoryImportError(
                        where, f"front matter scope {front['scope']!r} != folder {scope!r}", "scope"
                    )
                if archived and not front.get("invalidated_at"):
                    # a retired entry without a date: the archive entry's own time stands for it
                    front["invalidated_at"] = datetime(*info.date_time).isoformat()
                yield where, _to_memory(where, {**front, "content": content}, owner=owner)
            except ValueError as err:
                yield where, MemoryImportError(where, str(err), "scope")
            except MemoryImportError as err:
                yield where, err
            except UnicodeDecodeError:
                yield where, MemoryImportError(where, "not UTF-8 text")


def _split_front_matter(where: str, text: str) -> tuple[dict[str, Any], str]:
    """``---`` / ``key: value`` lines / ``---`` / a blank line / the content. Unknown keys pass (ignored later)."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        raise MemoryImportError(where, "missing the '---' front matter at the top")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise MemoryImportError(where, "front matter is not closed by '---'") from None
    front: dict[str, Any] = {}
    for n, line in enumerate(lines[1:end], start=2):
        if not line.strip():
            continue
        key, sep, value = line.partition(":")
        if not sep:
            raise MemoryImportError(where, f"front matter line {n} is not 'key: value': {line!r}")
        front[key.strip()] = _front_value(key.strip(), value.strip())
    body = lines[end + 1 :]
    if body and not body[0].strip():
        body = body[1:]
    return front, "\n".join(body).strip("\n")


def _front_value(key: str, value: str) -> Any:
    if value in ("", "null", "~"):
        return None
    if key == "source":
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value
