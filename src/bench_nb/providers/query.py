"""Turning a user's question into a safe SQLite FTS5 query.

A question is user text: quotes, ``AND``/``OR``/``NOT``/``NEAR``, ``*``, ``^``, ``:``, parentheses and
hyphens all mean something to FTS5. So the query is never passed through: it is split into words (Unicode
letters and digits, the characters FTS5's ``unicode61`` tokenizer keeps), lower-cased, de-duplicated, stripped
of English stop words, and each word is double-quoted and OR-ed: ``"dog" OR "name"``. Quoted words are
plain strings to FTS5, so no operator can reach it. When a question has only stop words ("who is she?"),
those words are kept, so it still searches. A question with no word at all gives no query (and no hits).
"""

from __future__ import annotations

import re

MAX_TERMS = 64

#: Common English function words, dropped from queries (BM25 would give them little weight anyway, but
#: OR-ing them makes nearly every message match and slows the search). ``ENGLISH_FUNCTION_WORDS`` is the part
#: without the reflexive pronouns and the pieces of contractions, which the ROI probers build on.
_FUNCTION_WORDS_TEXT = """
    a about above after again against all am an and any are as at be because been before being below between
    both but by can could did do does doing down during each few for from further had has have having he her
    here hers him his how i if in into is it its itself just me more most my no nor not now of off on once only
    or other our ours out over own same she should so some such than that the their them then there these they
    this those through to too under until up very was we were what when where which while who whom why will
    with would you your
"""
_REFLEXIVES_AND_CONTRACTIONS_TEXT = """
    herself himself myself ourselves theirs themselves yours yourself yourselves
    s t d ll m re ve don doesn didn isn wasn aren weren won wouldn shouldn couldn
"""
ENGLISH_FUNCTION_WORDS = frozenset(_FUNCTION_WORDS_TEXT.split())
STOP_WORDS: frozenset[str] = ENGLISH_FUNCTION_WORDS | frozenset(_REFLEXIVES_AND_CONTRACTIONS_TEXT.split())

_WORD = re.compile(r"[^\W_]+")


def query_terms(text: str) -> list[str]:
    """The words of ``text`` a search uses, in order: lower-cased, unique, stop words dropped (kept when
    nothing else is left), at most ``MAX_TERMS``."""
    words = list(dict.fromkeys(w.casefold() for w in _WORD.findall(text)))
    content = [w for w in words if w not in STOP_WORDS]
    return (content or words)[:MAX_TERMS]


def fts5_query(text: str) -> str | None:
    """An FTS5 MATCH expression OR-ing the words of ``text``, or None when it has no word."""
    terms = query_terms(text)
    if not terms:
        return None
    return " OR ".join(f'"{t}"' for t in terms)
