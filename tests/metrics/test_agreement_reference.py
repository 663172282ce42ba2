"""Each agreement statistic equals its reference implementation to 1e-9.

References: scikit-learn's ``cohen_kappa_score``, statsmodels' ``fleiss_kappa``, the ``krippendorff``
package (nominal), and Gwet's AC1 checked against the published worked examples of Gwet (2014), Handbook of
Inter-Rater Reliability, 4th ed. (the 4 raters × 12 subjects data of p. 120, and the 3×3 abstractors
table), as reproduced in the irrCAC packages' test suites (AC1 = 0.775, pa = 0.818, pe = 0.190; 0.849).
"""

from __future__ import annotations

import math
import warnings
from itertools import combinations

import krippendorff
import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from bench_nb import judge_agreement
from bench_nb.metrics.agreement import (
    cohen_kappa,
    fleiss_kappa,
    gwet_ac1,
    krippendorff_alpha_nominal,
    percent_agreement,
    rating_counts,
)

TOL = 1e-9


def same(x: float, y: float) -> bool:
    """Equal to 1e-9, or both undefined (nan)."""
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    return math.isclose(x, y, rel_tol=0, abs_tol=TOL)


def long_frame(matrix: np.ndarray, judges: list[str] | None = None) -> pd.DataFrame:
    """items × judges matrix (nan = unscored) -> the long form judge_agreement takes."""
    judges = judges or [f"j{i}" for i in range(matrix.shape[1])]
    rows = []
    for i, item in enumerate(matrix):
        for j, v in enumerate(item):
            rows.append(
                {"question_id": f"q{i}", "judge": judges[j], "score": None if np.isnan(v) else int(v)}
            )
    return pd.DataFrame(rows)


# ---- references ---------------------------------------------------------------------------------------------


def ref_fleiss(complete: np.ndarray) -> float:
    table = np.stack([(complete == 0).sum(1), (complete == 1).sum(1)], axis=1)
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        warnings.simplefilter("ignore")
        return float(sm_fleiss_kappa(table, method="fleiss"))


def ref_alpha(matrix: np.ndarray) -> float:
    try:
        with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
            warnings.simplefilter("ignore")
            return float(krippendorff.alpha(matrix.T, level_of_measurement="nominal", value_domain=[0, 1]))
    except ValueError:  # "at least one unit with values assigned by at least two coders"
        return math.nan


def ref_cohen(a: np.ndarray, b: np.ndarray) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(cohen_kappa_score(a.astype(int), b.astype(int), labels=[0, 1]))


def ref_ac1(complete: np.ndarray) -> float:
    """Gwet (2008) eq. for r raters, q = 2 categories, written out item by item."""
    n, r = complete.shape
    if n == 0:
        return math.nan
    pa = 0.0
    pi1 = 0.0
    for item in complete:
        ones = int((item == 1).sum())
        zeros = r - ones
        pa += (ones * (ones - 1) + zeros * (zeros - 1)) / (r * (r - 1))
        pi1 += ones / r
    pa /= n
    pi1 /= n
    pe = (pi1 * (1 - pi1) + (1 - pi1) * pi1) / (2 - 1)
    return (pa - pe) / (1 - pe)


def ref_percent(complete: np.ndarray) -> float:
    n, r = complete.shape
    if n == 0:
        return math.nan
    agree = [np.mean([item[a] == item[b] for a, b in combinations(range(r), 2)]) for item in complete]
    return float(np.mean(agree))


def check(matrix: np.ndarray) -> None:
    """judge_agreement on ``matrix`` equals every reference."""
    result = judge_agreement(long_frame(matrix))
    complete = matrix[~np.isnan(matrix).any(axis=1)]
    assert result.n_items == len(complete)
    assert result.n_dropped == len(matrix) - len(complete)
    assert same(result.fleiss_kappa, ref_fleiss(complete) if len(complete) else math.nan)
    assert same(result.krippendorff_alpha, ref_alpha(matrix))
    assert same(result.gwet_ac1, ref_ac1(complete))
    assert same(result.percent_agreement, ref_percent(complete))
    pairs = result.pairwise.set_index(["judge_a", "judge_b"])
    for i, j in combinations(range(matrix.shape[1]), 2):
        both = ~np.isnan(matrix[:, i]) & ~np.isnan(matrix[:, j])
        a, b = matrix[both, i], matrix[both, j]
        row = pairs.loc[(f"j{i}", f"j{j}")]
        assert row["n"] == both.sum()
        assert same(row["cohen_kappa"], ref_cohen(a, b) if both.any() else math.nan)
        assert same(row["gwet_ac1"], ref_ac1(np.column_stack([a, b])))
        assert same(row["percent_agreement"], float(np.mean(a == b)) if both.any() else math.nan)


