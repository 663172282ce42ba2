"""What charts compute before altair sees it: the context-token histogram (numpy's definition, without
numpy), and the kappa heatmap from a pairwise table in either library."""

from __future__ import annotations

import numpy as np
import pandas as pd
import polars as pl
import pytest

from bench_nb import charts
from bench_nb.charts.save import chart_spec
from bench_nb.charts.tokens import _bins, _histogram


@pytest.mark.parametrize("seed", range(25))
def test_histogram_equals_numpys(seed: int) -> None:
    rng = np.random.default_rng(seed)
    values = rng.integers(0, int(rng.integers(1, 5000)), size=int(rng.integers(1, 400))).astype(float)
    bins = int(rng.integers(1, 40))
    edges = _bins(values.tolist(), bins)
    lo, hi = float(values.min()), float(values.max())
    if lo == hi:
        assert edges == [lo - 0.5, hi + 0.5]
    else:
        assert edges == np.histogram_bin_edges(values, bins=bins, range=(lo, hi)).tolist()  # bit for bit
    part = values[: max(1, len(values) // 2)]  # one run's values, binned on the shared edges
    assert _histogram(part.tolist(), edges) == np.histogram(part, bins=np.array(edges))[0].tolist()


def test_histogram_edges_and_empty_input() -> None:
    edges = _bins([0.0, 10.0], 5)
    assert edges == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
    assert _histogram([0.0, 2.0, 9.9, 10.0, 10.5, -1.0], edges) == [1, 1, 0, 0, 2]  # last bin closed
    assert _bins([], 30) == [0.0, 1.0] and _histogram([], [0.0, 1.0]) == [0]


def _pairwise() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "judge_a": ["f1", "f1", "contains"],
            "judge_b": ["contains", "llm", "llm"],
            "n": [10, 9, 8],
            "cohen_kappa": [0.75, float("nan"), 0.2],
        }
    )


def test_kappa_heatmap_from_polars_or_pandas_pairwise() -> None:
    specs = [chart_spec(charts.chart_judge_kappa(t)) for t in (_pairwise(), _pairwise().to_pandas())]
    assert specs[0] == specs[1]
    (cells,) = specs[0]["datasets"].values()
    by_pair = {(c["judge_a"], c["judge_b"]): c for c in cells}
    assert len(cells) == 3 * 2 + 3  # both orders of each pair, and the diagonal
    assert by_pair[("llm", "f1")]["text"] == "n/a" and by_pair[("llm", "f1")]["value"] is None
    assert by_pair[("f1", "contains")]["text"] == "0.75" and by_pair[("f1", "contains")]["dark"] is True
    assert by_pair[("contains", "llm")]["dark"] is False and by_pair[("contains", "llm")]["n"] == 8
    assert by_pair[("f1", "f1")] == {
        "judge_a": "f1",
        "judge_b": "f1",
        "value": 1.0,
        "n": None,
        "text": "1.00",
        "dark": True,
    }
    with pytest.raises(ValueError, match="gwet_ac1"):
        charts.chart_judge_kappa(_pairwise(), statistic="gwet_ac1")
    with pytest.raises(ValueError, match="JudgeAgreement"):
        charts.chart_judge_kappa(pd.Series([1, 2]))
