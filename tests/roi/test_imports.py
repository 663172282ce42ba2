from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from roi_memsets import front_matter_file, mem, write_export_zip, write_jsonl

from bench_nb.roi import MemoryImportError, RoiStore, import_memories, read_memories


def test_jsonl_reads_every_field_and_memberships(jsonl_file: Path, rows: list[dict]) -> None:
    read = read_memories(jsonl_file)
    assert len(read.memories) == len(rows)
    by_id = {m.id: m for m in read.memories}
    web = by_id["a-web-1"]
    assert (web.owner, web.scope, web.visibility, web.kind) == (
        "alice",
        "proj.alice.web",
        "shared",
        "decision",
    )
    assert web.created_at == "2024-03-01T10:00:00.000000Z"
    assert by_id["b-team"].owner == "bob" and by_id["b-team"].scope == "team.alice.platform"
    assert [(m.scope, m.member) for m in read.members] == [("team.alice.platform", "bob")]


def test_jsonl_errors_name_the_line_and_field(tmp_path: Path) -> None:
    good = mem("m1", "proj.alice.web", "decision", "x", "2024-01-01T00:00:00Z")
    bad_kind = {**mem("m2", "proj.alice.web", "decision", "y", "2024-01-01T00:00:00Z"), "kind": "rumour"}
    path = write_jsonl(tmp_path / "m.jsonl", [good, bad_kind])
    with pytest.raises(MemoryImportError, match=r"m\.jsonl:2 \(field kind\)"):
        read_memories(path)
    lenient = read_memories(path, lenient=True)
    assert [m.id for m in lenient.memories] == ["m1"]
    assert len(lenient.problems) == 1 and lenient.problems[0].field == "kind"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"scope": "project-x"}, "scope"),
        ({"created_at": "yesterday"}, "created_at"),
        ({"visibility": "public"}, "visibility"),
        ({"owner": "bob"}, "owner"),  # bob cannot write alice's personal scope
    ],
)
def test_jsonl_rejects_bad_values(tmp_path: Path, change: dict, field: str) -> None:
    row = {**mem("m1", "user.alice", "fact", "x", "2024-01-01T00:00:00Z"), **change}
    path = write_jsonl(tmp_path / "m.jsonl", [row])
    with pytest.raises(MemoryImportError) as err:
        read_memories(path)
    assert err.value.field == field


def test_duplicate_ids_and_not_json(tmp_path: Path) -> None:
    row = mem("m1", "user.alice", "fact", "x", "2024-01-01T00:00:00Z")
    path = tmp_path / "m.jsonl"
    path.write_text(json.dumps(row) + "\n{oops\n" + json.dumps(row) + "\n")
    lenient = read_memories(path, lenient=True)
    assert [m.id for m in lenient.memories] == ["m1"]
    assert [p.path.rsplit(":", 1)[1] for p in lenient.problems] == ["2", "3"]
    assert "duplicate memory id" in lenient.problems[1].message


def test_export_zip_front_matter_owner_and_archive(tmp_path: Path, rows: list[dict]) -> None:
    gone = mem(
        "a-gone",
        "proj.alice.web",
        "gotcha",
        "Old gotcha.",
        "2023-06-01T00:00:00Z",
        invalidated_at="2024-02-01T00:00:00Z",
    )
    path = write_export_zip(tmp_path / "export.zip", [*rows, gone])
    read = read_memories(path)
    by_id = {m.id: m for m in read.memories}
    assert len(by_id) == len(rows) + 1  # README.txt is not a memory
    # the owner is the label in the scope path, whatever the front matter holds
    assert by_id["b-team"].owner == "alice"
    assert by_id["a-gone"].invalidated_at == "2024-02-01T00:00:00.000000Z"
    assert by_id["a-web-2"].content == "The Safari checkout breaks when the cart cookie exceeds 4 KB."
    assert json.loads(by_id["a-web-2"].source or "") == {"tool": "memory-export", "session": "s-1"}
    assert by_id["a-web-2"].lang == "en"


