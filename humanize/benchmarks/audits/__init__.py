"""The audits, one job: check what a dataset or a detector relies on, beyond its headline metric.

Dataset audits (:mod:`.audit`, :mod:`.audit_probe`: how well shallow features separate the
classes) and artifact reliance (:mod:`.reliance`, :mod:`.reliance_run`: how much a detector's
score moves when a surface artifact is removed).
"""
