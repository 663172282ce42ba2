"""A small fictional memory set for trying the ROI benchmark without data of your own.

Owner ``demo`` works on the project ``proj.demo.shop`` and keeps personal and core notes; owner ``sam`` has a
project of his own (``proj.sam.ops``) whose memories ``demo``'s probes must never surface.
"""

from __future__ import annotations

import json
from pathlib import Path

_SHOP = [
    ("decision", "Payments go through Stripe Checkout; we dropped the custom card form in March."),
    ("decision", "Product images are served from the CDN bucket shop-assets-eu, never from the app server."),
    ("decision", "Orders are soft-deleted with a deleted_at column so refunds can still find them."),
    (
        "decision",
        "The shop's search uses Postgres full-text search instead of Elasticsearch to keep ops small.",
    ),
    ("decision", "Guest checkout stays enabled; accounts are created after the first order by email link."),
    ("decision", "Prices are stored as integer cents with a separate ISO currency column."),
    ("decision", "Feature flags live in the flags table and are read once per request."),
    ("gotcha", "The VAT rate for Norway must come from the tax service; the hard-coded table is stale."),
    (
        "gotcha",
        "Webhook retries from Stripe can arrive out of order: always compare the event's created time.",
    ),
    ("gotcha", "The nightly inventory sync locks the products table for about two minutes after 02:00 UTC."),
    ("gotcha", "Safari drops the basket cookie when it exceeds 4 KB, so keep only ids in it."),
    (
        "gotcha",
        "The staging mail server rewrites every recipient to qa@demo.test; do not debug deliverability there.",
    ),
    ("gotcha", "Image uploads above 20 MB time out at the load balancer before the app sees them."),
    ("convention", "Migrations are named YYYYMMDD_description.sql and are never edited after merge."),
    ("convention", "API error responses use the problem+json shape with a machine-readable type URL."),
    (
        "convention",
        "Every pull request that touches checkout needs a second reviewer from the payments group.",
    ),
    ("convention", "Money values in logs are written as cents with the currency, never as floats."),
    ("convention", "Background jobs are idempotent and keyed by the order id."),
    ("convention", "Frontend components live in src/ui and are named in kebab-case."),
    ("convention", "Release notes are written in the changelog file before tagging, not after."),
    ("convention", "Customer emails are templated in MJML and previewed in the mail catalog before sending."),
    ("decision", "Abandoned baskets are purged after 30 days by the cleanup job."),
    ("gotcha", "Discount codes are case-insensitive in the UI but case-sensitive in the admin export."),
    ("episode", "Paired with Rui on the refund flow; we found the missing webhook signature check."),
    ("task", "Move the sitemap generation to the nightly job."),
]
_PERSONAL = [
    ("user.demo", "preference", "Prefers short commit messages in the imperative mood."),
    ("user.demo.core", "fact", "Works in the Europe/Lisbon time zone."),
]
_SAM = [
    ("decision", "Payments alerts page the on-call engineer only between 08:00 and 20:00."),
    ("gotcha", "The Stripe Checkout webhook secret rotates every 90 days on the ops side."),
]


def sample_memories() -> list[dict[str, object]]:
    """The sample memories as JSONL records (see docs/roi.md), oldest first."""
    rows: list[dict[str, object]] = []
    for n, (kind, content) in enumerate(_SHOP):
        rows.append(_row(f"shop-{n:02d}", "demo", "proj.demo.shop", "shared", kind, content, n))
    for n, (scope, kind, content) in enumerate(_PERSONAL):
        rows.append(_row(f"demo-personal-{n}", "demo", scope, "private", kind, content, n))
    for n, (kind, content) in enumerate(_SAM):
        rows.append(_row(f"sam-{n}", "sam", "proj.sam.ops", "private", kind, content, n))
    return rows


def write_sample_memories(path: str | Path) -> Path:
    """Write the sample set as a JSONL file; returns its path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in sample_memories()), encoding="utf-8")
    return path


def _row(
    id: str, owner: str, scope: str, visibility: str, kind: str, content: str, n: int
) -> dict[str, object]:
    day = 1 + n % 28
    month = 1 + n // 28
    return {
        "id": id,
        "owner": owner,
        "scope": scope,
        "visibility": visibility,
        "kind": kind,
        "content": content,
        "created_at": f"2024-{month:02d}-{day:02d}T09:00:00Z",
    }
