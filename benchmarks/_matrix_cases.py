"""Cases of the bad-input matrix for the text-level layers: detectors, quality meters, cost
meter and token counter, length sweep, and a few attacks as a control.

Every case is a call plus what it expects; oracles check results against an independent
fact (a batch against the same texts one by one, an identical pair against the meter's
defined value, a span list against the text's length), never against a stored answer.
"""
from __future__ import annotations

import math

from _matrix_core import Case

N1 = "The committee met on Tuesday to review the budget. Several members raised concerns about the cost."
N2 = "Rain is expected tomorrow across the north, with clearer skies arriving by the weekend."
NORMAL = N1 + " The chair promised a written answer before the next meeting, and the session closed early."

#: Inputs that are valid ``str`` (some odd); the value is the text.
TEXTS = {
    "normal": NORMAL,
    "empty": "",
    "spaces": "     ",
    "whitespace_mix": " \t\n\r\x0b\x0c\u00a0\u2003\u3000",
    "one_char": "a",
    "one_punct": ".",
    "lone_surrogate": "a \ud800 b",
    "trailing_low_surrogate": NORMAL + " \udfff",
    "surrogate_only": "\ud83d",
    "nul": "abc\x00def ghi",
    "control_chars": "\x07\x1b[31mred\x1b[0m \x7f",
    "rtl": "مرحبا بالعالم، هذا نص تجريبي. שלום עולם",
    "rtl_override": "abc \u202edcba\u202c xyz",
    "cjk": "机器生成文本的检测是一个困难的问题。我们需要更好的方法。",
    "emoji_zwj": "👩‍👩‍👧‍👦 went to the 🏳️‍🌈 parade 👍🏽 today",
    "combining": "e\u0301\u0301\u0301 n\u0303 a\u0308 " * 5,
    "zalgo": "t" + "\u0336\u0337\u0338" * 50 + "ext",
    "devanagari": "नमस्ते दुनिया, यह एक परीक्षण है।",
    "zero_width": "in\u200bvis\u200bible\u200d te\ufeffxt",
    "bom": "\ufeff" + NORMAL,
    "private_use": "\ue000\uf8ff \U000f0000",
    "noncharacters": "\ufffe\uffff \U0010ffff",
    "mixed_scripts": "Hello мир 世界 مرحبا 🌍",
    "digits_only": "3.14159 2.71828 1.41421",
    "many_newlines": "\n" * 3000,
    "long_word_100k": "a" * 100_000,
    "repeated_token": "the " * 3000,
    "text_20k": (NORMAL + " ") * 100,
}
SURROGATE = {"lone_surrogate", "trailing_low_surrogate", "surrogate_only"}
HEAVY = {"long_word_100k", "repeated_token", "text_20k", "many_newlines"}  # slow for model meters
QUICK = {"normal", "empty", "spaces", "lone_surrogate", "cjk", "emoji_zwj", "nul"}

#: Batches of the wrong type, with the names an error should mention (one of them).
BAD_BATCHES = {
    "None": (None, ("NoneType", "None")),
    "int": (5, ("int",)),
    "float": (2.5, ("float",)),
    "bytes": (b"some bytes", ("bytes",)),
    "single_str": ("a single text", ("str",)),
    "list_of_None": ([None], ("NoneType", "None")),
    "list_of_int": ([1, 2], ("int",)),
    "list_of_bytes": ([b"x"], ("bytes",)),
    "good_then_None": (["fine text", None], ("NoneType", "None")),
    "nested_list": ([["a"]], ("list",)),
    "list_of_nan": ([float("nan")], ("float",)),
}
BIG_MB = {"1mb": 1_000_000, "10mb": 10_000_000}


def _kind(name: str) -> str:
    return "either" if name in SURROGATE else "result"


