"""Altair charts of runs, for notebooks, reports and writeups.

Every ``chart_*`` function takes run sources or a questions frame (``chart_judge_kappa`` takes a
``JudgeAgreement``) and returns an altair chart; the numbers come from ``bench_nb.metrics``. Charts
aggregate in polars before altair sees the data, so a run of any size stays far below altair's 5,000-row
limit. ``save(chart, "x.png")`` writes PNG, SVG, PDF or self-contained HTML offline; ``to_svg`` gives the
SVG text that reports embed. Importing this package registers the ``bench_nb`` altair theme;
``use_theme()`` makes it the session's theme (``save``/``to_svg`` always use it).

Scales, axes, titles, steps, headers and resolves are written as Vega-Lite's own dicts (``scale={"domain":
[0, 1]}``), not ``alt.Scale(...)`` objects: altair deep-copies every field of every such object (30 for a
scale, 70 for an axis) each time a chart is layered, concatenated or exported, a dozen times per layer of
a concatenated chart, while a dict copies only the keys given. Keys in altair's own order (alphabetical,
a title's ``text`` first), so the spec is the same to the byte.
"""

from __future__ import annotations

from bench_nb.charts.accuracy import chart_accuracy_by_type
from bench_nb.charts.beam import chart_beam
from bench_nb.charts.judge_quality import chart_answer_lengths, chart_judge_audit, chart_prompt_sweep
from bench_nb.charts.judges import chart_judge_kappa
from bench_nb.charts.latency import chart_latency
from bench_nb.charts.memscore import chart_memscore
from bench_nb.charts.outcomes import chart_outcome_matrix
from bench_nb.charts.save import chart_spec, save, to_svg
from bench_nb.charts.theme import OUTCOME_COLORS, PALETTE, PROVIDER_COLORS, THEME, themed, use_theme
from bench_nb.charts.tokens import chart_context_tokens
from bench_nb.charts.uncertainty import chart_accuracy_intervals, chart_pareto

__all__ = [
    "OUTCOME_COLORS",
    "PALETTE",
    "PROVIDER_COLORS",
    "THEME",
    "chart_accuracy_by_type",
    "chart_accuracy_intervals",
    "chart_answer_lengths",
    "chart_beam",
    "chart_context_tokens",
    "chart_judge_audit",
    "chart_judge_kappa",
    "chart_latency",
    "chart_memscore",
    "chart_outcome_matrix",
    "chart_pareto",
    "chart_prompt_sweep",
    "chart_spec",
    "save",
    "themed",
    "to_svg",
    "use_theme",
]
