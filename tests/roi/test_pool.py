from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from roi_memsets import mem, write_jsonl

from bench_nb.roi import ProbeDraft, ProberReply, RoiStore, import_memories, top_up
from bench_nb.roi.memory import Memory
from bench_nb.roi.probers import ParaphraseProber, TemplateProber, key_terms


def test_top_up_takes_own_live_knowledge_newest_first(jsonl_file: Path, db: Path, rows: list[dict]) -> None:
    import_memories(jsonl_file, db, admin=True)
    with RoiStore(db) as store:
        result = top_up(store, "alice", TemplateProber())
        probes = store.active_probes("alice")
    assert (result.added, result.active, result.retired) == (20, 20, 0)
    expected = sorted(
        (r for r in rows if r["owner"] == "alice" and r["kind"] in ("decision", "gotcha", "convention")),
        key=lambda r: r["created_at"],
        reverse=True,
    )[:20]
    assert {p.memory_id for p in probes} == {r["id"] for r in expected}
    assert "a-web-ep" not in {p.memory_id for p in probes}  # episodes are never probed
    assert "b-team" not in {p.memory_id for p in probes}  # bob's memory in alice's team is not alice's
    assert {p.owner for p in probes} == {"alice"}
    web1 = next(p for p in probes if p.memory_id == "a-web-1")
    assert web1.scope == "proj.alice.web" and web1.mode == "template"
    assert (
        web1.question
        == 'What did we decide about "We deploy the storefront with blue-green switches on Fridays"?'
    )


def test_retirement_and_top_up_newest_first(
    tmp_path: Path, jsonl_file: Path, db: Path, rows: list[dict]
) -> None:
    import_memories(jsonl_file, db, admin=True)
    with RoiStore(db) as store:
        top_up(store, "alice", TemplateProber())
        before = {p.memory_id for p in store.active_probes("alice")}
    # a-web-2 is forgotten, and a newer decision is learned
    gone = {**next(r for r in rows if r["id"] == "a-web-2"), "invalidated_at": "2024-04-01T00:00:00Z"}
    new = mem(
        "a-web-new",
        "proj.alice.web",
        "decision",
        "Checkout moves to the new payment gateway.",
        "2024-04-02T00:00:00Z",
    )
    import_memories(write_jsonl(tmp_path / "later.jsonl", [gone, new]), db)
    with RoiStore(db) as store:
        result = top_up(store, "alice", TemplateProber())
        after = {p.memory_id for p in store.active_probes("alice")}
        retired = [p for p in store.probes("alice") if p.retired_at]
    assert (result.retired, result.added, result.active) == (1, 1, 20)
    assert [(p.memory_id, p.retired_reason) for p in retired] == [("a-web-2", "source memory invalidated")]
    assert after == (before - {"a-web-2"}) | {"a-web-new"}  # the newest unprobed memory, not an older one
    with RoiStore(db) as store:
        # a retired memory is never probed again, and a full pool does not grow
        assert top_up(store, "alice", TemplateProber()).added == 0
        assert len(store.probes("alice")) == 21


class _SloppyProber:
    """Answers for a memory it was not given, twice for one it was, and skips another."""

    name = "sloppy"
    mode = "llm"
    model = "test-model"

    def write(self, memories: Sequence[Memory]) -> ProberReply:
        drafts = [ProbeDraft("not-given", "Where is the invented memory?")]
        drafts += [ProbeDraft(m.id, f"Question about {m.id}?") for m in memories[1:]]
        drafts.append(ProbeDraft(memories[-1].id, "A duplicate?"))
        return ProberReply(tuple(drafts))