# ---- random inputs ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(60))
def test_random_inputs_equal_references(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n_items = int(rng.integers(1, 80))
    n_judges = int(rng.integers(2, 6))
    p_correct = float(rng.choice([0.5, 0.8, 0.95, rng.uniform()]))  # skewed marginals, the usual case
    truth = rng.random(n_items) < p_correct
    flip = rng.uniform(0, 0.3)
    matrix = np.array(
        [[float(t ^ (rng.random() < flip)) for _ in range(n_judges)] for t in truth], dtype=float
    ).reshape(n_items, n_judges)
    if seed % 2:  # half the cases with missing verdicts
        matrix[rng.random(matrix.shape) < 0.15] = np.nan
    check(matrix)


# ---- degenerate inputs ------------------------------------------------------------------------------------------


def test_all_judges_agree_on_every_item() -> None:
    matrix = np.array([[1, 1, 1], [0, 0, 0], [1, 1, 1], [1, 1, 1]], dtype=float)
    check(matrix)
    result = judge_agreement(long_frame(matrix))
    assert result.percent_agreement == 1.0
    assert result.fleiss_kappa == 1.0 and result.gwet_ac1 == 1.0 and result.krippendorff_alpha == 1.0


def test_every_verdict_identical_kappa_undefined_ac1_one() -> None:
    matrix = np.ones((5, 2))
    check(matrix)
    result = judge_agreement(long_frame(matrix))
    # The reference libraries leave kappa and alpha undefined with zero expected disagreement.
    assert math.isnan(result.fleiss_kappa) and math.isnan(result.krippendorff_alpha)
    assert math.isnan(result.pairwise["cohen_kappa"][0])
    assert result.gwet_ac1 == 1.0 and result.percent_agreement == 1.0


def test_one_judge_constant() -> None:
    matrix = np.array([[1, 1], [1, 0], [1, 1], [1, 1], [1, 0], [1, 1]], dtype=float)
    check(matrix)
    result = judge_agreement(long_frame(matrix))
    assert result.pairwise["cohen_kappa"][0] == 0.0  # a constant rater carries no information
    assert result.gwet_ac1 > 0.4  # AC1 does not collapse with skewed marginals


def test_high_agreement_low_kappa_paradox() -> None:
    # 90% agreement, 95% "correct": kappa near zero, AC1 high (why AC1 is reported beside kappa).
    matrix = np.array([[1, 1]] * 18 + [[1, 0], [0, 1]], dtype=float)
    check(matrix)
    result = judge_agreement(long_frame(matrix))
    assert result.percent_agreement == pytest.approx(0.9)
    assert abs(result.pairwise["cohen_kappa"][0]) < 0.1
    assert result.gwet_ac1 > 0.85


def test_missing_verdicts() -> None:
    nan = np.nan
    matrix = np.array([[1, 1, nan], [0, 1, 1], [nan, nan, 1], [1, 0, 0], [1, 1, 1], [0, nan, 0]])
    check(matrix)
    result = judge_agreement(long_frame(matrix))
    assert (result.n_items, result.n_dropped) == (3, 3)
    assert result.krippendorff_items == 5  # every item with two verdicts; the lone verdict is unpairable


def test_single_item() -> None:
    for row in ([1.0, 0.0], [1.0, 1.0], [0.0, 1.0, 1.0]):
        check(np.array([row]))


def test_no_item_scored_by_two_judges() -> None:
    matrix = np.array([[1, np.nan], [np.nan, 0]])
    check(matrix)
    result = judge_agreement(long_frame(matrix))
    assert result.n_items == 0 and result.n_dropped == 2
    assert math.isnan(result.percent_agreement) and math.isnan(result.krippendorff_alpha)


def test_unscored_flag_means_missing() -> None:
    df = long_frame(np.array([[1, 1], [0, 1], [1, 0], [1, 1]], dtype=float))
    df["unscored"] = False
    df.loc[(df["question_id"] == "q1") & (df["judge"] == "j0"), "unscored"] = True
    result = judge_agreement(df)
    assert (result.n_items, result.n_dropped) == (3, 1)
    check(np.array([[1, 1], [np.nan, 1], [1, 0], [1, 1]]))


# ---- Gwet's published examples ----------------------------------------------------------------------------------

# Gwet (2014), Handbook of Inter-Rater Reliability, 4th ed., p. 120: 4 raters, 12 subjects, 5 categories.
GWET_4RATERS = np.array(
    [
        [1, 1, np.nan, 1],
        [2, 2, 3, 2],
        [3, 3, 3, 3],
        [3, 3, 3, 3],
        [2, 2, 2, 2],
        [1, 2, 3, 4],
        [4, 4, 4, 4],
        [1, 1, 2, 1],
        [2, 2, 2, 2],
        [np.nan, 5, 5, 5],
        [np.nan, np.nan, 1, 1],
        [np.nan, np.nan, 3, np.nan],
    ]
)


def test_gwet_ac1_published_four_raters_example() -> None:
    counts = rating_counts(GWET_4RATERS, categories=(1, 2, 3, 4, 5))
    assert round(percent_agreement(counts), 3) == 0.818
    assert round(gwet_ac1(counts), 3) == 0.775
    # pe = (pa - AC1) / (1 - AC1) recovers the published 0.190
    pa, ac1 = percent_agreement(counts), gwet_ac1(counts)
    assert round((pa - ac1) / (1 - ac1), 3) == 0.190
    # The same data through the krippendorff package (it takes missing values as we do).
    ref = krippendorff.alpha(GWET_4RATERS.T, level_of_measurement="nominal", value_domain=[1, 2, 3, 4, 5])
    assert same(krippendorff_alpha_nominal(counts), float(ref))


def test_gwet_ac1_published_abstractors_table() -> None:
    # 100 pregnancies classified by 2 abstractors into 3 categories (Gwet 2014): AC1 = 0.849.
    table = np.array([[13, 0, 0], [0, 20, 7], [0, 4, 56]])
    a = np.repeat([0, 0, 0, 1, 1, 1, 2, 2, 2], table.ravel())
    b = np.repeat([0, 1, 2, 0, 1, 2, 0, 1, 2], table.ravel())
    counts = rating_counts(np.column_stack([a, b]).astype(float), categories=(0, 1, 2))
    assert round(gwet_ac1(counts), 3) == 0.849
    assert same(cohen_kappa(a, b, categories=(0, 1, 2)), float(cohen_kappa_score(a, b)))


def test_fleiss_rejects_unequal_raters() -> None:
    with pytest.raises(ValueError, match="same number of raters"):
        fleiss_kappa(np.array([[1.0, 1.0], [2.0, 0.0], [1.0, 0.0]]))


def test_statistics_take_plain_lists() -> None:
    # numpy arrays or lists of rows: the statistics need no numpy (None marks a missing rating in a list).
    matrix = [[1, 1, None], [0, 1, 1], [1, 0, 0], [1, 1, 1]]
    counts = rating_counts(matrix)
    assert counts == [[0.0, 2.0], [1.0, 2.0], [2.0, 1.0], [0.0, 3.0]]
    arr = np.array(matrix, dtype=float)
    assert same(krippendorff_alpha_nominal(counts), ref_alpha(arr))
    assert same(percent_agreement(counts), percent_agreement(rating_counts(arr)))
    assert same(gwet_ac1(counts[1:]), ref_ac1(arr[1:]))
    assert same(fleiss_kappa(counts[1:]), ref_fleiss(arr[1:]))
    assert same(
        cohen_kappa([1, 0, 1, 1], [1, 1, 0, 1]), ref_cohen(np.array([1, 0, 1, 1]), np.array([1, 1, 0, 1]))
    )
    with pytest.raises(ValueError, match="2-D"):
        rating_counts([1, 0, 1])
