"""The pinned read set and per-owner isolation, through the real embedded sqlite provider."""

from __future__ import annotations

from pathlib import Path

from bench_nb.providers.sqlite import SqliteProvider
from bench_nb.roi import RoiStore, TemplateProber, import_memories, run_roi, top_up
from bench_nb.roi.recall import pinned_recalls, read_set


def _probes(db: Path, owner: str) -> dict:
    with RoiStore(db) as store:
        top_up(store, owner, TemplateProber())
        return {p.memory_id: p for p in store.active_probes(owner)}


def test_read_set_is_own_and_shared_memories_of_the_pinned_scopes(jsonl_file: Path, db: Path) -> None:
    import_memories(jsonl_file, db, admin=True)
    alice = _probes(db, "alice")
    bob = _probes(db, "bob")
    with RoiStore(db) as store:
        web = read_set(store, alice["a-web-1"])
        assert web.scopes == ("proj.alice.web", "user.alice", "user.alice.core")
        # the project plus personal and core; never the other project, never bob's
        assert {"a-web-1", "a-web-2", "a-web-ep", "a-personal", "a-core"} <= web.ids
        assert not any(i.startswith(("a-api", "a-team", "b-")) for i in web.ids)
        # a team: alice reads bob's shared team memory (her team), bob reads alice's shared one (member)
        assert {"a-team-1", "a-team-private", "b-team"} <= read_set(store, alice["a-team-1"]).ids
        bob_team = read_set(store, bob["b-team"]).ids
        assert "a-team-1" in bob_team  # shared, bob is a member
        assert "a-team-private" not in bob_team  # alice's private memory, even in a shared scope
        assert not any(i.startswith(("a-web", "a-personal", "a-core")) for i in bob_team)


def test_a_probe_never_surfaces_another_projects_memory(jsonl_file: Path, db: Path, tmp_path: Path) -> None:
    """a-api-1 (alice, other project) and b-web-1 (bob) contain a-web-1's question verbatim: they would rank
    first if they were reachable."""
    import_memories(jsonl_file, db, admin=True)
    alice = _probes(db, "alice")
    probe = alice["a-web-1"]
    provider = SqliteProvider(tmp_path / "provider")
    with RoiStore(db) as store:
        (recall,) = pinned_recalls(store, provider, [probe], run_id="t1", k=20)
        assert recall.memory_ids[0] == "a-web-1"
        assert not set(recall.memory_ids) & {"a-api-1", "b-web-1"}
        assert set(recall.memory_ids) <= read_set(store, probe).ids
        assert recall.dropped == 0  # the container never held them
        # the control: over everything, the decoys do outrank the source
        everything = [m for m in (store.memory(i) for i in ("a-web-1", "a-api-1", "b-web-1")) if m]
    from bench_nb.roi.recall import memory_session

    provider.ingest("control", [memory_session(m) for m in everything])
    control = [h.session_id for h in provider.search("control", probe.question, 3)]
    assert control[0] in {"a-api-1", "b-web-1"}
    # containers are cleared after the recall phase
    assert not list((tmp_path / "provider" / "memory" / "sqlite").glob("roi-t1-*"))


def test_two_owners_are_isolated_end_to_end(jsonl_file: Path, db: Path, tmp_path: Path) -> None:
    import_memories(jsonl_file, db, admin=True)
    opts = {"provider": SqliteProvider(tmp_path / "p")}
    for owner in ("alice", "bob"):
        run_roi(owner, db, **opts)  # generates
    a = run_roi("alice", db, **opts)
    b = run_roi("bob", db, **opts)
    with RoiStore(db) as store:
        rows = store.execute("SELECT run_id, owner, surfaced FROM recalls").fetchall()
        owners_of = {m["id"]: m["owner"] for m in store.execute("SELECT id, owner FROM memories")}
        private = {m["id"] for m in store.execute("SELECT id FROM memories WHERE visibility = 'private'")}
    import json

    for row in rows:
        for memory_id in json.loads(row["surfaced"]):
            if owners_of[memory_id] != row["owner"]:
                assert memory_id not in private, f"{row['owner']} surfaced {memory_id}"
    assert {r["owner"] for r in rows if r["run_id"] == a.run_id} == {"alice"}
    assert {r["owner"] for r in rows if r["run_id"] == b.run_id} == {"bob"}
    # results are read per owner only
    from bench_nb.roi import roi_results_df, roi_status

    assert set(roi_results_df("bob", db)["run_id"]) == {b.run_id}
    assert set(roi_results_df("alice", db)["run_id"]) == {a.run_id}
    assert roi_status("bob", db).latest.run_id == b.run_id  # type: ignore[union-attr]
    assert roi_results_df("carol", db).empty
