"""Cases of the bad-input matrix: cost meter and token counter, length sweep, the attacks (a
control: they are already hardened), and the handful of 1 MB / 10 MB inputs."""
from __future__ import annotations

from _matrix_cases import (N1, N2, QUICK, TEXTS, _kind, big_pair, big_text, detector, quality_oracle,
                           scores_oracle, spans_oracle, train_set)
from _matrix_core import Case, UserFnError


def _resolve(tokenizer="gpt2"):
    from humanize.cost.tokens import resolve_tokenizer

    return resolve_tokenizer(tokenizer)


def _count_input(texts, count_tokens="gpt2"):
    from humanize.cost import CostMeter

    meter = CostMeter(count_tokens=count_tokens)
    with meter.measure(doc_id=0, attack="matrix") as m:
        m.count_input(texts)
    return meter.records[-1]


def count_oracle(text: str):
    def check(rec, warns):
        n = rec.get("tokens_in")
        if not isinstance(n, (int, float)) or n != n:
            return f"tokens_in = {n!r}"
        if n < 0 or (text.strip() and n < 1):
            return f"tokens_in = {n} for a text of {len(text)} characters"
        if rec.get("error"):
            return f"record error {rec['error']!r}"
        return None
    return check


def _count_batch(text):
    total = _count_input([N1, text, N2])["tokens_in"]
    parts = []
    for t in (N1, text, N2):
        try:
            parts.append(_count_input(t)["tokens_in"])
        except Exception as exc:  # noqa: BLE001 - compared below
            parts.append(exc)
    return total, parts


def count_batch_oracle(value, warns):
    total, parts = value
    if isinstance(parts[1], Exception):
        good = parts[0] + parts[2]
        return None if total == total and total >= good else f"batch count {total} < {good} of the good texts"
    return None if total == sum(parts) else f"batch count {total} != sum of counts alone {sum(parts)}"


def _wrapped(text):
    from humanize.cost import CostMeter

    meter = CostMeter()
    out = meter.wrap(lambda s: s, attack="identity")(text)
    return out, meter.records[-1]


def wrap_oracle(text):
    def check(value, warns):
        out, rec = value
        if out != text:
            return "the wrapped function's output was changed"
        if rec["tokens_in"] != rec["tokens_out"]:
            return f"identity function: tokens_in {rec['tokens_in']} != tokens_out {rec['tokens_out']}"
        return count_oracle(text)(rec, warns)
    return check


def _meter_call(kind, value):
    from humanize.cost import CostMeter, report

    if kind == "ctor":
        meter = CostMeter(**value)
        with meter.measure(doc_id=0, attack="matrix") as m:
            m.count_input("some text to count")
        return meter.records[-1]
    meter = CostMeter()
    if kind == "wrap":
        return meter.wrap(value)
    if kind == "measure":
        with meter.measure(doc_id=0, attack="matrix", **value):
            pass
        return meter.records[-1]
    with meter.measure(doc_id=0, attack="matrix") as m:
        if kind == "add":
            m.add(**value)
        else:
            report(**value)
    return meter.records[-1]


