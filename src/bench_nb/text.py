"""Small text helpers shared by the CLI, tables and reports, and the one HTML table writer every table and
every result object's ``_repr_html_`` uses (``render``: every value escaped; ``STYLE``: bench_nb's look)."""

from __future__ import annotations

import html
import os
import re
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote


def one_line(text: str | None, width: int = 80) -> str:
    """Collapse whitespace and cut to ``width`` characters with an ellipsis."""
    flat = " ".join((text or "").split())
    return flat if len(flat) <= width else flat[: max(0, width - 1)] + "…"


_LONG_HASH = re.compile(r"\b[0-9a-f]{16,64}\b")


def short_hashes(text: str) -> str:
    """``text`` with every long hex hash (16 to 64 digits, some a letter) cut to its first 12, as the
    settings line shows them."""
    return _LONG_HASH.sub(lambda m: m.group(0)[:12] if re.search("[a-f]", m.group(0)) else m.group(0), text)


def hit_text(hit: Any) -> str:
    """The text of a raw search result of any provider's shape."""
    if isinstance(hit, str):
        return hit
    if isinstance(hit, dict):
        for key in ("memory", "content", "text", "chunk", "fact", "summary", "document"):
            value = hit.get(key)
            if isinstance(value, str) and value:
                return value
        chunks = hit.get("chunks")
        if isinstance(chunks, list) and chunks and isinstance(chunks[0], dict):
            return str(chunks[0].get("content", ""))
    return str(hit)


STYLE = """<style>
.bnb-table{border-collapse:collapse;font:13px/1.4 Helvetica,Arial,sans-serif;color:#1f2328;margin:6px 0 14px}
.bnb-table caption{text-align:left;font-weight:bold;font-size:14px;padding:4px 0}
.bnb-table th,.bnb-table td{border-bottom:1px solid #d0d7de;padding:4px 10px;text-align:left !important;vertical-align:top}
.bnb-table th{background:#f6f8fa;font-weight:600}
.bnb-table td.num{text-align:right !important;font-variant-numeric:tabular-nums;white-space:nowrap}
.bnb-table td.text{white-space:pre-wrap;max-width:420px;word-break:break-word}
.bnb-table td.run{white-space:nowrap}
.bnb-scroll{max-width:100%;overflow-x:auto}
.bnb-band{display:inline-block;border-radius:9px;padding:0 7px;font-size:11px;font-weight:600;white-space:nowrap}
.bnb-excellent{background:#dafbe1;color:#116329}.bnb-good{background:#ddf4ff;color:#0550ae}
.bnb-adequate{background:#fff8c5;color:#7d4e00}.bnb-investigate,.bnb-slow{background:#ffebe9;color:#a40e26}
.bnb-flag{display:inline-block;border-radius:4px;padding:0 5px;font-size:11px;background:#fbefff;color:#6639ba;
  border:1px solid #d8b9ff;margin-left:4px}
.bnb-warning{border-left:4px solid #bf8700;background:#fff8c5;padding:8px 12px;margin:8px 0;
  font:13px/1.4 Helvetica,Arial,sans-serif;color:#1f2328}
.bnb-settings{border-left:4px solid #1a7f37;background:#f6f8fa;padding:8px 12px;margin:8px 0;
  font:13px/1.4 Helvetica,Arial,sans-serif;color:#1f2328}
.bnb-note{font:12px/1.4 Helvetica,Arial,sans-serif;color:#57606a;margin:2px 0 10px}
.bnb-readings{font:13px/1.5 Helvetica,Arial,sans-serif;color:#1f2328}
</style>"""


def esc(value: object) -> str:
    """HTML-escaped text of ``value`` (quotes included)."""
    return html.escape("" if value is None else str(value), quote=True)


_SCRIPT_UNSAFE = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"})


def json_in_script(text: str) -> str:
    r"""JSON text made safe as the content of an HTML ``<script>`` element, decoding to the same value: every
    ``<``, ``>`` and ``&`` written as its ``\u`` escape (as Django's ``json_script`` does). Escaping ``/``
    (``<\/script>``, nbconvert's ``escape_html_script``) keeps a string's ``</script>`` from ending the element,
    but not its ``<!--<script``, which puts the HTML parser in the script's "double escaped" state, where the
    element's own ``</script>`` no longer ends it: the rest of the page would be read as the script's text.

    For JSON text only: outside a string JSON has no ``<``, ``>`` or ``&``, so only strings change (in
    JavaScript code ``\u003c`` outside a string would be an error).
    """
    return text.translate(_SCRIPT_UNSAFE)


@dataclass(frozen=True)
class Cell:
    """One table cell: ``text`` (escaped when written), an optional CSS class, tooltip and badges."""

    text: str
    cls: str = ""
    title: str = ""
    badges: tuple[tuple[str, str], ...] = ()  # (text, css class) shown after the text
    href: str = ""  # the text a link to this address (e.g. ``question_href``)

    def render(self, tag: str = "td") -> str:
        """The cell as HTML: ``<td>`` (or ``tag``) with its class, tooltip, link and badges, every text
        escaped."""
        attrs = f' class="{esc(self.cls)}"' if self.cls else ""
        if self.title:
            attrs += f' title="{esc(self.title)}"'
        extra = "".join(f' <span class="{esc(c)}">{esc(t)}</span>' for t, c in self.badges)
        body = f'<a href="{esc(self.href)}">{folded(self.text)}</a>' if self.href else folded(self.text)
        return f"<{tag}{attrs}>{body}{extra}</{tag}>"