def test_ids_the_prober_did_not_get_are_dropped(jsonl_file: Path, db: Path) -> None:
    import_memories(jsonl_file, db, admin=True)
    with RoiStore(db) as store:
        result = top_up(store, "alice", _SloppyProber(), target=5)
        probes = store.active_probes("alice")
    assert "not-given" not in {p.memory_id for p in probes}
    assert result.dropped >= 2
    # the skipped memory (newest) stays unprobed; the next rounds fill the pool from older ones
    assert result.active == 5 and "a-team-private" not in {p.memory_id for p in probes}
    assert {p.mode for p in probes} == {"llm"} and {p.model for p in probes} == {"test-model"}


def test_paraphrase_does_not_repeat_the_memory() -> None:
    m = Memory(
        "m",
        "alice",
        "proj.alice.web",
        "private",
        "gotcha",
        "The production database migrations fail when the deployment timeout is short.",
        "2024-01-01T00:00:00.000000Z",
    )
    (draft,) = ParaphraseProber().write([m]).drafts
    assert (
        draft.question == "Is there a known pitfall involving live environment, schema changes and release?"
    )
    assert key_terms(m.content) == ["production", "migrations", "deployment"]
    assert "The production database" not in draft.question
    # deterministic
    assert ParaphraseProber().write([m]).drafts == (draft,)


def test_a_top_up_and_status_count_the_pool(jsonl_file: Path, db: Path) -> None:
    from bench_nb.roi import roi_status

    import_memories(jsonl_file, db, admin=True)
    assert roi_status("alice", db).unprobed_memories == 27  # own live decisions, gotchas and conventions
    with RoiStore(db) as store:
        assert top_up(store, "alice", TemplateProber()).added == 20
    status = roi_status("alice", db)
    assert (status.active_probes, status.retired_probes, status.unprobed_memories) == (20, 0, 7)
    with RoiStore(db) as store:
        assert top_up(store, "alice", TemplateProber()).added == 0


def test_no_default_deterministic_probe_shares_four_consecutive_words_with_its_memory() -> None:
    # The default keyless prober must not quote its memory, or the embedded search finds every probe
    # trivially and the exclusive rate tells nothing apart. Checked on every memory bench_nb ships for
    # the ROI benchmark (the demo set) and on the test sets, with the comparison run by itself too.
    import json
    import tempfile

    from roi_memsets import alice_and_bob

    from bench_nb.roi import RoiOptions
    from bench_nb.roi.probers import MODE_NOTES, deterministic_prober, longest_shared_run
    from bench_nb.roi.sample import write_sample_memories

    assert longest_shared_run("What did we decide about the Foo bar, baz?", "we decide about the FOO") == 5
    assert longest_shared_run("a b c", "d e f") == 0
    with tempfile.TemporaryDirectory() as tmp:
        sample = [
            json.loads(line) for line in write_sample_memories(Path(tmp) / "m.jsonl").read_text().splitlines()
        ]
    memories = [
        Memory(
            id=str(r.get("id", i)),
            owner=r.get("owner", "x"),
            scope=r.get("scope", "user.x"),
            visibility=r.get("visibility", "private"),
            kind=r["kind"],
            content=r["content"],
            created_at="2026-01-01T00:00:00Z",
        )
        for i, r in enumerate([*sample, *alice_and_bob()])
        if r.get("kind") in ("decision", "gotcha", "convention")
    ]
    assert len(memories) >= 30
    prober = RoiOptions().prober()
    assert prober.mode == deterministic_prober().mode == "paraphrase"
    drafts = prober.write(memories).drafts
    runs = {m.id: longest_shared_run(d.question, m.content) for m, d in zip(memories, drafts, strict=True)}
    assert max(runs.values()) < 4, {k: v for k, v in runs.items() if v >= 4}
    assert all(d.question.endswith("?") and d.question not in ("", "?") for d in drafts)
    # The template mode is still there, labelled as quoting its memory: it does share long runs.
    quoted = TemplateProber().write(memories).drafts
    assert min(longest_shared_run(d.question, m.content) for m, d in zip(memories, quoted, strict=True)) >= 4
    assert "quotes the memory" in MODE_NOTES["template"] and "lower bound" in MODE_NOTES["paraphrase"]
