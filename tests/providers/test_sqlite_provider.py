from __future__ import annotations

import sqlite3
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from provider_fixtures import CONVERSATION, MESSAGE_COUNT

from bench_nb.errors import ProviderError
from bench_nb.providers import SqliteProvider, fts5_query, get_provider, query_terms
from bench_nb.providers.store import MessageStore, container_file_name
from bench_nb.records import Message, Session


@pytest.fixture
def provider(tmp_path: Path) -> SqliteProvider:
    p = get_provider("sqlite", run_dir=tmp_path)
    assert isinstance(p, SqliteProvider)
    p.await_indexing("conv", p.ingest("conv", CONVERSATION), timeout_s=5)
    return p


def _rows(path: Path) -> list[tuple[str, str, str]]:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT session_id, message_id, text FROM messages ORDER BY id").fetchall()


def test_one_row_per_message_on_disk_in_the_run_dir(tmp_path: Path, provider: SqliteProvider) -> None:
    path = tmp_path / "memory" / "sqlite" / container_file_name("conv")
    assert path.is_file()
    rows = _rows(path)
    assert len(rows) == MESSAGE_COUNT
    assert rows[0] == ("s1", "D1:1", CONVERSATION[0].messages[0].content)
    assert rows[-1][1] == "D3:3"
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_hit_carries_date_speaker_ids_score_and_row(provider: SqliteProvider) -> None:
    hits = provider.search("conv", "What is the name of the dog?", 3)
    top = hits[0]
    assert top.text == "[2023-05-08T13:56:00] Priya: His name is Biscuit. He already chewed two of my shoes."
    assert top.hit_id == "D1:3"
    assert top.session_id == "s1"
    assert top.date == "2023-05-08T13:56:00"
    assert top.raw is not None
    assert top.raw["speaker"] == "Priya"
    assert top.raw["container"] == "conv"
    assert top.raw["message_id"] == "D1:3"
    assert top.score is not None and top.score > 0
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)  # higher is better


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Where does Sam's sister work as an architect?", "D1:4"),
        ("Which marathon did Sam sign up for?", "D2:1"),
        ("What class does Priya take on Thursdays?", "D2:4"),
        ("What did Biscuit steal at the barbecue?", "D3:1"),
        ("Where is Priya moving next spring?", "D3:3"),
        ("How did Sam's knee get better?", "D3:2"),
    ],
)
def test_ranking_puts_the_evidence_first(provider: SqliteProvider, query: str, expected: str) -> None:
    assert provider.search("conv", query, 5)[0].hit_id == expected


def test_stemming_and_diacritics(tmp_path: Path) -> None:
    p = SqliteProvider(tmp_path)
    p.ingest(
        "c", [Session("s", None, (Message("A", "We were running at the café"), Message("B", "nothing here")))]
    )
    assert [h.hit_id for h in p.search("c", "runs", 5)] == ["s:0"]
    assert [h.hit_id for h in p.search("c", "cafe", 5)] == ["s:0"]
    assert p.search("c", "cafe", 5)[0].text == "A: We were running at the café"  # no date: no brackets


@pytest.mark.parametrize(
    "query",
    [
        'what\'s "AND" OR *?',
        "AND",
        "NOT NEAR(biscuit shoes, 2)",
        'biscuit" OR "',
        "name:biscuit ^puppy -shoes (dog) {x} [y] col:*",
        '"unterminated',
        "Biscuit's",
        "🐶 Biscuit 名字 Ünïcödé",
        "SELECT * FROM messages; DROP TABLE messages; --",
    ],
)
def test_fts5_hostile_queries_never_raise(provider: SqliteProvider, query: str) -> None:
    hits = provider.search("conv", query, 5)
    assert len(hits) <= 5
    assert provider.store.count("conv") == MESSAGE_COUNT  # nothing was dropped


def test_operator_words_are_searched_as_words(provider: SqliteProvider) -> None:
    # every word of this query is an FTS5 operator or a stop word: kept, quoted, and searched as text
    assert fts5_query('what\'s "AND" OR *?') == '"what" OR "s" OR "and" OR "or"'
    hits = provider.search("conv", "biscuit AND NOT shoes", 10)
    assert {h.hit_id for h in hits} == {"D1:3", "D3:1", "D3:2"}  # OR of biscuit/shoes, not an FTS5 NOT


