"""Vega-Lite 5 specs as plain dicts, and the one place a spec becomes what a ``chart_*`` function returns.

Every chart function writes its spec as Vega-Lite's own JSON (marks, encodings, layers, facets, data inline
from a polars frame) with the few helpers here, and hands it to ``chart(spec)``:

- outside a report kernel, ``chart`` builds the altair chart of that spec (altair's public chart classes,
  fed the dicts): what the function has always returned, so ``.properties()``, ``alt.layer()``, ``.save()``
  and JupyterLab's display work as before, and altair validates the spec whenever it writes it;
- in a report kernel (``BENCH_NB_REPORT=1``, set by ``bench_nb.reports.build_report``), a ``VegaLiteChart``:
  the spec themed exactly as altair themes it (``spec_with_theme``), which ``setup_notebook()`` displays
  as the Vega-Lite output the report builder renders. Such a kernel never imports altair or jsonschema
  (0.3 s of every report).
"""

from __future__ import annotations

import copy
import hashlib
import json
from typing import TYPE_CHECKING, Any, TypeAlias

import polars as pl

from bench_nb.chart_output import in_report as in_report_kernel

if TYPE_CHECKING:
    import altair as alt

Chart: TypeAlias = "alt.TopLevelMixin | VegaLiteChart"  # what a chart_* function returns

# The $schema altair writes (``altair.SCHEMA_URL``, checked by the tests): a report kernel's specs carry
# the same one without importing altair.
SCHEMA_URL = "https://vega.github.io/schema/vega-lite/v6.4.1.json"
_TYPES = {"N": "nominal", "O": "ordinal", "Q": "quantitative", "T": "temporal"}
_VIEWS = ("layer", "hconcat", "vconcat", "concat")


def field(shorthand: str, **props: Any) -> dict[str, Any]:
    """A field channel: ``field("run:N", title="run")`` is ``{"field": "run", "type": "nominal", "title":
    "run"}``; a shorthand without a type (as for ``x2``) names the field only."""
    name, sep, code = shorthand.rpartition(":")
    channel: dict[str, Any] = {"field": name, "type": _TYPES[code]} if sep else {"field": shorthand}
    return channel | props


def values(frame: pl.DataFrame) -> dict[str, Any]:
    """A frame as inline data: one dict per row, as altair writes a polars frame (numbers, strings,
    booleans, nulls; the chart frames carry no dates)."""
    temporal = [name for name, dtype in frame.schema.items() if dtype.is_temporal()]
    if temporal:
        raise TypeError(f"chart data with date or time columns {temporal}: format them as strings first")
    return {"values": frame.to_dicts()}


def mark(kind: str, **props: Any) -> dict[str, Any]:
    """A mark: ``mark("bar", opacity=0.85)``."""
    return {"type": kind, **props}


def concat(key: str, views: list[dict[str, Any]], **props: Any) -> dict[str, Any]:
    """Views side by side (``key`` ``"hconcat"``, ``"vconcat"`` or ``"concat"``). Data every view shares (the
    same dict) is written once, on the concat, as altair does."""
    shared = views[0].get("data") if views else None
    if shared is not None and all(v.get("data") is shared for v in views):
        return {
            key: [{k: v for k, v in view.items() if k != "data"} for view in views],
            "data": shared,
        } | props
    return {key: views, **props}


def note_chart(text: str, title: str) -> dict[str, Any]:
    """A chart that has nothing to draw: its title and one line saying why, with no axes or empty frame (a
    panel whose data is all missing is left out, never drawn as an empty box)."""
    return {
        "data": {"values": [{"note": text}]},
        "mark": mark("text", align="left", baseline="top", fontSize=12, color="#57606a"),
        "encoding": {"text": field("note:N"), "x": {"value": 0}, "y": {"value": 0}},
        "title": {"text": title},
        "width": 460,
        "height": 20,
        "view": {"stroke": None},
    }