def big_text(ctx, size: str) -> str:
    def make():
        n = BIG_MB[size]
        return ((NORMAL + " ") * (n // (len(NORMAL) + 1) + 1))[:n]
    return ctx.get(("big", size), make)


def big_pair(ctx, size: str) -> tuple[str, str]:
    a = big_text(ctx, size)
    return a, ctx.get(("bigb", size), lambda: a.replace("budget", "budgte"))


# -- oracles -------------------------------------------------------------------------------------

def _close(a, b, rtol=1e-4, atol=1e-6) -> bool:
    if a is None or b is None:
        return a is b
    a, b = float(a), float(b)
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= atol + rtol * abs(b)


def scores_oracle(n: int):
    def check(value, warns):
        import numpy as np

        arr = np.asarray(value)
        if arr.shape != (n,):
            return f"shape {arr.shape}, expected ({n},)"
        if not np.issubdtype(arr.dtype, np.floating):
            return f"dtype {arr.dtype}, expected float"
        if np.isinf(arr).any():
            return "infinite score"
        if np.isnan(arr).any() and not warns:
            return "NaN score without a warning"
        return None
    return check


def batch_vs_single(fn, items: list):
    """fn(items) and fn([item]) for each item (an exception alone is kept as its message)."""
    batch = fn(items)
    singles = []
    for item in items:
        try:
            singles.append(fn([item]))
        except Exception as exc:  # noqa: BLE001 - compared below
            singles.append(exc)
    return batch, singles


def batch_scores_oracle(value, warns):
    import numpy as np

    batch, singles = value
    batch = np.asarray(batch, dtype=float)
    if batch.shape != (len(singles),):
        return f"batch gave shape {batch.shape} for {len(singles)} texts"
    for i, single in enumerate(singles):
        if isinstance(single, Exception):
            if not math.isnan(batch[i]):
                return f"item {i} fails alone ({type(single).__name__}) but is scored {batch[i]:.4g} in a batch"
        elif not _close(batch[i], np.asarray(single, dtype=float)[0]):
            return f"item {i}: batch {batch[i]:.6g} != alone {float(np.asarray(single)[0]):.6g}"
    return None


QUALITY_RANGES = {"rouge_l": (0.0, 1.0), "cosine": (-1.000001, 1.000001), "word_edit_rate": (0.0, 1.0),
                  "char_edit_rate": (0.0, 1.0), "perplexity_original": (0.0, math.inf),
                  "perplexity_attacked": (0.0, math.inf)}
IDENTICAL = {"rouge_l": 1.0, "word_edit_rate": 0.0, "char_edit_rate": 0.0, "perplexity_delta": 0.0,
             "flesch_delta": 0.0}


def quality_oracle(n: int, identical: bool = False):
    def check(frame, warns):
        import pandas as pd

        if not isinstance(frame, pd.DataFrame):
            return f"not a DataFrame: {type(frame).__name__}"
        if len(frame) != n:
            return f"{len(frame)} rows for {n} pairs"
        notes = frame["note"].tolist() if "note" in frame else [""] * n
        for col in frame.select_dtypes("number").columns:
            for i, v in enumerate(frame[col].tolist()):
                if v != v:
                    # a validity share is defined over swaps: NaN with swaps == 0 in the same row is the
                    # documented value (quality.validity), explained by the row itself
                    if col in ("valid_share", "invalid_share") and "swaps" in frame and frame["swaps"].iloc[i] == 0:
                        continue
                    if not str(notes[i]).strip():
                        return f"{col} is NaN in row {i} with an empty note"
                    continue
                if math.isinf(v):
                    return f"{col} is infinite in row {i}"
                lo, hi = QUALITY_RANGES.get(col, (-math.inf, math.inf))
                if not lo <= v <= hi:
                    return f"{col} = {v} outside [{lo}, {hi}] in row {i}"
                if identical and col in IDENTICAL and abs(v - IDENTICAL[col]) > 1e-9:
                    return f"{col} = {v} for identical texts (expected {IDENTICAL[col]})"
                if identical and col == "cosine" and v < 0.999:
                    return f"cosine = {v} for identical texts"
        return None
    return check


def batch_quality_oracle(value, warns):
    batch, singles = value
    problem = quality_oracle(len(singles))(batch, warns)
    if problem:
        return problem
    for i, single in enumerate(singles):
        if isinstance(single, Exception):
            continue  # the one-pair call's failure is its own case; the batch row was checked above
        for col in batch.select_dtypes("number").columns:
            if not _close(batch[col].iloc[i], single[col].iloc[0]):
                return f"pair {i} {col}: batch {batch[col].iloc[i]} != alone {single[col].iloc[0]}"
        if str(batch["note"].iloc[i]) != str(single["note"].iloc[0]):
            return f"pair {i} note differs: batch {batch['note'].iloc[i]!r} vs alone {single['note'].iloc[0]!r}"
    return None


def spans_oracle(text: str):
    def check(spans, warns):
        import numpy as np

        arr = np.asarray(spans)
        if arr.ndim != 2 or (arr.size and arr.shape[1] != 2):
            return f"spans shape {arr.shape}"
        if len(arr) and (arr[:, 0].min() < 0 or arr[:, 1].max() > len(text) or (arr[:, 1] < arr[:, 0]).any()
                         or (np.diff(arr[:, 0]) < 0).any()):
            return f"spans outside [0, {len(text)}] or unsorted: {arr[:3].tolist()}..."
        if text.strip() and not len(arr):
            return "no token for a non-blank text"
        return None
    return check


def float_oracle(lo=-math.inf, hi=math.inf, nan_ok=True, equal=None):
    def check(value, warns):
        values = value if isinstance(value, tuple) else (value,)
        for v in values:
            if not isinstance(v, float):
                return f"{type(v).__name__}, expected float"
            if v != v:
                if not nan_ok:
                    return "NaN"
                continue
            if not lo <= v <= hi:
                return f"{v} outside [{lo}, {hi}]"
            if equal is not None and abs(v - equal) > 1e-9:
                return f"{v}, expected {equal}"
        return None
    return check


# -- fixtures ------------------------------------------------------------------------------------

def train_set(ctx):
    def make():
        from humanize.benchmarks.data import load_dataset

        df = load_dataset("demo")
        df = df[df["attack"].fillna("none") == "none"]
        machine = df[df["label"] == "machine"]["generation"].head(20).tolist()
        human = df[df["label"] == "human"]["generation"].head(20).tolist()
        return machine + human, ["machine"] * len(machine) + ["human"] * len(human)
    return ctx.get("train", make)


def detector(ctx, name: str):
    def make():
        from humanize import detectors

        det = detectors.get(name)
        if det.learnable:
            det.fit(*train_set(ctx))
        return det
    return ctx.get(("det", name), make)


def meter(ctx, meters):
    def make():
        from humanize.quality import QualityMeter

        return QualityMeter(meters=None if meters is None else list(meters))
    return ctx.get(("qm", meters), make)


# -- detectors -----------------------------------------------------------------------------------

DETECTORS = (("surface_probe", "plain"), ("tfidf_lr", "plain"), ("log_likelihood", "model"))


def _fresh_fit(name, texts, labels, **params):
    from humanize import detectors

    return detectors.get(name, **params).fit(texts, labels)


def detector_cases(add) -> None:
    for det, group in DETECTORS:
        learnable = det != "log_likelihood"
        for tname, text in TEXTS.items():
            add(Case("detectors", f"{det}.score([{tname}])", lambda ctx, d=det, t=text: detector(ctx, d).score([t]),
                     _kind(tname), oracle=scores_oracle(1), group=group, timeout=60, quick=tname in QUICK))
            if tname != "normal":
                add(Case("detectors", f"{det}.score(batch with {tname}) == one by one",
                         lambda ctx, d=det, t=text: batch_vs_single(detector(ctx, d).score, [N1, t, N2]),
                         "result", oracle=batch_scores_oracle, group=group, timeout=90, quick=tname in QUICK))
        for bname, (bad, names) in BAD_BATCHES.items():
            add(Case("detectors", f"{det}.score({bname})", lambda ctx, d=det, b=bad: detector(ctx, d).score(b),
                     "error", names, group=group, quick=bname in ("None", "single_str", "good_then_None")))
            if learnable:
                add(Case("detectors", f"{det}.fit({bname}, labels)",
                         lambda ctx, d=det, b=bad: _fresh_fit(d, b, ["human", "machine"]), "error", names,
                         group=group, must=("fit",)))
        add(Case("detectors", f"{det}.score([])", lambda ctx, d=det: detector(ctx, d).score([]), "either",
                 oracle=scores_oracle(0), group=group, quick=True))
        add(Case("detectors", f"{det}.score(generator)",
                 lambda ctx, d=det: detector(ctx, d).score(t for t in (N1, N2)), "either",
                 oracle=scores_oracle(2), group=group))
        add(Case("detectors", f"{det}.score(pandas Series)",
                 lambda ctx, d=det: detector(ctx, d).score(__import__("pandas").Series([N1, N2])), "result",
                 oracle=scores_oracle(2), group=group))
        add(Case("detectors", f"{det}(bogus=1)", lambda ctx, d=det: __import__("humanize.detectors").detectors.get(
            d, bogus=1), "error", ("bogus",), group=group))
        if learnable:
            _learnable_cases(add, det, group)
    params = {
        "tfidf_lr": [("C", -1), ("C", "x"), ("ngram_range", (2, 1)), ("ngram_range", "ab"), ("max_features", 0),
                     ("min_df", -1), ("min_df", "x"), ("max_iter", 0), ("sublinear_tf", "no"),
                     ("random_state", "x")],
        "surface_probe": [("features", ["nope"]), ("features", 5), ("C", 0), ("C", "x"), ("max_iter", -1),
                          ("random_state", "x")],
        "log_likelihood": [("max_tokens", 0), ("max_tokens", -1), ("max_tokens", "x"), ("max_tokens", 2.5),
                           ("batch_tokens", 0), ("model", 5), ("model", ""), ("model", "no-such-model-xyz"),
                           ("device", "banana"), ("device", 5), ("dtype", "float7")],
    }
    for det, group in DETECTORS:
        for key, value in params[det]:
            add(Case("detectors", f"{det}({key}={value!r}) then fit/score",
                     lambda ctx, d=det, k=key, v=value: _configured_score(ctx, d, {k: v}), "error",
                     (key, repr(value) if isinstance(value, str) and value else key), group=group, timeout=60))


def _configured_score(ctx, name, params):
    from humanize import detectors

    det = detectors.get(name, **params)
    if det.learnable:
        det.fit(*train_set(ctx))
    return det.score([N1])


def _learnable_cases(add, det, group) -> None:
    def labels_case(label, labels, names, expect="error"):
        def call(ctx):
            texts, good = train_set(ctx)
            return _fresh_fit(det, texts, labels(good))
        add(Case("detectors", f"{det}.fit(labels={label})", call, expect, names, group=group))

    labels_case("None", lambda g: None, ("label", "NoneType"))
    labels_case("'machine' (a str)", lambda g: "machine", ("label",))
    labels_case("yes/no", lambda g: ["yes" if x == "machine" else "no" for x in g], ("label", "yes"))
    labels_case("0/2", lambda g: [2 if x == "machine" else 0 for x in g], ("label", "2"))
    labels_case("0.5 floats", lambda g: [0.5] * len(g), ("label", "0.5"))
    labels_case("NaN", lambda g: [float("nan")] * len(g), ("label", "nan"))
    labels_case("one short", lambda g: g[:-1], ("label",))
    labels_case("one class", lambda g: ["human"] * len(g), ("human", "machine", "class"))
    add(Case("detectors", f"{det}.fit([], [])", lambda ctx: _fresh_fit(det, [], []), "error",
             ("empty", "no text", "0 texts", "both", "label"), group=group))
    add(Case("detectors", f"{det}.score before fit",
             lambda ctx: __import__("humanize.detectors").detectors.get(det).score([N1]), "error", ("fit",),
             group=group, quick=True))
    for tname in ("empty", "lone_surrogate", "cjk", "nul"):
        def call(ctx, t=TEXTS[tname]):
            texts, labels = train_set(ctx)
            return _fresh_fit(det, [*texts, t], [*labels, "human"]).score([N1, t])
        add(Case("detectors", f"{det}.fit(train + [{tname}]) then score", call, _kind(tname),
                 oracle=scores_oracle(2), group=group))


def all_cases() -> list:
    """Every case, in a fixed order (the names are unique)."""
    from _matrix_cases_cli import cli_cases
    from _matrix_cases_cost import attack_cases, big_cases, cost_cases
    from _matrix_cases_endpoint import endpoint_cases
    from _matrix_cases_files import files_cases
    from _matrix_cases_outputs import outputs_cases
    from _matrix_cases_quality import quality_cases
    from _matrix_cases_run import config_cases
    from _matrix_cases_store import runner_cases, store_cases

    cases: list = []
    for make in (detector_cases, quality_cases, cost_cases, attack_cases, config_cases, runner_cases, store_cases,
                 cli_cases, files_cases, outputs_cases, endpoint_cases, big_cases):
        make(cases.append)
    seen = set()
    for c in cases:
        key = (c.layer, c.name)
        assert key not in seen, f"duplicate case {key}"
        seen.add(key)
    return cases
