"""Long run ids make short labels that still tell the runs apart (they overlapped and cut to one text)."""

from __future__ import annotations

import polars as pl

from bench_nb.charts.labels import LABEL_CHARS, run_labels


def test_long_run_ids_keep_what_tells_them_apart() -> None:
    ids = ["sqlite-locomo-20261202T033307575Z", "sqlite-locomo-20261202T040012345Z", "no-memory-locomo-1"]
    frame = pl.DataFrame({"run_id": ids, "provider": ["sqlite", "sqlite", "no-memory"]})
    labels = run_labels(frame)
    assert labels == {
        ids[0]: "sqlite · …33307575Z",
        ids[1]: "sqlite · …40012345Z",
        ids[2]: "no-memory",
    }
    longer = [f"sqlite-{'x' * 60}-{i}" for i in range(2)]
    cut = run_labels(pl.DataFrame({"run_id": longer, "provider": ["sqlite", "sqlite"]}))
    assert len(set(cut.values())) == 2 and all(len(v) <= LABEL_CHARS for v in cut.values())


def test_short_labels_are_as_before() -> None:
    frame = pl.DataFrame({"run_id": ["a", "b"], "provider": ["sqlite", "sqlite"]})
    assert run_labels(frame) == {"a": "sqlite · a", "b": "sqlite · b"}
