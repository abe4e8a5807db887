"""What an attack costs to run: TH-Bench Section 4.3 and Appendix E.

>>> from humanize.cost import CostMeter, length_sweep
>>> meter = CostMeter()
>>> with meter.measure(doc_id=0, attack="noop") as m:
...     m.add(queries=2)
>>> meter.to_frame()[["attack", "queries"]].values.tolist()
[['noop', 2]]

Depends on nothing else in humanize (the model layer reports its loads here).
"""
from .meter import COUNTERS, CostMeter, Measurement, record_model_load, report
from .sweep import bucket_documents, length_sweep, summarize_sweep

__all__ = ["CostMeter", "Measurement", "length_sweep", "bucket_documents", "summarize_sweep", "report",
           "record_model_load", "COUNTERS"]