def cost_cases(add) -> None:
    for tname, text in TEXTS.items():
        kind, q = _kind(tname), tname in QUICK
        add(Case("cost", f"gpt2 token spans({tname})", lambda ctx, t=text: _resolve()(t), kind,
                 oracle=spans_oracle(text), quick=q))
        add(Case("cost", f"CostMeter count_input({tname})", lambda ctx, t=text: _count_input(t), kind,
                 oracle=count_oracle(text), quick=q))
        add(Case("cost", f"CostMeter.wrap(identity)({tname})", lambda ctx, t=text: _wrapped(t), kind,
                 oracle=wrap_oracle(text)))
        if tname != "normal":
            add(Case("cost", f"count_input([normal, {tname}, normal]) keeps the rest",
                     lambda ctx, t=text: _count_batch(t), "result", oracle=count_batch_oracle, quick=q))
    for tname in ("normal", "empty", "lone_surrogate", "cjk", "emoji_zwj", "nul", "combining", "long_word_100k"):
        add(Case("cost", f"count_input({tname}) with the LM's HF tokenizer",
                 lambda ctx, t=TEXTS[tname]: _count_input(t, _hf_tokenizer(ctx)), _kind(tname),
                 oracle=count_oracle(TEXTS[tname]), group="model", timeout=60, quick=tname in QUICK))
    bad = [
        ("CostMeter(count_tokens='bogus')", "ctor", {"count_tokens": "bogus"}, ("bogus", "tokenizer")),
        ("CostMeter(count_tokens=5)", "ctor", {"count_tokens": 5}, ("int", "tokenizer")),
        ("CostMeter(sample_interval=-1)", "ctor", {"sample_interval": -1}, ("sample_interval",)),
        ("CostMeter(sample_interval='x')", "ctor", {"sample_interval": "x"}, ("sample_interval",)),
        ("CostMeter(track_gpu='no')", "ctor", {"track_gpu": "no"}, ("track_gpu",)),
        ("Measurement.add(queries='x')", "add", {"queries": "x"}, ("queries",)),
        ("Measurement.add(queries=True)", "add", {"queries": True}, ("queries",)),
        ("cost.report(queries='x')", "report", {"queries": "x"}, ("queries",)),
        ("CostMeter.measure(n_docs='x')", "measure", {"n_docs": "x"}, ("n_docs",)),
        ("CostMeter.wrap(5)", "wrap", 5, ("int", "callable")),
    ]
    for label, kind, value, names in bad:
        add(Case("cost", label, lambda ctx, k=kind, v=value: _meter_call(k, v), "error", names,
                 quick=label.startswith("CostMeter(count_tokens='bogus'")))
    for label, tok, names in (("resolve_tokenizer(5)", 5, ("int",)), ("resolve_tokenizer('bogus')", "bogus", ("bogus",)),
                              ("resolve_tokenizer(['gpt2'])", ["gpt2"], ("list",))):
        add(Case("cost", label, lambda ctx, t=tok: _resolve(t), "error", names))
    _sweep_cases(add)


def _hf_tokenizer(ctx):
    from humanize.models import load_causal_lm

    return ctx.get("hf_tok", lambda: load_causal_lm("smollm2-135m-instruct").tokenizer)


# -- length sweep --------------------------------------------------------------------------------

LENGTHS = [100, 200, 300]


def _docs(ctx):
    return train_set(ctx)[0][:20]


def _sweep(ctx, fn=str.upper, docs=None, expected_from=None, **kw):
    from humanize.cost import bucket_documents, length_sweep

    docs = _docs(ctx) if docs is None else docs
    params = {"lengths": LENGTHS, "per_bucket": 2, **kw}
    out = length_sweep(fn, docs, **params)
    expected = None
    if expected_from is not None:
        exp = bucket_documents(expected_from(ctx), params["lengths"], per_bucket=params["per_bucket"])
        expected = exp.groupby("bucket").size().to_dict()
    return out, expected


def sweep_oracle(value, warns):
    out, expected = value
    if expected is not None:
        got = dict(zip(out["bucket"], out["n_docs"]))
        for b in LENGTHS:
            if got.get(b, 0) != expected.get(b, 0):
                return f"bucket {b}: n_docs {got.get(b, 0)} != {expected.get(b, 0)} sampled documents"
    return None


def errors_shown_oracle(value, warns):
    out, _ = value
    shown = [c for c in out.columns if "error" in str(c).lower()]
    if any(float(out[c].fillna(0).astype(float).sum()) > 0 for c in shown if out[c].dtype.kind in "iuf"):
        return None
    if any("error" in str(v).lower() for v in out.attrs.values()) or any("error" in w.lower() for w in warns):
        return None
    return f"the function raised on every document, the sweep reports n_docs={out['n_docs'].tolist()} and no error"


class _RaiseAfter:
    def __init__(self, ok_calls: int):
        self.left = ok_calls

    def __call__(self, text):
        if self.left > 0:
            self.left -= 1
            return text
        raise UserFnError("boom")


