"""Attacks that rewrite text with a language model: paraphrase (DIPPER, chat LLMs), Recursion, Prompt,
TOBLEND, and sentence-level blending of any attacks (TH-Bench §2.2, Appendices G and H)."""
from .diff import word_edits
from .rewrite import RewriteAttack

__all__ = ["RewriteAttack", "word_edits"]
