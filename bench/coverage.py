"""Coverage and type-I error of the clustered statistics over a sweep of benchmark designs (issue 27).

Designs: 5, 10 or 20 haystacks of 40 questions on average, equal, moderately unequal, very unequal, or with
one haystack holding 50% or 65% of the questions (``tests/clustered_sim.py``: ``design_sizes``); each
haystack's accuracy Beta-distributed with mean 0.5, 0.7, 0.9 or 0.95 and intraclass correlation 0, 0.1 or
0.3. Per design, seeded:

- coverage of the true accuracy by ``accuracy_intervals``' 95% intervals: ``clustered`` (the default, with the
  share of results that carry a ``warning``) and ``wilson`` (questions independent); ``--previous`` adds the
  rule before session 8 (cluster bootstrap-t from 10 haystacks, design-adjusted Wilson on K − 1 df below);
- type-I error at 5% of the paired tests, two equally good runs on the same questions: the clustered paired
  test of ``tell_apart`` / ``clustered_paired_comparisons`` (``paired_difference_test``), McNemar's test
  over questions, and ``bench_nb.metrics.paired.paired_comparison`` itself on a questions frame (whatever test it uses:
  the hook for making it clustered; ``--paired-frames`` benchmarks per design, 0 to skip).

    .venv/bin/python bench/coverage.py                 # the summary table of docs/statistics.md
    .venv/bin/python bench/coverage.py --full          # every cell
    .venv/bin/python bench/coverage.py --reps 400 --clusters 10
    .venv/bin/python bench/coverage.py --audit         # issue 39's designs: the table of "When the interval warns"

``--audit`` runs issue 39's designs instead (``tests/clustered_sim.py``: ``audit_designs``; 4-8 LoCoMo-sized
haystacks, accuracy 0.9-0.98, Beta haystack accuracies with ICC 0.3-0.6, one haystack holding 60%, logit-normal
haystack effects with sd 2-3): per design the coverage of every public accuracy interval (``clustered`` with the
share of results that warn and the share of its misses that warn; ``wilson``; ``corrected_accuracy`` with the
clustered effective n and with n, a judge of sensitivity 0.95 and specificity 0.9 known from 200 labels;
``beam_scores``' Student's t over the haystacks' means, for one ability), then
the lowest ``clustered`` coverage by effective haystacks (``metrics.clustered.WORST_COVERAGE``, with 10 and 20
haystacks added). About a minute at 1,000 benchmarks per design.

A few minutes on one CPU at the defaults (1,000 benchmarks per cell for the intervals and the clustered
test). Monte Carlo standard error of a coverage near 95% with 1,000 benchmarks: 0.007.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import bench_nb
from bench_nb.metrics.beam import _t_interval
from bench_nb.metrics.clustered import (
    WORST_COVERAGE,
    ClusterSums,
    bell_mccaffrey_df,
    cluster_variance,
    clustered_interval,
    clustered_n,
    design_effect,
    design_wilson_interval,
    independent_interval,
    resampled_sums,
)
from bench_nb.metrics.clustered_paired import paired_difference_test
from bench_nb.metrics.judge_quality import corrected_accuracy
from bench_nb.metrics.paired import mcnemar_test
from clustered_sim import (
    SHAPES,
    Design,
    audit_designs,
    cluster_rates,
    design_sizes,
    frame,
    paired_null_counts,
)

CLUSTERS = (5, 10, 20)
ICCS = (0.0, 0.1, 0.3)
ACCURACIES = (0.5, 0.7, 0.9, 0.95)
TARGET = 0.92  # issue 27: coverage at least this in every cell with accuracy ≤ 0.9, or a warning


@dataclass
class Cell:
    clusters: int
    shape: str
    icc: float
    p: float
    effective_clusters: float
    clustered: float
    warned: float
    wilson: float
    previous: float
    type1_clustered: float
    type1_mcnemar: float
    type1_paired_comparison: float


def bootstrap_t_interval(
    weights: np.ndarray,
    sums: np.ndarray,
    counts: np.ndarray,
    confidence: float = 0.95,
    bounds: tuple[float, float] = (0.0, 1.0),
) -> tuple[float, float]:
    """The cluster bootstrap-t (studentised) interval of the mean Σ sums / Σ counts.

    Each resample b (a row of cluster counts W_b) gives its mean m*_b and its own CR1 standard error se*_b;
    with t*_b = (m*_b − m) / se*_b, the interval is [m − t*_{1−α/2}·se, m − t*_{α/2}·se] (Efron & Tibshirani
    1993, ch. 12; Field & Welsh 2007 for clusters), clipped to ``bounds``. Resamples with se* = 0 are left
    out. ``(nan, nan)`` with fewer than 2 clusters or no spread between clusters.
    """
    s, c = np.asarray(sums, dtype=float)[:, None], np.asarray(counts, dtype=float)[:, None]
    k = int((c > 0).sum())
    se = math.sqrt(cluster_variance(s[:, 0], c[:, 0])) if k >= 2 else math.nan
    if not se > 0:
        return (math.nan, math.nan)
    mean = s.sum(axis=0) / c.sum(axis=0)
    # Σ_k W_bk (S_k − m*_b N_k)², expanded so that every resample is one matrix product.
    den, ws, wss, wsc, wcc = np.split(weights @ np.hstack([c, s, s * s, s * c, c * c]), 5, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        m_star = ws / den
        spread = wss - 2 * m_star * wsc + m_star**2 * wcc
        se_star = np.sqrt(k / (k - 1) * np.maximum(spread, 0.0)) / den
        t_star = (m_star - mean) / se_star
    t = t_star[se_star[:, 0] > 0, 0]
    if not len(t):
        return (math.nan, math.nan)
    a = (1 - confidence) / 2
    t_low, t_high = np.quantile(t, [a, 1 - a])
    return (max(bounds[0], float(mean[0] - t_high * se)), min(bounds[1], float(mean[0] - t_low * se)))


def _sums(sums: np.ndarray, counts: np.ndarray) -> ClusterSums:
    n = counts.sum()
    p = sums.sum() / n
    return ClusterSums(np.arange(len(sums)).astype(object), sums, counts, float(n * p * (1 - p)))


def _previous(cs: ClusterSums, deff: float, seed: int) -> tuple[float, float]:
    """The clustered interval before session 8: the cluster bootstrap-t (2,000 resamples) from 10 haystacks
    with at least 10 effective events, else the design-adjusted Wilson interval on K − 1 df."""
    p = cs.mean
    events = cs.n / max(1.0, deff) * min(p, 1 - p) if not math.isnan(deff) else 0.0
    if cs.clusters >= 10 and events >= 10:
        low, high = bootstrap_t_interval(resampled_sums(np.eye(cs.clusters), seed), cs.sums, cs.counts)
        if not math.isnan(low):
            return (low, high)
    return design_wilson_interval(float(cs.sums.sum()), cs.n, deff, cs.clusters)


def coverage(
    rng: np.random.Generator, sizes: np.ndarray, p: float, icc: float, reps: int, previous: bool
) -> tuple[float, float, float, float]:
    """Coverage of ``clustered``, share warned, coverage of ``wilson`` and of the previous rule (nan unless
    ``previous``) over ``reps`` benchmarks."""
    counts = sizes.astype(float)
    sums = rng.binomial(sizes, cluster_rates(rng, p, icc, (reps, len(sizes)))).astype(float)
    hit = warned = hit_wilson = hit_previous = 0
    for i in range(reps):
        cs = _sums(sums[i], counts)
        got = clustered_interval(cs)
        hit += got.low <= p <= got.high
        warned += got.warning is not None
        deff = design_effect(cs)
        wilson = independent_interval(cs, deff)
        hit_wilson += wilson.low <= p <= wilson.high
        if previous:
            low, high = _previous(cs, deff, i)
            hit_previous += low <= p <= high
    return hit / reps, warned / reps, hit_wilson / reps, hit_previous / reps if previous else math.nan


def type_one(
    rng: np.random.Generator, sizes: np.ndarray, p: float, icc: float, reps: int, frames: int
) -> tuple[float, float, float]:
    """Rejection rates at 5% with no true difference: the clustered paired test, McNemar's, and
    ``bench_nb.metrics.paired.paired_comparison`` on the first ``frames`` benchmarks as questions frames (nan with none).

    The clustered test is ``paired_difference_test`` (what ``tell_apart`` runs: the CR2 t on
    Bell-McCaffrey df) on the haystacks' summed differences of every benchmark."""
    a_only, b_only, both = paired_null_counts(rng, p, icc, sizes, reps)
    counts = sizes.astype(float)
    p_clustered = np.array([paired_difference_test(d, counts).p for d in a_only - b_only])
    mcnemar = sum(
        mcnemar_test(int(a), int(b))[1] < 0.05 for a, b in zip(a_only.sum(1), b_only.sum(1), strict=True)
    )
    public = math.nan
    if frames:
        rejected = 0
        for i in range(frames):
            a, b = _answers(a_only[i], b_only[i], both[i], sizes)
            q = frame({"a": a, "b": b}, sizes, status="evaluated", unscored=False, question_type_norm="t")
            rejected += (
                bench_nb.metrics.paired.paired_comparison(q, "a", "b", backend="polars").p_value < 0.05
            )
        public = rejected / frames
    return float((p_clustered < 0.05).mean()), mcnemar / reps, public