def _sweep_cases(add) -> None:
    good = _docs
    add(Case("sweep", "length_sweep(str.upper) valid", lambda ctx: _sweep(ctx, expected_from=good), "result",
             oracle=sweep_oracle, quick=True))
    add(Case("sweep", "length_sweep(per_document=True) valid",
             lambda ctx: (_sweep(ctx, per_document=True)[0], None), "result",
             oracle=lambda v, w: None if len(v[0]) and (v[0]["error"] == "").all() else "records missing or errors"))
    add(Case("sweep", "length_sweep(fn raising, warmup=False)",
             lambda ctx: _sweep(ctx, fn=_RaiseAfter(0), warmup=False), "either", oracle=errors_shown_oracle,
             quick=True))
    add(Case("sweep", "length_sweep(fn raising after warmup)", lambda ctx: _sweep(ctx, fn=_RaiseAfter(1)), "either",
             oracle=errors_shown_oracle))
    add(Case("sweep", "length_sweep(fn raising, default warmup)", lambda ctx: _sweep(ctx, fn=_RaiseAfter(0)),
             "either", oracle=errors_shown_oracle))
    for tname in ("empty", "lone_surrogate", "nul", "emoji_zwj"):
        add(Case("sweep", f"length_sweep(documents + [{tname}]) keeps the rest",
                 lambda ctx, t=TEXTS[tname]: _sweep(ctx, docs=[*_docs(ctx), t], expected_from=good), "result",
                 oracle=sweep_oracle, quick=tname == "lone_surrogate"))
    for seed in (-1, 2**70):
        add(Case("sweep", f"length_sweep(seed={seed})", lambda ctx, s=seed: _sweep(ctx, seed=s), "either",
                 oracle=lambda v, w: None if len(v[0]) == len(LENGTHS) else "wrong bucket count"))
    bad = [
        ("per_bucket=-1", {"per_bucket": -1}, ("per_bucket",)), ("per_bucket='3'", {"per_bucket": "3"}, ("per_bucket",)),
        ("per_bucket=2.5", {"per_bucket": 2.5}, ("per_bucket",)), ("per_bucket=None", {"per_bucket": None},
                                                                    ("per_bucket",)),
        ("lengths=[]", {"lengths": []}, ("lengths",)), ("lengths=[0]", {"lengths": [0]}, ("lengths",)),
        ("lengths=[-5]", {"lengths": [-5]}, ("lengths",)), ("lengths=['a']", {"lengths": ["a"]}, ("lengths",)),
        ("lengths=[10, 'x']", {"lengths": [10, "x"]}, ("lengths",)), ("lengths='100'", {"lengths": "100"},
                                                                      ("lengths",)),
        ("lengths=5", {"lengths": 5}, ("lengths",)), ("seed='a'", {"seed": "a"}, ("seed",)),
        ("tokenizer='bogus'", {"tokenizer": "bogus"}, ("bogus",)), ("tokenizer=5", {"tokenizer": 5}, ("int",)),
        ("documents=None", {"docs": None}, ("documents", "None")),
        ("documents='a str'", {"docs": "one document"}, ("documents", "str")),
        ("documents=[None]", {"docs": [None]}, ("documents", "None")),
        ("documents=[1]", {"docs": [1]}, ("documents", "int")),
        ("documents=[b'x']", {"docs": [b"x"]}, ("documents", "bytes")),
        ("fn=5", {"fn": 5}, ("fn", "callable")),
    ]
    for label, kw, names in bad:
        def call(ctx, kw=dict(kw)):
            from humanize.cost import length_sweep

            docs = kw.pop("docs") if "docs" in kw else _docs(ctx)
            fn = kw.pop("fn", str.upper)
            return length_sweep(fn, docs, **{"lengths": LENGTHS, "per_bucket": 2, **kw})
        add(Case("sweep", f"length_sweep({label})", call, "error", names, quick=label == "per_bucket=-1"))
    for step in (0, -1):
        add(Case("sweep", f"bucket_documents(step={step})",
                 lambda ctx, s=step: __import__("humanize.cost").cost.bucket_documents(_docs(ctx), LENGTHS, step=s),
                 "error", ("step",)))


# -- attacks (control) ---------------------------------------------------------------------------

