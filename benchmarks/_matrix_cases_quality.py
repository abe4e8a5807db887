"""Cases of the bad-input matrix for the quality meters: each meter alone and all together, on
every input of ``TEXTS`` (identical pairs must give the meters' defined values), batches against
one-by-one calls, the function API, and wrong parameters and types."""
from __future__ import annotations

import math

from _matrix_cases import (HEAVY, N1, N2, NORMAL, QUICK, TEXTS, _kind, batch_quality_oracle, float_oracle, meter,
                           quality_oracle)
from _matrix_core import Case


# -- quality -------------------------------------------------------------------------------------

METERS = ("perplexity", "cosine", "rouge_l", "flesch", "edit_rate")
MODEL_METERS = {"perplexity", "cosine", None}


def quality_cases(add) -> None:
    for m in (*METERS, None):
        mname = "all" if m is None else m
        group = "model" if m in MODEL_METERS else "plain"
        meters = None if m is None else (m,)
        for tname, text in TEXTS.items():
            if tname in HEAVY and m in MODEL_METERS:
                continue  # perplexity's cost on long texts is measured by the 1 MB case (big group)
            q = tname in QUICK
            add(Case("quality", f"QualityMeter[{mname}].score([{tname}], same)",
                     lambda ctx, ms=meters, t=text: meter(ctx, ms).score([t], [t]), _kind(tname),
                     oracle=quality_oracle(1, identical=True), group=group, timeout=90, quick=q))
            add(Case("quality", f"QualityMeter[{mname}].score([normal], [{tname}])",
                     lambda ctx, ms=meters, t=text: meter(ctx, ms).score([NORMAL], [t]), _kind(tname),
                     oracle=quality_oracle(1), group=group, timeout=90, quick=q))
        add(Case("quality", f"QualityMeter[{mname}].score([], [])", lambda ctx, ms=meters: meter(ctx, ms).score([], []),
                 "either", oracle=quality_oracle(0), group=group, quick=True))
    for tname, text in TEXTS.items():
        if tname == "normal" or tname in HEAVY:
            continue
        add(Case("quality", f"QualityMeter[all] batch with {tname} == one by one",
                 lambda ctx, t=text: _quality_batch(ctx, t), "result", oracle=batch_quality_oracle, group="model",
                 timeout=120, quick=tname in QUICK))
    _quality_function_cases(add)
    _quality_param_cases(add)


def _quality_batch(ctx, text):
    qm = meter(ctx, None)
    originals, attacked = [N1, text, N2], [N1.replace("budget", "plan"), text, N2.upper()]
    batch = qm.score(originals, attacked)
    singles = []
    for o, a in zip(originals, attacked):
        try:
            singles.append(qm.score([o], [a]))
        except Exception as exc:  # noqa: BLE001 - compared by the oracle
            singles.append(exc)
    return batch, singles


def _q(name):
    import importlib

    return getattr(importlib.import_module("humanize.quality"), name)


def _quality_function_cases(add) -> None:
    for tname, text in TEXTS.items():
        q, kind = tname in QUICK, _kind(tname)
        add(Case("quality", f"rouge_l({tname}, same)", lambda ctx, t=text: _q("rouge_l")(t, t), kind,
                 oracle=float_oracle(0.0, 1.0, equal=1.0), timeout=60, quick=q))
        add(Case("quality", f"flesch_reading_ease({tname})", lambda ctx, t=text: _q("flesch_reading_ease")(t), kind,
                 oracle=float_oracle(), timeout=60, quick=q))
        add(Case("quality", f"edit_rate(normal, {tname})", lambda ctx, t=text: _q("edit_rate")(NORMAL, t), kind,
                 oracle=float_oracle(0.0, 1.0), timeout=60, quick=q))
        if tname not in HEAVY:
            add(Case("quality", f"perplexity({tname})", lambda ctx, t=text: _q("perplexity")(t), kind,
                     oracle=float_oracle(0.0, math.inf), group="model", timeout=60, quick=q))
            add(Case("quality", f"semantic_similarity(normal, {tname})",
                     lambda ctx, t=text: _q("semantic_similarity")(NORMAL, t), kind,
                     oracle=float_oracle(-1.000001, 1.000001), group="model", timeout=60, quick=q))
    bad = [
        ("rouge_l(None, 'a')", lambda: _q("rouge_l")(None, "a"), ("None",), "plain"),
        ("rouge_l('a', 5)", lambda: _q("rouge_l")("a", 5), ("int",), "plain"),
        ("flesch_reading_ease(5)", lambda: _q("flesch_reading_ease")(5), ("int",), "plain"),
        ("flesch_reading_ease(b'x')", lambda: _q("flesch_reading_ease")(b"x"), ("bytes",), "plain"),
        ("edit_rate('a', None)", lambda: _q("edit_rate")("a", None), ("None",), "plain"),
        ("perplexity(5)", lambda: _q("perplexity")(5), ("int",), "model"),
        ("perplexity([None])", lambda: _q("perplexity")([None]), ("None",), "model"),
        ("semantic_similarity('a', None)", lambda: _q("semantic_similarity")("a", None), ("None",), "model"),
        ("semantic_similarity(['a'], ['a', 'b'])", lambda: _q("semantic_similarity")(["a"], ["a", "b"]),
         ("length", "1", "2"), "model"),
        ("summarize(5)", lambda: _q("summarize")(5), ("int", "DataFrame"), "plain"),
    ]
    for label, fn, names, group in bad:
        add(Case("quality", label, lambda ctx, f=fn: f(), "error", names, group=group))


