"""Small text helpers shared by the CLI, tables and reports."""

from __future__ import annotations

from typing import Any


def one_line(text: str | None, width: int = 80) -> str:
    """Collapse whitespace and cut to ``width`` characters with an ellipsis."""
    flat = " ".join((text or "").split())
    return flat if len(flat) <= width else flat[: max(0, width - 1)] + "…"


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
