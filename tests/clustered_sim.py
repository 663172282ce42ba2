"""Seeded simulations of clustered benchmarks for the uncertainty tests (LoCoMo's shape: 10 conversations)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

# Questions per conversation in LoCoMo's 1,540 scored questions (categories 1-4), as the audit's files hold them.
LOCOMO_SIZES = np.array([152, 81, 152, 199, 178, 123, 150, 191, 156, 158])


def beta_binomial_sums(rng: np.random.Generator, p: float, icc: float, sizes: np.ndarray) -> np.ndarray:
    """Correct answers per cluster when each cluster's accuracy is Beta-distributed with mean ``p`` and
    intraclass correlation ``icc`` (= 1 / (a + b + 1))."""
    s = 1 / icc - 1
    return rng.binomial(sizes, rng.beta(p * s, (1 - p) * s, len(sizes))).astype(float)


def paired_null(rng: np.random.Generator, sizes: np.ndarray = LOCOMO_SIZES) -> tuple[np.ndarray, np.ndarray]:
    """Two runs with the same accuracy distribution (the null): a shared question difficulty, and a
    per-run effect per conversation (each provider stored each conversation its own way)."""
    hay = np.repeat(np.arange(len(sizes)), sizes)
    difficulty = rng.normal(0, 1, len(hay))
    base = np.log(0.75 / 0.25)
    out = []
    for _ in range(2):
        effect = rng.normal(0, 0.8, len(sizes))
        p = 1 / (1 + np.exp(-(base + effect[hay] + difficulty)))
        out.append((rng.random(len(hay)) < p).astype(float))
    return out[0], out[1]


def frame(values: dict[str, np.ndarray], sizes: np.ndarray = LOCOMO_SIZES, **columns: object) -> pl.DataFrame:
    """A long frame ``run_id, question_id, haystack_id, correct`` (or ``score``) of runs on one question set."""
    hay = np.repeat(np.arange(len(sizes)), sizes).astype(str)
    qids = [f"q{i}" for i in range(len(hay))]
    parts = [
        pl.DataFrame({"run_id": run, "question_id": qids, "haystack_id": hay, "correct": y.astype(bool)})
        for run, y in values.items()
    ]
    return pl.concat(parts).with_columns(**{k: pl.lit(v) for k, v in columns.items()})


def graded_pairs(
    rng: np.random.Generator,
    replicates: int,
    sizes: np.ndarray = LOCOMO_SIZES,
    shift: float = 0.0,
    spread: float = 0.8,
) -> tuple[np.ndarray, np.ndarray]:
    """``replicates`` benchmarks of two graded runs (BEAM's 0 / 0.5 / 1 rubric: two half-point criteria),
    arrays (replicates, questions): a shared question difficulty and a per-run effect per conversation
    (sd ``spread`` on the logit scale: a strong intra-cluster correlation); run A is ``shift`` logits
    better (0: the null)."""
    hay = np.repeat(np.arange(len(sizes)), sizes)
    difficulty = rng.normal(0, 1, (replicates, len(hay)))
    base = np.log(0.6 / 0.4)
    out = []
    for lift in (shift, 0.0):
        effect = rng.normal(0, spread, (replicates, len(sizes)))
        p = 1 / (1 + np.exp(-(base + lift + effect[:, hay] + difficulty)))
        halves = (rng.random((2, *p.shape)) < p).sum(axis=0)
        out.append(halves / 2)
    return out[0], out[1]


# The designs of the coverage sweep (bench/coverage.py, tests/metrics/test_coverage_sweep.py, docs/statistics.md's
# table): K haystacks of MEAN_SIZE questions on average, in one of these shapes.
MEAN_SIZE = 40
SHAPES = ("equal", "moderately unequal", "very unequal", "one holds 50%", "one holds 65%")


def design_sizes(clusters: int, shape: str, mean_size: int = MEAN_SIZE) -> np.ndarray:
    """Questions per haystack: ``equal``; ``moderately unequal`` (sizes ∝ 0.25 ... 1.75, evenly spaced: a
    coefficient of variation of about 0.45); ``very unequal`` (∝ e^0 ... e^3: the largest 20 times the
    smallest); ``one holds 50%`` / ``one holds 65%`` (one haystack holds that share, the rest equal)."""
    total = clusters * mean_size
    if shape == "equal":
        return np.full(clusters, mean_size)
    if shape in ("moderately unequal", "very unequal"):
        w = (
            np.linspace(0.25, 1.75, clusters)
            if shape == "moderately unequal"
            else np.exp(np.linspace(0, 3, clusters))
        )
        return np.maximum(2, np.round(w / w.sum() * total)).astype(int)
    if shape.startswith("one holds "):
        share = float(shape.removeprefix("one holds ").rstrip("%")) / 100
        rest = round(total * (1 - share) / (clusters - 1))
        return np.r_[round(total * share), np.full(clusters - 1, rest)].astype(int)
    raise ValueError(f"unknown shape {shape!r}")


def cluster_rates(rng: np.random.Generator, p: float, icc: float, shape: tuple[int, ...]) -> np.ndarray:
    """Each haystack's own accuracy: Beta with mean ``p`` and intraclass correlation ``icc`` (all ``p`` at 0)."""
    if icc == 0:
        return np.full(shape, p)
    s = 1 / icc - 1
    return rng.beta(p * s, (1 - p) * s, shape)


def paired_null_counts(
    rng: np.random.Generator, p: float, icc: float, sizes: np.ndarray, replicates: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``replicates`` benchmarks of two equally good runs (the null): each run has its own accuracy per
    haystack (Beta, mean ``p``, ``icc``), its answers independent given it. Per haystack (replicates × K):
    questions only A got right, only B got right, and both."""
    pa = cluster_rates(rng, p, icc, (replicates, len(sizes)))
    pb = cluster_rates(rng, p, icc, (replicates, len(sizes)))
    probs = np.stack([pa * (1 - pb), (1 - pa) * pb, pa * pb, (1 - pa) * (1 - pb)], axis=-1)
    counts = rng.multinomial(np.broadcast_to(sizes, pa.shape), probs)
    return counts[..., 0].astype(float), counts[..., 1].astype(float), counts[..., 2].astype(float)


# Issue 39's audit designs for accuracy intervals: few LoCoMo-sized haystacks (LOCOMO_SIZES' first K) at high
# accuracy with a strong haystack effect: Beta haystack accuracies (ICC 0.3-0.6), one haystack holding 60% of
# the questions, and normal haystack effects on the logit scale (sd 2-3: an ICC of about 0.23-0.45).
AUDIT_CLUSTERS = (4, 6, 8)
AUDIT_ACCURACIES = (0.9, 0.93, 0.95, 0.98)
AUDIT_ICCS = (0.3, 0.45, 0.6)
AUDIT_SDS = (2.0, 2.5, 3.0)
AUDIT_KINDS = ("beta", "one holds 60%", "logit-normal")


@dataclass(frozen=True)
class Design:
    """One audit design: ``kind`` ``"beta"`` (equal-ish LoCoMo sizes), ``"one holds 60%"`` (Beta accuracies)
    or ``"logit-normal"``; ``effect`` is the ICC (Beta) or the logit-scale sd (logit-normal); ``p`` the
    true accuracy (the expected accuracy of a haystack)."""

    kind: str
    clusters: int
    p: float
    effect: float

    @property
    def sizes(self) -> np.ndarray:
        base = np.resize(LOCOMO_SIZES, self.clusters)
        if self.kind != "one holds 60%":
            return base
        total = int(base.sum())
        rest = round(total * 0.4 / (self.clusters - 1))
        return np.r_[round(total * 0.6), np.full(self.clusters - 1, rest)].astype(int)

    def rates(self, rng: np.random.Generator, replicates: int) -> np.ndarray:
        """Each haystack's accuracy in ``replicates`` benchmarks (replicates × K)."""
        shape = (replicates, self.clusters)
        if self.kind != "logit-normal":
            return cluster_rates(rng, self.p, self.effect, shape)
        return 1 / (
            1
            + np.exp(-(logit_normal_location(self.p, self.effect) + self.effect * rng.standard_normal(shape)))
        )

    def sums(self, rng: np.random.Generator, replicates: int) -> np.ndarray:
        """Correct answers per haystack in ``replicates`` benchmarks (replicates × K)."""
        return rng.binomial(self.sizes, self.rates(rng, replicates)).astype(float)

    def rng(self) -> np.random.Generator:
        """The audit's generator for this design, seeded by it (tests/metrics/test_coverage_sweep.py and
        bench/coverage.py --audit draw the same benchmarks)."""
        kind = AUDIT_KINDS.index(self.kind)
        return np.random.default_rng([39, kind, self.clusters, round(self.p * 100), round(self.effect * 100)])

    def label(self) -> str:
        effect = f"sd {self.effect}" if self.kind == "logit-normal" else f"ICC {self.effect}"
        return f"{self.kind}, K {self.clusters}, p {self.p}, {effect}"


def logit_normal_location(p: float, sd: float) -> float:
    """μ such that E[expit(μ + sd·Z)] = ``p`` (Gauss-Hermite quadrature, bisection)."""
    x, w = np.polynomial.hermite_e.hermegauss(80)
    w = w / w.sum()
    lo, hi = -20.0, 20.0
    for _ in range(100):
        mid = (lo + hi) / 2
        if float((w / (1 + np.exp(-(mid + sd * x)))).sum()) < p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def audit_designs() -> list[Design]:
    """The 36 Beta designs (K 4/6/8 × p 0.9/0.93/0.95/0.98 × ICC 0.3/0.45/0.6), 12 with one haystack holding
    60% (K 6/8 × p 0.9/0.95 × ICC) and 18 logit-normal ones (K × p 0.9/0.95 × sd 2/2.5/3)."""
    out = [Design("beta", k, p, icc) for k in AUDIT_CLUSTERS for p in AUDIT_ACCURACIES for icc in AUDIT_ICCS]
    out += [Design("one holds 60%", k, p, icc) for k in (6, 8) for p in (0.9, 0.95) for icc in AUDIT_ICCS]
    out += [Design("logit-normal", k, p, sd) for k in AUDIT_CLUSTERS for p in (0.9, 0.95) for sd in AUDIT_SDS]
    return out