def _answers(
    a_only: np.ndarray, b_only: np.ndarray, both: np.ndarray, sizes: np.ndarray
) -> tuple[np.ndarray, ...]:
    """Both runs' 0/1 answers, haystack by haystack: A-only, then B-only, then both right, then neither."""
    a, b = [], []
    for k, m in enumerate(sizes):
        ao, bo, bb = int(a_only[k]), int(b_only[k]), int(both[k])
        rest = m - ao - bo - bb
        a.append(np.r_[np.ones(ao), np.zeros(bo), np.ones(bb), np.zeros(rest)])
        b.append(np.r_[np.zeros(ao), np.ones(bo), np.ones(bb), np.zeros(rest)])
    return np.concatenate(a), np.concatenate(b)


def sweep(
    clusters: tuple[int, ...],
    reps: int,
    frames: int,
    previous: bool,
    seed: int = 27,
    frame_clusters: tuple[int, ...] = (10,),
) -> list[Cell]:
    cells = []
    for k in clusters:
        for s_i, shape in enumerate(SHAPES):
            sizes = design_sizes(k, shape)
            for c_i, icc in enumerate(ICCS):
                for p_i, p in enumerate(ACCURACIES):
                    rng = np.random.default_rng([seed, k, s_i, c_i, p_i])  # each cell its own stream
                    cov, warned, wilson, prev = coverage(rng, sizes, p, icc, reps, previous)
                    t1, t1_mcnemar, t1_public = type_one(
                        rng, sizes, p, icc, reps, frames if k in frame_clusters else 0
                    )
                    cells.append(
                        Cell(
                            k,
                            shape,
                            icc,
                            p,
                            bell_mccaffrey_df(sizes.astype(float)) + 1,
                            cov,
                            warned,
                            wilson,
                            prev,
                            t1,
                            t1_mcnemar,
                            t1_public,
                        )
                    )
    return cells