def _attack(name, **params):
    from humanize import attacks

    return attacks.get(name, **params)


def attack_result_oracle(text):
    def check(result, warns):
        from humanize.attacks.base import apply_edits

        if result.original != text:
            return "result.original differs from the input"
        if apply_edits(result.original, result.edits) != result.text:
            return "applying the edits to the original does not give the text"
        return None
    return check


def attack_cases(add) -> None:
    for name in ("homoglyph", "zero_width_space"):
        for tname in ("normal", "empty", "lone_surrogate", "nul", "cjk", "emoji_zwj", "combining", "rtl"):
            text = TEXTS[tname]
            add(Case("attacks", f"{name}.apply({tname})", lambda ctx, n=name, t=text: _attack(n).apply(t),
                     _kind(tname), oracle=attack_result_oracle(text), quick=tname in QUICK))
            add(Case("attacks", f"{name}.batch(with {tname}) == apply one by one",
                     lambda ctx, n=name, t=text: _attack_batch(n, [N1, t, N2]), "result",
                     oracle=lambda v, w: None if v[0] == v[1] else "batch texts differ from apply() texts"))
    bad = [("homoglyph.apply(None)", lambda: _attack("homoglyph").apply(None), ("NoneType", "str")),
           ("homoglyph.batch(None)", lambda: _attack("homoglyph").batch(None), ("Homoglyph",)),
           ("homoglyph.batch(5)", lambda: _attack("homoglyph").batch(5), ("Homoglyph",)),
           ("homoglyph(rate=2)", lambda: _attack("homoglyph", rate=2), ("rate",)),
           ("homoglyph(rate='x')", lambda: _attack("homoglyph", rate="x"), ("rate",)),
           ("homoglyph(seed='a')", lambda: _attack("homoglyph", seed="a"), ("seed",)),
           ("attacks.get('nope')", lambda: _attack("nope"), ("nope",))]
    for label, fn, names in bad:
        add(Case("attacks", label, lambda ctx, f=fn: f(), "error", names, quick=True))


def _attack_batch(name, texts):
    attack = _attack(name)
    return [r.text for r in attack.batch(texts)], [attack.apply(t).text for t in texts]


# -- huge inputs (a handful) ---------------------------------------------------------------------

def big_cases(add) -> None:
    def qm(meter, size):
        def call(ctx):
            from humanize.quality import QualityMeter

            a, b = big_pair(ctx, size)
            return QualityMeter(meters=[meter]).score([a], [b])
        return call

    for meter, size in (("rouge_l", "1mb"), ("edit_rate", "1mb"), ("edit_rate", "10mb"), ("flesch", "10mb"),
                        ("perplexity", "1mb"), ("cosine", "1mb")):
        # a capped perplexity still runs its windows (2 texts x 8 x 1,024 tokens: 16 forward passes of SmolLM2,
        # measured 100 s on one CPU thread beside another job, 2026-12-01): bounded work, given the time it needs
        add(Case("quality", f"QualityMeter[{meter}] on a {size} pair", qm(meter, size), "result",
                 oracle=quality_oracle(1), group="big", timeout=300 if meter == "perplexity" else 45))
    for det, size in (("surface_probe", "10mb"), ("tfidf_lr", "1mb"), ("log_likelihood", "1mb")):
        add(Case("detectors", f"{det}.score([{size} text])",
                 lambda ctx, d=det, s=size: detector(ctx, d).score([big_text(ctx, s)]), "result",
                 oracle=scores_oracle(1), group="big", timeout=45))
    add(Case("cost", "count_input(10mb text)", lambda ctx: _count_input(big_text(ctx, "10mb")), "result",
             oracle=lambda rec, w: None if rec["tokens_in"] > 1_000_000 else f"tokens_in {rec['tokens_in']}",
             group="big", timeout=45))
    add(Case("attacks", "homoglyph.apply(10mb text)", lambda ctx: _attack("homoglyph").apply(big_text(ctx, "10mb")),
             "result", oracle=lambda r, w: None if len(r.text) == len(r.original) else "length changed",
             group="big", timeout=45))