@pytest.mark.parametrize("query", ["", "   ", "?!", "...", "'\"*()"])
def test_queries_without_words_return_no_hits(provider: SqliteProvider, query: str) -> None:
    assert fts5_query(query) is None
    assert provider.search("conv", query, 5) == []


def test_query_terms_drop_stop_words_unless_nothing_is_left() -> None:
    assert query_terms("What is the name of the dog?") == ["name", "dog"]
    assert query_terms("Who is she?") == ["who", "is", "she"]
    assert query_terms("Dog dog DOG") == ["dog"]


def test_unicode_text_is_found(tmp_path: Path) -> None:
    p = SqliteProvider(tmp_path)
    p.ingest(
        "u",
        [Session("s", "2024-01-01", (Message("Zoë", "Wir fahren nach München 🚆"), Message("Li", "東京")))],
    )
    assert p.search("u", "münchen?", 3)[0].text == "[2024-01-01] Zoë: Wir fahren nach München 🚆"
    assert p.search("u", "MUNCHEN", 3)[0].hit_id == "s:0"
    assert p.search("u", "東京", 3)[0].hit_id == "s:1"


def test_k_is_respected_and_checked(provider: SqliteProvider) -> None:
    for k in (1, 2, 7):
        assert len(provider.search("conv", "Biscuit Sam Priya knee Lisbon", k)) == k
    for bad in (0, -1, True, 2.5):
        with pytest.raises(ProviderError, match="positive integer"):
            provider.search("conv", "Biscuit", bad)  # type: ignore[arg-type]


def test_persistence_across_a_new_provider_object(tmp_path: Path, provider: SqliteProvider) -> None:
    before = provider.search("conv", "Lisbon architect", 4)
    reopened = get_provider("sqlite", run_dir=tmp_path)
    after = reopened.search("conv", "Lisbon architect", 4)
    assert after == before
    assert [h.hit_id for h in after][:1] == ["D1:4"]


def test_reingest_is_idempotent(tmp_path: Path, provider: SqliteProvider) -> None:
    before = provider.search("conv", "Biscuit", 10)
    provider.ingest("conv", CONVERSATION)
    provider.ingest("conv", CONVERSATION)
    assert provider.store.count("conv") == MESSAGE_COUNT
    assert [(h.hit_id, h.text, h.score) for h in provider.search("conv", "Biscuit", 10)] == [
        (h.hit_id, h.text, h.score) for h in before
    ]


def test_resume_after_a_partial_ingest(tmp_path: Path) -> None:
    p = SqliteProvider(tmp_path)
    p.ingest("c", CONVERSATION[:1])  # the crashed first attempt stored one session
    p.ingest("c", CONVERSATION)  # the resumed run ingests the whole haystack
    assert p.store.count("c") == MESSAGE_COUNT
    assert [r.message_id for r in p.store.rows("c")] == [
        m.message_id for s in CONVERSATION for m in s.messages
    ]


def test_a_session_ingested_again_is_replaced_in_place(tmp_path: Path) -> None:
    p = SqliteProvider(tmp_path)
    p.ingest("c", CONVERSATION)
    edited = Session(
        "s1", "2023-05-09", (Message("Priya", "Actually the puppy is called Waffles.", message_id="D1:1"),)
    )
    p.ingest("c", [edited])
    rows = p.store.rows("c")
    assert [r.session_id for r in rows][:2] == ["s1", "s2"]  # s1 keeps its place before s2
    assert rows[0].text == "Actually the puppy is called Waffles."
    assert p.store.count("c") == MESSAGE_COUNT - len(CONVERSATION[0].messages) + 1
    assert [h.hit_id for h in p.search("c", "Waffles", 5)] == ["D1:1"]
    assert p.search("c", "Lisbon", 5) == []  # the old s1 rows are gone from the index too