def question_anchor(question_id: str) -> str:
    """The id of a question's detail in the explore report (``q=<question id>``): ``explore.html#q=<id>``
    opens the report at that question."""
    return f"q={question_id}"


def question_href(page: str, question_id: str) -> str:
    """The address of a question's detail in the explore report ``page`` (relative to the linking page):
    ``explore.html#q=<question id>``, the id percent-encoded."""
    return f"{page}#{quote(question_anchor(question_id), safe='=')}"


LONG_TEXT = 400  # characters a table cell shows before it folds the rest


def folded(text: str, width: int = LONG_TEXT) -> str:
    """``text`` escaped; longer than ``width`` characters, its start on one line and the whole one click away
    (``<details>``), so a runaway answer never stretches a page."""
    if len(text) <= width:
        return esc(text)
    return (
        f'<details class="bnb-fold"><summary>{esc(one_line(text, width // 2))} '
        f'<span style="color:#57606a">({len(text):,} characters: open)</span></summary>'
        f'<div style="white-space:pre-wrap;max-height:40em;overflow:auto">{esc(text)}</div></details>'
    )


def cell(value: object, cls: str = "", **kw: object) -> Cell:
    """``value`` as a ``Cell`` (numbers right-aligned when ``cls`` says ``num``)."""
    return value if isinstance(value, Cell) else Cell("" if value is None else str(value), cls, **kw)  # type: ignore[arg-type]


def render(
    headers: Sequence[str],
    rows: Sequence[Sequence[object]],
    *,
    caption: str = "",
    notes: Sequence[str] = (),
    warnings: Sequence[str] = (),
) -> str:
    """The HTML of one table: warnings above it, notes below it; every text escaped. The table sits in a
    box as wide as the page (``bnb-scroll``): a table wider than that scrolls sideways in its box instead of
    running past the page's edge."""
    parts = [STYLE]
    parts.extend(f'<div class="bnb-warning">⚠ {esc(w)}</div>' for w in warnings)
    parts.append('<div class="bnb-scroll"><table class="bnb-table">')
    if caption:
        parts.append(f"<caption>{esc(caption)}</caption>")
    parts.append("<thead><tr>" + "".join(f"<th>{esc(h)}</th>" for h in headers) + "</tr></thead><tbody>")
    for row in rows:
        parts.append("<tr>" + "".join(cell(v).render() for v in row) + "</tr>")
    parts.append("</tbody></table></div>")
    parts.extend(f'<div class="bnb-note">{esc(n)}</div>' for n in notes)
    return "".join(parts)


def fmt_number(x: object, digits: int = 3) -> str:
    """A number for reading: ``digits`` significant decimals for floats, thousands separators for ints,
    "n/a" for None/NaN; anything else as text."""
    if x is None or (isinstance(x, float) and x != x):
        return "n/a"
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, int):
        return f"{x:,}"
    if isinstance(x, float):
        if x != 0 and abs(x) < 10**-digits:
            return f"{x:.{digits - 1}e}"
        return f"{x:,.{digits}f}"
    return str(x)


class HtmlFields:
    """``_repr_html_`` for a result dataclass: its scalar fields as a compact two-column table, numbers
    rounded for reading (the exact values are the attributes: ``result.p_value``). Mix in first."""

    _html_title: str = ""

    def _repr_html_(self) -> str:
        from dataclasses import fields, is_dataclass

        assert is_dataclass(self)
        rows = []
        for f in fields(self):
            value = getattr(self, f.name)
            if not f.repr:
                continue
            if isinstance(value, (tuple, list)) and all(isinstance(v, (int, float, str)) for v in value):
                shown = ", ".join(map(fmt_number, value))
            elif isinstance(value, list):
                shown = f"{len(value)} item(s)"
            elif value is None or isinstance(value, (str, int, float, bool, os.PathLike)):
                shown = fmt_number(os.fspath(value) if isinstance(value, os.PathLike) else value)
            else:
                continue
            rows.append([f.name, Cell(shown, "num" if isinstance(value, (int, float)) else "")])
        title = self._html_title or type(self).__name__
        return render(["field", "value"], rows, caption=title, notes=["Exact values: the attributes."])


def labelled(text: str, labels: Mapping[str, str]) -> str:
    """``text`` (a warning or note naming runs) with each run id of ``labels`` written as its label, as the
    tables show it; an id only where it stands whole (not inside a longer id or word), each replaced once."""
    ids = sorted((r for r, label in labels.items() if r != label), key=len, reverse=True)
    if not ids:
        return text
    pattern = re.compile(r"(?<![\w.-])(?:" + "|".join(map(re.escape, ids)) + r")(?![\w-]|\.\w)")
    return pattern.sub(lambda m: labels[m.group(0)], text)


@contextmanager
def labelled_warnings(labels: Mapping[str, str]) -> Iterator[None]:
    """The warnings raised inside, issued again as they leave with each run id written as its label
    (``labelled``): a lower layer's warning names run ids, the report's notes name runs as its tables do."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    for w in caught:
        warnings.warn(labelled(str(w.message), labels), w.category, stacklevel=3)
