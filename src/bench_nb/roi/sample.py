"""A small fictional memory set for trying the ROI benchmark without data of your own.

Owner ``demo`` works on the project ``proj.demo.shop`` and keeps personal and core notes; owner ``sam`` has a
project of his own (``proj.sam.ops``) whose memories ``demo``'s probes must never surface.

``team_memories()`` is a bigger generated two-owner store (100 memories): notes that repeat the same kinds of
facts about a team's components (deploys, retries, reviews, ...), so each memory has look-alikes in its read
set, as a real project's memory does; the ``distractor`` probe mode is measured on it (docs/roi.md).
"""

from __future__ import annotations

import json
import random
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


_COMPONENTS = (
    "checkout service",
    "payments API",
    "search index",
    "orders table",
    "image pipeline",
    "mail worker",
    "inventory sync",
    "admin panel",
    "billing job",
    "session cache",
)
_TEAM_NOTES = {
    "decision": (
        "The {c} deploys from the main branch through the release pipeline with a {n}-minute canary.",
        "The {c} keeps its data in Postgres; we dropped {alt} after the {month} outage.",
        "Retries in the {c} use exponential backoff capped at {n} seconds.",
        "The {c} logs request ids and never logs customer emails.",
        "Feature flags for the {c} are read once per request from the flags table.",
        "The {c} runs {n} workers in production and {m} in staging.",
        "Alerts for the {c} page the on-call engineer after {n} failed health checks.",
    ),
    "gotcha": (
        "The {c} times out after {n} seconds when the {other} is slow, so calls to it need a timeout of their own.",
        "Staging for the {c} shares the {other} database, so tests there can see production-like data.",
        "The {c} cache is not cleared on deploy; stale entries live for {n} minutes.",
        "Migrations of the {c} lock the {other} tables for about {n} seconds.",
        "The {c} drops requests larger than {n} MB at the load balancer before the app sees them.",
        "Retries in the {c} can arrive out of order after a deploy of the {other}.",
    ),
    "convention": (
        "Every pull request that touches the {c} needs a review from the {team} group.",
        "Errors from the {c} use the problem+json shape with a machine-readable type.",
        "Config for the {c} lives in environment variables, never in the repository.",
        "Tests for the {c} run against a real Postgres in a container, not mocks.",
        "The {c} release notes are written before tagging, in the changelog file.",
        "Metrics of the {c} are named {prefix}_<what>_total and documented in the dashboard.",
    ),
}
# (owner, scope, components, how many notes)
_TEAM_PROJECTS = (
    ("alex", "proj.alex.shop", _COMPONENTS[:6], 45),
    ("alex", "proj.alex.data", _COMPONENTS[5:], 20),
    ("kim", "proj.kim.ops", _COMPONENTS[2:8], 30),
)
_TEAM_PERSONAL = (
    ("alex", "user.alex", "preference", "Prefers reviewing pull requests in the morning."),
    ("alex", "user.alex", "preference", "Writes commit messages in the imperative mood."),
    ("alex", "user.alex.core", "fact", "Works in the Europe/Berlin time zone."),
    ("kim", "user.kim", "preference", "Prefers dashboards over log searches during incidents."),
    ("kim", "user.kim.core", "fact", "Is on call every third week."),
)


def team_memories(seed: int = 0) -> list[dict[str, object]]:
    """A generated two-owner store of 100 memories as JSONL records (the same for a seed), oldest first: alex's
    projects ``proj.alex.shop`` (45 notes) and ``proj.alex.data`` (20), kim's ``proj.kim.ops`` (30), and their
    personal and core notes. Each note is one of a few kinds of facts about one of the team's components, so
    every memory has look-alikes: what the ``distractor`` probe mode needs to tell retrievers apart."""
    rng = random.Random(seed)
    rows: list[dict[str, object]] = []
    for owner, scope, components, count in _TEAM_PROJECTS:
        notes = [(kind, note, c) for kind, ns in _TEAM_NOTES.items() for note in ns for c in components]
        rng.shuffle(notes)
        for n, (kind, note, component) in enumerate(notes[:count]):
            text = note.format(
                c=component,
                other=rng.choice([x for x in _COMPONENTS if x != component]),
                n=rng.choice([2, 3, 5, 10, 15, 20, 30, 45]),
                m=rng.choice([1, 2, 4]),
                alt=rng.choice(["MongoDB", "Redis", "DynamoDB", "Elasticsearch", "SQLite"]),
                month=rng.choice(["March", "June", "September", "November"]),
                team=rng.choice(["payments", "platform", "data", "frontend", "security"]),
                prefix=component.split()[0],
            )
            slug = scope.split(".")[-1]
            rows.append(
                _row(f"{owner}-{slug}-{n:02d}", owner, scope, "shared", kind, text[0].upper() + text[1:], n)
            )
    for n, (owner, scope, kind, content) in enumerate(_TEAM_PERSONAL):
        rows.append(_row(f"{owner}-personal-{n}", owner, scope, "private", kind, content, n))
    return rows


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


def write_sample_memories(path: str | Path, rows: list[dict[str, object]] | None = None) -> Path:
    """Write the sample set (or ``rows``, e.g. ``team_memories()``) as a JSONL file; returns its path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = sample_memories() if rows is None else rows
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
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