def test_ingest_is_one_transaction(tmp_path: Path) -> None:
    store = MessageStore(tmp_path)
    store.ingest("c", CONVERSATION[:1])

    def fail(conn: sqlite3.Connection, rows: list) -> None:
        raise RuntimeError("crash in the middle of an ingest")

    with pytest.raises(RuntimeError):
        store.ingest("c", CONVERSATION, also=fail)
    assert [r.session_id for r in store.rows("c")] == ["s1"] * len(CONVERSATION[0].messages)


def test_duplicate_session_ids_in_one_ingest_keep_every_message(tmp_path: Path) -> None:
    p = SqliteProvider(tmp_path)
    twice = [
        Session("s", None, (Message("A", "first copy"),)),
        Session("s", None, (Message("A", "second copy"),)),
    ]
    result = p.ingest("c", twice)
    assert result.document_ids == ("s:0", "s:1")
    assert [r.text for r in p.store.rows("c")] == ["first copy", "second copy"]


def test_containers_are_isolated_with_their_own_bm25_statistics(
    tmp_path: Path, provider: SqliteProvider
) -> None:
    before = provider.search("conv", "Biscuit puppy", 5)
    noise = [
        Session(f"n{i}", None, (Message("X", f"biscuit recipe number {i} puppy chow"),)) for i in range(200)
    ]
    provider.ingest("other", noise)
    after = provider.search("conv", "Biscuit puppy", 5)
    assert after == before  # another container's content changes neither the hits nor their scores
    assert all(h.raw is not None and h.raw["container"] == "conv" for h in after)
    assert all(
        h.raw is not None and h.raw["container"] == "other" for h in provider.search("other", "biscuit", 5)
    )


def test_clear_deletes_only_that_container(tmp_path: Path, provider: SqliteProvider) -> None:
    provider.ingest("other", CONVERSATION)
    provider.clear("conv")
    assert not (tmp_path / "memory" / "sqlite" / container_file_name("conv")).exists()
    with pytest.raises(ProviderError, match="ingest it first"):
        provider.search("conv", "Biscuit", 5)
    assert provider.search("other", "Biscuit", 5)
    provider.clear("never-ingested")  # clearing twice or never is fine


def test_search_in_a_container_never_ingested_is_an_error(provider: SqliteProvider) -> None:
    with pytest.raises(ProviderError, match="'nope' has no index"):
        provider.search("nope", "Biscuit", 5)
    with pytest.raises(ProviderError, match="'nope' has no index"):
        provider.search("nope", "", 5)


def test_container_names_map_to_distinct_safe_files() -> None:
    names = ["conv-26", "a/b", "a_b", "../etc/passwd", "q:1", "Q:1", "ü" * 200]
    files = [container_file_name(n) for n in names]
    assert len(set(files)) == len(names)
    assert all("/" not in f and not f.startswith(".") and len(f) < 120 for f in files)
    with pytest.raises(ProviderError):
        container_file_name("")


def test_a_file_of_another_container_is_refused(tmp_path: Path) -> None:
    store = MessageStore(tmp_path)
    store.ingest("a", CONVERSATION)
    store.path("a").rename(store.path("b"))
    with pytest.raises(ProviderError, match="holds container 'a', not 'b'"):
        store.count("b")


def test_concurrent_ingest_and_search_from_many_threads(tmp_path: Path) -> None:
    p = SqliteProvider(tmp_path)
    queries = ["Biscuit", "Lisbon architect", "marathon knee", "pottery bowl", "Denver job", "What?"]
    containers = [f"c{i}" for i in range(6)]
    with ThreadPoolExecutor(max_workers=6) as pool:
        list(pool.map(lambda c: p.ingest(c, CONVERSATION), containers))
    expected = {q: p.search("c0", q, 5) for q in queries}

    def work(i: int) -> bool:
        c = containers[i % len(containers)]
        if i % 10 == 0:
            p.ingest(c, CONVERSATION)  # re-ingest under load: readers must see a whole container
        q = queries[i % len(queries)]
        got = p.search(c, q, 5)
        return [(h.hit_id, h.text, h.score) for h in got] == [
            (h.hit_id, h.text, h.score) for h in expected[q]
        ]

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(work, range(400)))
    assert all(results)
    assert all(p.store.count(c) == MESSAGE_COUNT for c in containers)