def test_archive_entry_without_date_is_invalidated_at_its_archive_time(tmp_path: Path) -> None:
    row = mem("a-x", "proj.alice.web", "decision", "Retired decision.", "2023-06-01T00:00:00Z")
    path = tmp_path / "export.zip"
    with zipfile.ZipFile(path, "w") as zf:
        info = zipfile.ZipInfo("archive/proj.alice.web/a-x.md", date_time=(2024, 5, 6, 7, 8, 10))
        zf.writestr(info, front_matter_file(row))
    (memory,) = read_memories(path).memories
    assert memory.invalidated_at == "2024-05-06T07:08:10.000000Z"


def test_export_zip_errors_name_the_entry(tmp_path: Path) -> None:
    path = tmp_path / "export.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(
            "proj.alice.web/ok.md",
            front_matter_file(mem("ok", "proj.alice.web", "fact", "fine", "2024-01-01T00:00:00Z")),
        )
        zf.writestr("proj.alice.web/no-front.md", "just text")
        zf.writestr(
            "proj.alice.web/wrong-scope.md",
            front_matter_file(mem("w", "proj.alice.api", "fact", "x", "2024-01-01T00:00:00Z")),
        )
        zf.writestr("deep/er/path/x.md", "---\n---\n")
    with pytest.raises(MemoryImportError, match=r"export\.zip!proj\.alice\.web/no-front\.md: missing"):
        read_memories(path)
    lenient = read_memories(path, lenient=True)
    assert [m.id for m in lenient.memories] == ["ok"]
    assert len(lenient.problems) == 3
    assert any("wrong-scope.md" in p.path and p.field == "scope" for p in lenient.problems)


def test_import_upserts_and_refuses_an_id_of_another_owner(tmp_path: Path, db: Path) -> None:
    first = write_jsonl(
        tmp_path / "a.jsonl", [mem("m1", "proj.alice.web", "decision", "v1", "2024-01-01T00:00:00Z")]
    )
    s = import_memories(first, db)
    assert (s.inserted, s.updated, s.owners) == (1, 0, ("alice",))
    later = write_jsonl(
        tmp_path / "b.jsonl",
        [
            mem(
                "m1",
                "proj.alice.web",
                "decision",
                "v1",
                "2024-01-01T00:00:00Z",
                invalidated_at="2024-02-01T00:00:00Z",
            )
        ],
    )
    s = import_memories(later, db)
    assert (s.inserted, s.updated) == (0, 1)
    with RoiStore(db) as store:
        m = store.memory("m1")
        assert m is not None and m.invalidated_at == "2024-02-01T00:00:00.000000Z"
    thief = write_jsonl(
        tmp_path / "c.jsonl", [mem("m1", "proj.bob.web", "decision", "mine", "2024-01-01T00:00:00Z")]
    )
    with pytest.raises(MemoryImportError, match="already belongs to owner 'alice'"):
        import_memories(thief, db)


def _bob_and_alice(tmp_path: Path, db: Path) -> None:
    """alice imports her project and team (bob is not a member); bob imports his own project."""
    import_memories(
        write_jsonl(
            tmp_path / "alice.jsonl",
            [
                mem(
                    "a1",
                    "team.alice.platform",
                    "decision",
                    "Alice: healthz is JSON.",
                    "2024-01-01T00:00:00Z",
                    visibility="shared",
                ),
                mem(
                    "a2",
                    "proj.alice.web",
                    "decision",
                    "Alice: deploy blue-green.",
                    "2024-01-02T00:00:00Z",
                    visibility="shared",
                ),
            ],
        ),
        db,
    )
    import_memories(
        write_jsonl(
            tmp_path / "bob.jsonl",
            [mem("b1", "proj.bob.web", "decision", "Bob: cron.", "2024-01-03T00:00:00Z")],
        ),
        db,
    )