def spec_with_theme(spec: dict[str, Any]) -> dict[str, Any]:
    """``spec`` as altair writes it under bench_nb's theme: inline data moved to named ``datasets`` (named by
    a hash of the rows, as altair names them), the theme's config under the spec's own, and ``$schema``."""
    from bench_nb.charts.theme import bench_nb_theme

    datasets: dict[str, Any] = {}
    out = _merge(bench_nb_theme(), _named_data(spec, datasets))
    if datasets:
        out["datasets"] = datasets
    return {"$schema": SCHEMA_URL, **out}


def _named_data(view: dict[str, Any], datasets: dict[str, Any]) -> dict[str, Any]:
    view = dict(view)
    data = view.get("data")
    if isinstance(data, dict) and set(data) == {"values"}:
        rows = data["values"]
        name = "empty" if rows == [{}] else "data-" + _digest(rows)
        datasets[name] = rows
        view["data"] = {"name": name}
    for key in _VIEWS:
        if key in view:
            view[key] = [_named_data(v, datasets) for v in view[key]]
    if "spec" in view:
        view["spec"] = _named_data(view["spec"], datasets)
    return view


def _digest(rows: Any) -> str:
    return hashlib.sha256(json.dumps(rows, sort_keys=True, default=str).encode()).hexdigest()[:32]


def _merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    """``top`` over a copy of ``base``, nested dicts merged key by key."""
    out = copy.deepcopy(base)
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


class VegaLiteChart:
    """A chart in a report kernel: its spec, themed, as a dict (``to_dict()``). ``setup_notebook()`` displays
    it as the Vega-Lite output the report builder renders; ``charts.save``/``to_svg`` take it too.

    Used as an altair chart (``chart.properties(width=600)``, ``.interactive()``, any public attribute of
    altair's charts), it becomes one: the altair chart of its spec is built then (altair imported at that
    moment), so a report notebook behaves as it does in JupyterLab. Its own names and every ``_``-name
    (what IPython's display looks up) stay its own, so displaying it never imports altair.
    """

    def __init__(self, spec: dict[str, Any], source: dict[str, Any] | None = None) -> None:
        self.spec = spec
        self.source = source  # the unthemed spec the chart function wrote (for the altair chart)

    def __getattr__(self, name: str) -> Any:
        source = self.__dict__.get("source")
        if name.startswith("_") or source is None:
            raise AttributeError(name)
        return getattr(to_altair(source), name)

    def to_dict(self) -> dict[str, Any]:
        """The themed Vega-Lite spec (a copy)."""
        return copy.deepcopy(self.spec)

    def __repr__(self) -> str:
        title = self.spec.get("title")
        return f"<VegaLiteChart {(title.get('text') if isinstance(title, dict) else title)!r}>"


def chart(spec: dict[str, Any]) -> Chart:
    """What a ``chart_*`` function returns for ``spec``: an altair chart, or in a report kernel a
    ``VegaLiteChart`` (see the module's docstring)."""
    if in_report_kernel():
        return VegaLiteChart(spec_with_theme(spec), source=spec)
    return to_altair(spec)


def to_altair(spec: dict[str, Any]) -> alt.TopLevelMixin:
    """The altair chart of ``spec``: the chart class for its kind of view (``alt.LayerChart`` for a layer, and
    so on), given the spec's own dicts; altair validates it when it writes it (``to_dict()``)."""
    from bench_nb.charts.theme import altair

    altair()  # the bench_nb theme registered
    import altair as alt

    view = dict(spec)
    if "layer" in view:
        return alt.LayerChart(**(view | {"layer": [to_altair(v) for v in view["layer"]]}))
    for key, cls in (
        ("hconcat", alt.HConcatChart),
        ("vconcat", alt.VConcatChart),
        ("concat", alt.ConcatChart),
    ):
        if key in view:
            return cls(**(view | {key: [to_altair(v) for v in view[key]]}))
    if "facet" in view:
        return alt.FacetChart(**(view | {"spec": to_altair(view["spec"])}))
    if "encoding" in view:
        view["encoding"] = alt.FacetedEncoding(**view["encoding"])
    return alt.Chart(**view)
