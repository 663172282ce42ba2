"""Charts of runs, for notebooks, reports and writeups.

Every ``chart_*`` function takes run sources or a questions frame (``chart_judge_kappa`` takes a
``JudgeAgreement``) and returns an altair chart (in a report kernel, a Vega-Lite dict wrapper:
``charts.spec.VegaLiteChart``); the numbers come from ``bench_nb.metrics``. Charts aggregate in polars
before the data is written into the spec, so a run of any size stays far below altair's 5,000-row limit.

Each chart writes its Vega-Lite spec as plain dicts (``charts.spec``: ``field("run:N")``, ``mark("bar")``,
data inline from the polars frame) and ``spec.chart()`` turns the dict into what the function returns: the
altair chart of that spec, built from altair's own chart classes (so ``.properties()``, ``alt.layer()``,
JupyterLab's display and altair's schema validation work as they always have), or, while
``bench_nb.reports.build_report`` executes a notebook (``BENCH_NB_REPORT=1``), the spec themed as altair
would theme it, in a ``VegaLiteChart``. altair is imported only at that edge (``charts.theme.altair``), so
a report's kernel never imports altair or jsonschema (0.3 s of every report).

``save(chart, "x.png")`` writes PNG, SVG, PDF or self-contained HTML offline; ``to_svg`` gives the SVG
text that reports embed; ``chart_spec`` the themed spec; all three take either kind of chart. The
``bench_nb`` altair theme (``charts.theme``) is registered with altair when altair is first handed a chart;
``use_theme()`` makes it the session's theme (``save``/``to_svg`` always use it).
"""

# mypy: implicit-reexport
from __future__ import annotations

from typing import TYPE_CHECKING

from bench_nb.charts.save import chart_spec, save, to_svg
from bench_nb.lazy import attach

if TYPE_CHECKING:
    from bench_nb.charts.accuracy import chart_accuracy_by_type
    from bench_nb.charts.beam import chart_beam
    from bench_nb.charts.budget import chart_budget_curve
    from bench_nb.charts.judge_quality import chart_answer_lengths, chart_judge_audit, chart_prompt_sweep
    from bench_nb.charts.judges import chart_judge_kappa
    from bench_nb.charts.latency import chart_latency
    from bench_nb.charts.memscore import chart_memscore
    from bench_nb.charts.outcomes import chart_outcome_matrix
    from bench_nb.charts.theme import OUTCOME_COLORS, PALETTE, PROVIDER_COLORS, THEME, themed, use_theme
    from bench_nb.charts.tokens import chart_context_tokens
    from bench_nb.charts.uncertainty import chart_accuracy_intervals, chart_pareto

# The chart functions are imported on first use; ``save`` (also the name of its module) and its neighbours
# are imported above.
__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "bench_nb.charts.accuracy": ["chart_accuracy_by_type"],
        "bench_nb.charts.beam": ["chart_beam"],
        "bench_nb.charts.budget": ["chart_budget_curve"],
        "bench_nb.charts.judge_quality": ["chart_answer_lengths", "chart_judge_audit", "chart_prompt_sweep"],
        "bench_nb.charts.judges": ["chart_judge_kappa"],
        "bench_nb.charts.latency": ["chart_latency"],
        "bench_nb.charts.memscore": ["chart_memscore"],
        "bench_nb.charts.outcomes": ["chart_outcome_matrix"],
        "bench_nb.charts.save": ["chart_spec", "save", "to_svg"],
        "bench_nb.charts.theme": [
            "OUTCOME_COLORS",
            "PALETTE",
            "PROVIDER_COLORS",
            "THEME",
            "themed",
            "use_theme",
        ],
        "bench_nb.charts.tokens": ["chart_context_tokens"],
        "bench_nb.charts.uncertainty": ["chart_accuracy_intervals", "chart_pareto"],
    },
)
