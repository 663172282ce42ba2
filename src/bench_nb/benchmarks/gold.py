"""A question's gold evidence as the messages its evidence ids name (what ``bench-nb reanswer`` answers from and
the explorer marks in the retrieved context)."""

from __future__ import annotations

from bench_nb.records import Haystack, Question, SearchHit


def gold_hits(question: Question, haystack: Haystack | None) -> list[SearchHit]:
    """The question's gold evidence as hits, in haystack order: each message its evidence ids name, and every
    message of a session they name."""
    if haystack is None or not question.evidence_ids:
        return []
    wanted = set(question.evidence_ids)
    hits: list[SearchHit] = []
    for session in haystack.sessions:
        whole = session.session_id in wanted
        for m in session.messages:
            if whole or (m.message_id is not None and m.message_id in wanted):
                date = m.timestamp or session.date
                prefix = f"[{date}] " if date else ""
                hits.append(
                    SearchHit(
                        text=f"{prefix}{m.role}: {m.content}",
                        session_id=session.session_id,
                        date=date,
                        hit_id=m.message_id,
                    )
                )
    return hits
