"""What an attack costs the text: TH-Bench Section 3.3 / Table 2 quality meters.

>>> from humanize.quality import QualityMeter
>>> QualityMeter().score(["The cat sat on the mat."], ["The cat sat on a mat."])  # doctest: +SKIP

Perplexity (fluency), cosine of all-MiniLM-L6-v2 embeddings and ROUGE-L F1
(semantic / lexical consistency), Flesch reading ease and its change
(complexity), plus word and character edit rates.
"""
from .lexical import edit_rate, flesch_reading_ease, rouge_l
from .meter import METERS, QualityMeter, summarize
from .perplexity import perplexity
from .similarity import semantic_similarity

__all__ = ["QualityMeter", "METERS", "summarize", "perplexity", "semantic_similarity", "rouge_l",
           "flesch_reading_ease", "edit_rate"]