def test_an_owner_cannot_grant_himself_membership_in_another_owners_scope(tmp_path: Path, db: Path) -> None:
    _bob_and_alice(tmp_path, db)
    grab = write_jsonl(
        tmp_path / "bob-grab.jsonl",
        [
            mem("b2", "proj.bob.web", "gotcha", "Bob: idempotent jobs.", "2024-01-04T00:00:00Z"),
            {"record": "member", "scope": "team.alice.platform", "member": "bob"},
        ],
    )
    with pytest.raises(
        MemoryImportError, match=r"bob-grab\.jsonl.*only the scope's owner 'alice' may grant it"
    ):
        import_memories(grab, db)
    with RoiStore(db) as store:
        assert store.members("team.alice.platform") == frozenset()
        assert store.memory("b2") is None  # nothing of a refused import is written
        assert [m.id for m in store.readable_memories("bob", ["team.alice.platform"])] == []
    # lenient: the rest is imported, the grant is a problem
    s = import_memories(grab, db, lenient=True)
    assert (s.inserted, s.members, s.importer) == (1, 0, "bob")
    assert len(s.problems) == 1 and s.problems[0].field == "scope"
    with RoiStore(db) as store:
        assert store.members("team.alice.platform") == frozenset()


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (
            mem(
                "x",
                "proj.alice.web",
                "decision",
                "Bob writes as alice.",
                "2024-01-05T00:00:00Z",
                owner="alice",
                visibility="shared",
            ),
            "owned by 'alice', not by the importing owner 'bob'",
        ),
        (
            mem(
                "x",
                "proj.alice.web",
                "decision",
                "Bob's note in alice's project.",
                "2024-01-05T00:00:00Z",
                owner="bob",
                visibility="shared",
            ),
            "may not write into scope 'proj.alice.web'",
        ),
    ],
)
def test_an_owner_writes_only_his_memories_in_scopes_he_may_write(
    tmp_path: Path, db: Path, row: dict, message: str
) -> None:
    _bob_and_alice(tmp_path, db)
    with pytest.raises(MemoryImportError, match=message):
        import_memories(write_jsonl(tmp_path / "x.jsonl", [row]), db, owner="bob")
    with RoiStore(db) as store:
        assert store.memory("x") is None


def test_a_member_writes_into_the_scope_its_owner_granted(tmp_path: Path, db: Path) -> None:
    _bob_and_alice(tmp_path, db)
    grant = write_jsonl(
        tmp_path / "grant.jsonl", [{"record": "member", "scope": "team.alice.platform", "member": "bob"}]
    )
    assert import_memories(grant, db, owner="alice").members == 1
    note = mem(
        "b3",
        "team.alice.platform",
        "gotcha",
        "Bob: healthz must not hit the db.",
        "2024-01-06T00:00:00Z",
        owner="bob",
        visibility="shared",
    )
    assert import_memories(write_jsonl(tmp_path / "note.jsonl", [note]), db).inserted == 1
    with RoiStore(db) as store:
        assert {m.id for m in store.readable_memories("alice", ["team.alice.platform"])} == {"a1", "b3"}
        assert {m.id for m in store.readable_memories("bob", ["team.alice.platform"])} == {"a1", "b3"}


def test_several_owners_in_one_file_need_an_admin_import_which_is_logged(jsonl_file: Path, db: Path) -> None:
    with pytest.raises(MemoryImportError, match=r"memories of 2 owners \(alice, bob\).*--admin"):
        import_memories(jsonl_file, db)
    s = import_memories(jsonl_file, db, admin=True)
    assert s.importer.startswith("admin:") and s.members == 1
    with RoiStore(db) as store:
        (line,) = store.import_log()
    assert (line["admin"], line["owners"], line["members"], line["path"]) == (
        1,
        "alice,bob",
        1,
        str(jsonl_file),
    )