def _pct(x: float) -> str:
    return "–" if math.isnan(x) else f"{100 * x:.1f}"


def _range(xs: list[float]) -> str:
    xs = [x for x in xs if not math.isnan(x)]
    if not xs:
        return "–"
    lo, hi = min(xs), max(xs)
    return _pct(lo) if round(lo, 3) == round(hi, 3) else f"{_pct(lo)}-{_pct(hi)}"


def summary(cells: list[Cell]) -> str:
    """One markdown row per design (haystacks × shape): coverage ranges over ICC and accuracy ≤ 0.9 (and at
    0.95 apart), the cells under 92% with their share warned, and the type-I errors' ranges."""
    frame_ = pl.DataFrame([c.__dict__ for c in cells])
    lines = [
        "| K | shape | effective K | clustered, p ≤ 0.9 | cells < 92%: share warned | clustered, p = 0.95 "
        "| previous rule, p ≤ 0.9 | Wilson, p ≤ 0.9 | type I: clustered test | McNemar | paired_comparison |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for (k, shape), part in frame_.group_by(["clusters", "shape"], maintain_order=True):
        low = part.filter(pl.col("p") <= 0.9)
        high = part.filter(pl.col("p") > 0.9)
        short = low.filter(pl.col("clustered") < TARGET)
        flagged = ", ".join(
            f"p {r['p']}, ICC {r['icc']}: {_pct(r['clustered'])}% ({_pct(r['warned'])}% warned)"
            for r in short.iter_rows(named=True)
        )
        lines.append(
            f"| {k} | {shape} | {part['effective_clusters'][0]:.1f} | {_range(low['clustered'].to_list())} "
            f"| {flagged or 'none'} | {_range(high['clustered'].to_list())} "
            f"| {_range(low['previous'].to_list())} | {_range(low['wilson'].to_list())} "
            f"| {_range(part['type1_clustered'].to_list())} | {_range(part['type1_mcnemar'].to_list())} "
            f"| {_range(part['type1_paired_comparison'].to_list())} |"
        )
    return "\n".join(lines)


def full(cells: list[Cell]) -> str:
    head = (
        f"{'K':>3} {'shape':<19}{'eff K':>6}{'ICC':>5}{'p':>6}{'clustered':>10}{'warned':>8}{'wilson':>8}"
        f"{'previous':>9}{'I clust':>8}{'I McN':>7}{'I paired_comparison':>20}"
    )
    rows = [head]
    for c in cells:
        rows.append(
            f"{c.clusters:>3} {c.shape:<19}{c.effective_clusters:>6.1f}{c.icc:>5}{c.p:>6}{_pct(c.clustered):>10}"
            f"{_pct(c.warned):>8}{_pct(c.wilson):>8}{_pct(c.previous):>9}{_pct(c.type1_clustered):>8}"
            f"{_pct(c.type1_mcnemar):>7}{_pct(c.type1_paired_comparison):>20}"
        )
    return "\n".join(rows)


def silent_undercover(cells: list[Cell], reps: int, warned_share: float = 0.85) -> list[Cell]:
    """Cells with accuracy ≤ 0.9 where ``clustered`` covers under ``TARGET`` by more than two Monte Carlo
    standard errors and fewer than ``warned_share`` of the results carry a warning: what issue 27 forbids
    (tests/metrics/test_coverage_sweep.py asserts the same)."""
    margin = 2 * math.sqrt(TARGET * (1 - TARGET) / reps)
    return [c for c in cells if c.p <= 0.9 and c.clustered < TARGET - margin and c.warned < warned_share]


JUDGE = (0.95, 0.9, 100, 100)  # corrected_accuracy's judge: sensitivity, specificity, labels right / wrong


@dataclass
class AuditRow:
    design: Design
    effective_clusters: float
    clustered: float
    warned: float
    misses_warned: float
    wilson: float
    corrected: float
    corrected_unclustered: float
    beam: float


def audit(design: Design, reps: int) -> AuditRow:
    """Coverage of the true accuracy by every public accuracy interval over ``reps`` benchmarks of
    ``design`` (the seeds of the test, so its numbers are the test's)."""
    rng = design.rng()
    counts = design.sizes.astype(float)
    se, sp, n1, n0 = JUDGE
    hit = np.zeros(reps, dtype=bool)
    warned = np.zeros(reps, dtype=bool)
    hit_wilson = hit_corrected = hit_plain = hit_beam = 0
    for i, s in enumerate(design.sums(rng, reps)):
        cs = _sums(s, counts)
        got = clustered_interval(cs)
        hit[i] = got.low <= design.p <= got.high
        warned[i] = got.warning is not None
        wilson = independent_interval(cs, design_effect(cs))
        hit_wilson += wilson.low <= design.p <= wilson.high
        # beam_scores' interval of one ability: Student's t over the haystacks' own means (equal weights)
        rates = s / counts
        low, high = _t_interval(float(rates.mean()), (rates - rates.mean()) / len(rates), 0.95)
        hit_beam += low <= design.p <= high
        # the judge's verdicts: each right answer accepted with probability se, each wrong one with 1 - sp
        judged = rng.binomial(s.astype(int), se) + rng.binomial((counts - s).astype(int), 1 - sp)
        jcs = _sums(judged.astype(float), counts)
        se_hat, sp_hat = rng.binomial(n1, se) / n1, rng.binomial(n0, sp) / n0
        for n, tally in ((clustered_n(jcs), "c"), (jcs.n, "p")):
            fix = corrected_accuracy(jcs.mean, se_hat, sp_hat, (n1, n0), n=n)
            ok = fix.ci_low <= design.p <= fix.ci_high
            if tally == "c":
                hit_corrected += ok
            else:
                hit_plain += ok
    missed = ~hit
    return AuditRow(
        design,
        bell_mccaffrey_df(counts) + 1,
        float(hit.mean()),
        float(warned.mean()),
        float(warned[missed].mean()) if missed.any() else math.nan,
        hit_wilson / reps,
        hit_corrected / reps,
        hit_plain / reps,
        hit_beam / reps,
    )


def audit_table(rows: list[AuditRow]) -> str:
    lines = [
        "| design | K | p | effect | effective K | clustered | warned | misses warned | Wilson "
        "| corrected_accuracy | (with n) | beam_scores (t over haystacks) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        d = r.design
        effect = f"sd {d.effect}" if d.kind == "logit-normal" else f"ICC {d.effect}"
        lines.append(
            f"| {d.kind} | {d.clusters} | {d.p} | {effect} | {r.effective_clusters:.1f} | {_pct(r.clustered)} "
            f"| {_pct(r.warned)} | {_pct(r.misses_warned)} | {_pct(r.wilson)} | {_pct(r.corrected)} "
            f"| {_pct(r.corrected_unclustered)} | {_pct(r.beam)} |"
        )
    return "\n".join(lines)


def worst_by_effective_clusters(rows: list[AuditRow], reps: int) -> str:
    """The lowest ``clustered`` coverage per ``WORST_COVERAGE`` bin, with 10 and 20 equal LoCoMo-sized
    haystacks added at the audit's accuracies and ICCs for the bins above 8.5."""
    extra = []
    for k in (10, 20):
        for p in (0.9, 0.93, 0.95, 0.98):
            for icc in (0.3, 0.45, 0.6):
                design = Design("beta", k, p, icc)
                rng = np.random.default_rng([39, 9, k, round(p * 100), round(icc * 100)])
                counts = design.sizes.astype(float)
                hit = sum(
                    (lambda g: g.low <= p <= g.high)(clustered_interval(_sums(s, counts)))
                    for s in design.sums(rng, reps)
                )
                extra.append((bell_mccaffrey_df(counts) + 1, hit / reps))
    pairs = [(r.effective_clusters, r.clustered) for r in rows] + extra
    out, low = [], 0.0
    for limit, stated in WORST_COVERAGE:
        got = [c for k, c in pairs if low < k <= limit]
        out.append(
            f"effective haystacks {low:g}-{limit:g}: lowest {_pct(min(got)) if got else '–'}% "
            f"(WORST_COVERAGE says {stated}%)"
        )
        low = limit
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--reps", type=int, default=1000, help="benchmarks per cell (intervals, clustered test)"
    )
    parser.add_argument(
        "--paired-frames", type=int, default=200, help="benchmarks per cell for paired_comparison"
    )
    parser.add_argument(
        "--paired-clusters", type=int, nargs="*", default=[10], help="designs to run paired_comparison on"
    )
    parser.add_argument("--clusters", type=int, nargs="*", default=list(CLUSTERS))
    parser.add_argument("--previous", action="store_true", help="also the interval rule before session 8")
    parser.add_argument("--full", action="store_true", help="print every cell")
    parser.add_argument("--seed", type=int, default=27)
    parser.add_argument("--audit", action="store_true", help="issue 39's designs (every public interval)")
    args = parser.parse_args()
    start = time.perf_counter()
    if args.audit:
        rows = [audit(d, args.reps) for d in audit_designs()]
        print(audit_table(rows))
        print()
        print(worst_by_effective_clusters(rows, args.reps))
        print(f"\n{len(rows)} designs, {args.reps} benchmarks each; {time.perf_counter() - start:.0f} s.")
        return
    cells = sweep(
        tuple(args.clusters),
        args.reps,
        args.paired_frames,
        args.previous,
        args.seed,
        tuple(args.paired_clusters),
    )
    if args.full:
        print(full(cells))
        print()
    print(summary(cells))
    bad = silent_undercover(cells, args.reps)
    print(
        f"\n{len(cells)} cells, {args.reps} benchmarks each ({args.paired_frames} for paired_comparison), "
        f"seed {args.seed}; {time.perf_counter() - start:.0f} s. "
        + (
            "Silent under-cover (p ≤ 0.9, < 92% less 2 MC SEs, < 85% warned): none."
            if not bad
            else f"SILENT UNDER-COVER in {len(bad)} cells."
        )
    )


if __name__ == "__main__":
    main()