def _quality_param_cases(add) -> None:
    pair = (["The cat sat on the mat."], ["The cat sat on a mat."])

    def score_with(meters, kw):
        def call(ctx):
            from humanize.quality import QualityMeter

            return QualityMeter(**{"meters": meters, **kw}).score(*pair)
        return call

    bad = [
        (None, {"meters": "rouge_l"}, ("meters",)), (None, {"meters": ["nope"]}, ("nope", "meters")),
        (None, {"meters": 5}, ("meters", "int")),
        (["perplexity"], {"batch_size": 0}, ("batch_size",)), (["perplexity"], {"batch_size": -1}, ("batch_size",)),
        (["perplexity"], {"batch_size": "x"}, ("batch_size",)), (["perplexity"], {"batch_size": 2.5}, ("batch_size",)),
        (["perplexity"], {"max_length": 0}, ("max_length",)), (["perplexity"], {"max_length": -5}, ("max_length",)),
        (["perplexity"], {"max_length": "x"}, ("max_length",)), (["perplexity"], {"stride": 0}, ("stride",)),
        (["perplexity"], {"stride": -1}, ("stride",)),
        (["perplexity"], {"max_length": 16, "stride": 32}, ("stride",)),
        (["perplexity"], {"lm": 5}, ("lm", "int")), (["perplexity"], {"lm": "no-such-model-xyz"}, ("no-such-model",)),
        (["cosine"], {"encoder": 5}, ("encoder", "int")),
        (["cosine"], {"encoder": "no-such-encoder-xyz"}, ("no-such-encoder",)),
        (["perplexity"], {"device": "banana"}, ("banana", "device")),
    ]
    for meters, kw, names in bad:
        group = "model" if meters and meters[0] in ("perplexity", "cosine") else "plain"
        label = ", ".join(f"{k}={v!r}" for k, v in kw.items())
        add(Case("quality", f"QualityMeter({label}).score", score_with(meters, kw), "error", names, group=group,
                 timeout=60, quick=label.startswith("batch_size=0")))
    calls = [
        ("score(None, None)", lambda q: q.score(None, None), ("None",)),
        ("score(5, 5)", lambda q: q.score(5, 5), ("int",)),
        ("score('a', 'b')", lambda q: q.score("a", "b"), ("str",)),
        ("score([1], [2])", lambda q: q.score([1], [2]), ("int",)),
        ("score([b'x'], ['x'])", lambda q: q.score([b"x"], ["x"]), ("bytes",)),
        ("score(['a'], ['a', 'b'])", lambda q: q.score(["a"], ["a", "b"]), ("length", "1", "2")),
        ("score(['a'])", lambda q: q.score(["a"]), ("original", "text", "attacked")),
        ("score([None], ['x'])", lambda q: q.score([None], ["x"]), ("None",)),
        ("score(['ok', None], ['ok', 'x'])", lambda q: q.score(["ok", None], ["ok", "x"]), ("None",)),
    ]
    for label, fn, names in calls:
        add(Case("quality", f"QualityMeter[rouge_l].{label}", lambda ctx, f=fn: f(meter(ctx, ("rouge_l",))),
                 "error", names, quick=label.startswith("score(None")))
