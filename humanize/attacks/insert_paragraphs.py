"""Insert paragraphs: put ``\\n\\n`` between θ of the sentences (RAID §3.6, App. E.4; θ = 0.5).

Sites are the gaps between consecutive sentences that do not already hold a
paragraph break. The break is inserted just before the next sentence and every
other character is kept, unlike RAID's implementation, which re-joins the
sentences with single spaces and so destroys the original whitespace.
"""

from __future__ import annotations


from humanize.text import sentence_spans
from ._stream import DocumentRandom
from .base import Edit, SiteAttack


class InsertParagraphs(SiteAttack):
    """Insert a paragraph break before θ of the sentences that follow another."""

    name = "insert_paragraphs"
    needs_model = False  # rule-based: scheduled as plain tasks

    _parameter_constraints = {"separator": ["nonempty str"]}

    def __init__(self, rate: float = 0.5, seed: int = 0, separator: str = "\n\n"):
        self._init_params(locals())

    def sites(self, text: str) -> list[int]:
        spans = sentence_spans(text)
        return [start for (_, prev_end), (start, _) in zip(spans, spans[1:]) if text.count("\n", prev_end, start) < 2]

    def edit(self, text: str, i: int, rnd: DocumentRandom) -> Edit:
        return Edit(i, i, self.separator)
