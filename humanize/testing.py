"""Conformance checks for your own attacks, detectors, defenses and quality meters (issue #20 §5), like
scikit-learn's ``check_estimator``.

The benchmark relies on a contract every component keeps: exact edits, the same output whatever
the batch, its order or the process, clear errors on bad input, parameters that clone, pickle and
fingerprint. Run the kit on a component before you register it::

    from humanize.testing import check_attack, check_detector

    check_attack(MyAttack(rate=0.3, seed=1))                       # ConformanceError lists each failed check
    check_detector(MyDetector(), texts=my_texts)                   # a learnable one is fitted on TRAIN_TEXTS
    check_detector(MyLearned(), texts=my_texts, labels=my_labels)  # ... or on (texts, labels)
    check_defense(MyNormalizer())                                   # the attack's contract, without a rate
    check_meter(MyMeter(), pairs=my_pairs)                          # a quality meter, on (original, attacked) pairs

or, in a test suite, one test per check::

    @pytest.mark.parametrize("check", ATTACK_CHECKS)
    def test_my_attack(check):
        check_attack(MyAttack(), checks=[check])

Each check is also a function of its own, whose docstring says what it asserts:
``check_attack_<check>(attack, texts=None)``, ``check_detector_<check>(detector, texts=None,
labels=None)``, ``check_defense_<check>(defense, texts=None)`` and ``check_meter_<check>(meter, pairs=None)``. The component is not modified (a
learnable detector is fitted on clones). The ``process`` check pickles the component, unpickles it
in a new interpreter (which inherits ``sys.path``) and compares its outputs there; a component that
loads a model by name loads it again in that process, so ``process=False`` skips it (the package's
own test does so for its model-based components). ``*_STATIC_CHECKS`` run no document through the
component, for one whose model cannot be had. Before each run the kit empties the package's
statistics cache, so that "batch = one by one" compares two computations, not one and a cache hit.
"""
from __future__ import annotations

import math
import os
import pickle
import subprocess
import sys
import tempfile
import warnings
from typing import Any, Callable, Sequence

import numpy as np

from humanize._canonical import canonical
from humanize.attacks.base import Attack, AttackResult, apply_edits, check_edits
from humanize.defenses.base import Defense
from humanize.detectors.base import Detector
from humanize.exceptions import NotFittedError
from humanize.quality.custom import PairMeter

__all__ = ["ConformanceError", "check_attack", "check_detector", "check_defense", "check_meter", "ATTACK_CHECKS",
           "DETECTOR_CHECKS", "DEFENSE_CHECKS", "METER_CHECKS", "ATTACK_STATIC_CHECKS", "DETECTOR_STATIC_CHECKS",
           "DEFENSE_STATIC_CHECKS", "METER_STATIC_CHECKS", "DEFAULT_TEXTS", "DEFAULT_PAIRS", "ODD_TEXTS",
           "TRAIN_TEXTS", "TRAIN_LABELS", "RTOL", "ATOL", "PROCESS_TIMEOUT_S"]

#: Short documents with sites for every rule attack (articles, numbers, US spellings, common misspellings,
#: sentence breaks, a double space).
DEFAULT_TEXTS = (
    "The committee met on Tuesday to discuss the 2024 budget. Several members believe the costs are definitely "
    "too high. The chair promised a report.",
    "Rain is expected later this week, and the temperatures will drop by 5 degrees before Friday because of a cold "
    "front.",
    "She walked to the center of town, bought fresh bread and apples at an old market, and was home again by "
    "10:30.  Her favorite color is gray.",
)
#: (original, attacked) pairs a quality meter scores: a word swapped, a sentence reworded, a text left as it is.
DEFAULT_PAIRS = (
    (DEFAULT_TEXTS[0], DEFAULT_TEXTS[0].replace("definitely too high", "much too high").replace("report", "memo")),
    (DEFAULT_TEXTS[1], "Rain is expected later this week, and because of a cold front the temperatures will fall by "
                       "5 degrees before Friday."),
    (DEFAULT_TEXTS[2], DEFAULT_TEXTS[2]),
)
#: Valid inputs that components get wrong: empty, blank, emoji (with a skin-tone modifier), CJK, Arabic.
ODD_TEXTS = ("", "   ", "\n\n\t", "Emoji 😀👍🏽 party 🎉 at the lake!", "日本語の文です。次の文。",
             "مرحبا بالعالم، هذا نص قصير.")
#: A tiny labelled set (1 = machine) a learnable detector is fitted on when no labels are given.
TRAIN_TEXTS = (
    "lol we went to the beach and it rained the whole time, still fun tho",
    "ok so my cat knocked the plant off the shelf AGAIN. third time this week.",
    "Honestly the bus was late and I missed the first half of the game, ugh.",
    "my grandma's soup recipe has no measurements, just vibes and a lot of garlic",
    "In conclusion, the results demonstrate a significant improvement in the overall performance.",
    "Furthermore, it is important to note that the proposed approach offers several key benefits.",
    "Overall, the study highlights the crucial role of collaboration in achieving sustainable outcomes.",
    "Additionally, the findings suggest that further research is needed to fully understand the impact.",
)
TRAIN_LABELS = (0, 0, 0, 0, 1, 1, 1, 1)
#: Scores agree when ``|a - b| <= ATOL + RTOL * |b|``: model detectors pad batches (about 1e-5 in a logit).
RTOL, ATOL = 1e-5, 1e-4
#: The fresh-process check's time limit.
PROCESS_TIMEOUT_S = 600

ATTACK_CHECKS = ("traits", "params", "bad_input", "pickle", "edits", "batch", "determinism", "odd_inputs",
                 "fingerprint", "process")
DETECTOR_CHECKS = ("traits", "params", "bad_input", "not_fitted", "pickle", "scores", "batch", "determinism",
                   "odd_inputs", "fingerprint", "process")
#: A defense keeps the attack's contract (exact edits, the same output whatever the batch), without a rate or seed.
DEFENSE_CHECKS = ("traits", "params", "bad_input", "pickle", "edits", "batch", "determinism", "odd_inputs",
                  "fingerprint", "process")
METER_CHECKS = ("traits", "params", "pickle", "columns", "batch", "determinism", "odd_inputs", "fingerprint",
                "process")
#: The checks that run no document through the component (bad input must be refused before any model runs).
ATTACK_STATIC_CHECKS = ("traits", "params", "bad_input", "pickle")
DETECTOR_STATIC_CHECKS = ("traits", "params", "bad_input", "not_fitted", "pickle")
DEFENSE_STATIC_CHECKS = ("traits", "params", "bad_input", "pickle")
METER_STATIC_CHECKS = ("traits", "params", "pickle")


class ConformanceError(AssertionError):
    """A component broke the contract: ``failures`` lists ``(check, what differed)``."""

    def __init__(self, component: str, failures: Sequence[tuple[str, str]]):
        self.component, self.failures = component, list(failures)
        lines = [f"[{check}] {why}" for check, why in self.failures]
        head = (f"{component} failed check {self.failures[0][0]!r}: " if len(lines) == 1
                else f"{component} failed {len(lines)} conformance checks:\n  ")
        super().__init__(head + "\n  ".join(lines))

    @property
    def checks(self) -> list[str]:
        return [check for check, _ in self.failures]


class _Failed(Exception):
    """One check's failure, inside the kit."""


def _short(s: Any, n: int = 60) -> str:
    return repr(s if not isinstance(s, str) or len(s) <= n else s[:n - 3] + "...")


def _where(a: str, b: str) -> str:
    """Where two texts first differ."""
    i = next((j for j, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    lo = max(0, i - 15)
    return f"first difference at character {i}: {_short(a[lo:i + 30])} vs {_short(b[lo:i + 30])}"


def _call(what: str, fn: Callable, *args):
    """``fn(*args)``; an exception from the component becomes a failure naming the call."""
    try:
        return fn(*args)
    except _Failed:
        raise
    except Exception as exc:  # noqa: BLE001 - the component's own error is what we report
        raise _Failed(f"{what} raised {type(exc).__name__}: {exc}") from exc


def _fresh() -> None:
    """Empty the package's statistics cache (when loaded), so that the next run computes."""
    scoring = sys.modules.get("humanize.models.scoring")
    if scoring is not None:
        scoring.STATISTICS_CACHE.clear()


def _clone(obj):
    from sklearn.base import clone

    return _call("sklearn.base.clone", clone, obj)


def _roundtrip(obj, what: str = "pickle round trip"):
    return _call(what, lambda: pickle.loads(pickle.dumps(obj)))


def _snapshot(obj) -> dict:
    """The shallow parameters, each as exact canonical data (or its repr when it has none)."""
    out = {}
    for k, v in _call("get_params(deep=False)", obj.get_params, False).items():
        try:
            out[k] = canonical(v, k)
        except TypeError:
            out[k] = ("<no exact form>", repr(v))
    return out


def _differ(before: dict, after: dict) -> str:
    old, new = (lambda k: before.get(k, "<missing>")), (lambda k: after.get(k, "<missing>"))
    keys = sorted({*before, *after})
    return "; ".join(f"{k}: {_short(old(k))} -> {_short(new(k))}" for k in keys if old(k) != new(k))


def _expect_type_error(what: str, fn: Callable, arg, culprit: str) -> None:
    """``fn(arg)`` must raise a TypeError (not an AttributeError from inside) whose message names ``culprit``."""
    try:
        fn(arg)
    except TypeError as exc:
        if culprit not in str(exc):
            raise _Failed(f"{what} raised TypeError({str(exc)!r}), which does not name the type {culprit!r}") from None
        return
    except Exception as exc:  # noqa: BLE001
        raise _Failed(f"{what} raised {type(exc).__name__}: {exc} (expected a TypeError naming {culprit!r})") from None
    raise _Failed(f"{what} was accepted (expected a TypeError naming {culprit!r})")


def _mixed(text: str) -> list[str]:
    """:data:`ODD_TEXTS` with ``text`` second: its output must not change among blank and odd neighbours."""
    return [ODD_TEXTS[0], text, *ODD_TEXTS[1:]]


def _is_index(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


_CHILD = r"""
import pickle, sys
from humanize.models.loading import add_load_listener
loads = []
add_load_listener(lambda event: loads.append(event["name"]))
with open(sys.argv[1], "rb") as f:
    blob, method, texts = pickle.load(f)
component = pickle.loads(blob)
if method == "measure":  # a quality meter, on (originals, attacked)
    cols, _ = component.measure(*texts)
    out = {k: [v if isinstance(v, str) else float(v) for v in values] for k, values in cols.items()}
else:
    out = getattr(component, method)(texts)
    out = [(r.text, [tuple(e) for e in r.edits]) for r in out] if method == "batch" else [float(x) for x in out]
with open(sys.argv[2], "wb") as f:
    pickle.dump((out, loads), f)
"""


def _in_fresh_process(component, method: str, texts: list[str]) -> tuple[list, list]:
    """``component.<method>(texts)`` in a new interpreter (the component pickled), and the models it loaded."""
    if type(component).__module__ == "__main__":
        raise _Failed(f"{type(component).__qualname__} is defined in __main__, which a worker process cannot "
                      f"import; define it in a module")
    blob = _call("pickle.dumps", pickle.dumps, component)
    with tempfile.TemporaryDirectory(prefix="humanize-conformance-") as tmp:
        src, dst = os.path.join(tmp, "in.pkl"), os.path.join(tmp, "out.pkl")
        with open(src, "wb") as f:
            pickle.dump((blob, method, texts), f)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p or os.getcwd() for p in sys.path)}
        try:
            proc = subprocess.run([sys.executable, "-c", _CHILD, src, dst], env=env, capture_output=True, text=True,
                                  timeout=PROCESS_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise _Failed(f"{method}(texts) in a fresh process ran past {PROCESS_TIMEOUT_S} s") from None
        if proc.returncode != 0:
            last = (proc.stderr.strip().splitlines() or ["(no message)"])[-1]
            raise _Failed(f"{method}(texts) in a fresh process failed (exit {proc.returncode}): {last}")
        with open(dst, "rb") as f:
            return pickle.load(f)


class _Case:
    """One component and its texts. Runs are memoised, so the checks of one call share them."""

    kind = "component"
    checks: tuple = ()

    def __init__(self, component, texts):
        texts = list(DEFAULT_TEXTS if texts is None else texts)
        if not texts or not all(isinstance(t, str) for t in texts):
            raise TypeError(f"check_{self.kind}: texts must be a non-empty sequence of str")
        self.c, self.texts, self._memo = component, texts, {}
        try:
            self.start()  # now, before any check runs the component; a failure is reported by the checks
        except _Failed:
            pass

    def once(self, key: str, fn: Callable):
        if key not in self._memo:
            try:
                self._memo[key] = (True, fn())
            except _Failed as exc:
                self._memo[key] = (False, exc)
        ok, value = self._memo[key]
        if not ok:
            raise value
        return value

    def start(self) -> tuple:
        """Parameters and fingerprint before any check touched the component."""
        return self.once("start", lambda: (_snapshot(self.c), _call("fingerprint()", self.c.fingerprint)))

    def same_params(self, what: str, other) -> None:
        snap, fp = self.start()
        if type(other) is not type(self.c):
            raise _Failed(f"{what} is a {type(other).__name__}, not a {type(self.c).__name__}")
        if _snapshot(other) != snap:
            raise _Failed(f"{what} has other parameters: {_differ(snap, _snapshot(other))}")
        if _call("fingerprint()", other.fingerprint) != fp:
            raise _Failed(f"{what} has equal parameters but another fingerprint")

    def check_params(self) -> None:
        self.same_params("a clone", _clone(self.c))
        _call("repr()", repr, self.c)

    def check_pickle(self) -> None:
        self.same_params("an unpickled copy", _roundtrip(self.c))

    def check_traits(self) -> None:
        c, base = self.c, self.base
        if not isinstance(c.name, str) or not c.name.strip() or c.name == base.name:
            raise _Failed(f"name must be a non-empty str naming the {self.kind} (its registry key), got {c.name!r}")
        if not isinstance(c.version, str) or not c.version:
            raise _Failed(f"version must be a non-empty str, got {c.version!r}")
        for attr in ("needs_model", "learnable", "has_rate"):
            value = getattr(c, attr, False)
            if not isinstance(value, (bool, np.bool_)):
                raise _Failed(f"{attr} must be a bool, got {type(value).__name__} {value!r}")

    def check_process(self) -> None:
        out, loads = _in_fresh_process(self.fitted(), self.method, self.texts)
        self.agree("a fresh process", out, self.outputs())
        if getattr(self.c, "needs_model", True) is False and loads:
            raise _Failed(f"needs_model is False but a fresh process loaded {', '.join(map(repr, loads))}")

    def run(self, names, process: bool) -> None:
        names = list(self.checks if names is None else ([names] if isinstance(names, str) else names))
        unknown = [n for n in names if n not in self.checks]
        if unknown:
            raise ValueError(f"unknown {self.kind} check(s) {unknown}; valid: {', '.join(self.checks)}")
        failures = []
        for name in names:
            if name == "process" and not process:
                continue
            try:
                getattr(self, "check_" + name)()
            except _Failed as exc:
                failures.append((name, str(exc)))
        if failures:
            r = repr(self.c)
            r = r if len(r) <= 160 else r[:157] + "..."
            raise ConformanceError(f"{type(self.c).__qualname__} {getattr(self.c, 'name', '?')!r} ({r})", failures)


# -- attacks ----------------------------------------------------------------------------------------------

def _key(r: AttackResult) -> tuple:
    return r.text, [tuple(e) for e in r.edits]


class _AttackCase(_Case):
    kind, checks, method, base = "attack", ATTACK_CHECKS, "batch", Attack

    def __init__(self, attack, texts):
        if not isinstance(attack, self.base):
            article = "an" if self.base.__name__[0] in "AEIOU" else "a"
            raise TypeError(f"check_{self.kind} expects {article} {self.base.__name__} instance, got "
                            f"{type(attack).__name__}")
        super().__init__(attack, texts)

    def fitted(self):
        return self.c

    def batch(self, what: str, attack, texts: list[str]) -> list:
        _fresh()
        out = _call(what, attack.batch, texts)
        if not isinstance(out, list) or len(out) != len(texts):
            raise _Failed(f"{what} returned a {type(out).__name__} of length {getattr(out, '__len__', lambda: '?')()} "
                          f"for {len(texts)} texts (expected a list of one AttackResult per text)")
        for t, r in zip(texts, out):
            self.exact(what, t, r)
        return out

    def apply(self, what: str, attack, text: str) -> AttackResult:
        _fresh()
        r = _call(what, attack.apply, text)
        self.exact(what, text, r)
        return r

    def outputs(self) -> list:
        return self.once("batch", lambda: self.batch("batch(texts)", self.c, self.texts))

    def singles(self) -> list:
        return self.once("singles", lambda: [self.apply(f"apply(texts[{i}])", self.c, t)
                                             for i, t in enumerate(self.texts)])

    def exact(self, what: str, text: str, r) -> None:
        """``r`` is this attack's result on ``text``, with exact, sorted, in-range, non-overlapping edits."""
        if not isinstance(r, AttackResult):
            raise _Failed(f"{what} gave a {type(r).__name__}, not an AttackResult")
        if r.original != text:
            raise _Failed(f"{what}: result.original is not the input text ({_where(r.original, text)})")
        if r.attack != self.c.name:
            raise _Failed(f"{what}: result.attack is {r.attack!r}, but the attack's name is {self.c.name!r}")
        edits = _call(f"{what}.edits", lambda: r.edits)
        bad = [e for e in edits if not (isinstance(e, tuple) and len(e) == 3 and _is_index(e[0]) and _is_index(e[1])
                                        and isinstance(e[2], str))]
        if bad:
            raise _Failed(f"{what}: edit {bad[0]!r} is not (start: int, end: int, replacement: str)")
        try:
            check_edits(text, edits)
        except ValueError as exc:
            raise _Failed(f"{what} on {_short(text)}: {exc}") from None
        rebuilt = apply_edits(text, edits)
        if not isinstance(r.text, str) or rebuilt != r.text:
            why = _where(rebuilt, r.text) if isinstance(r.text, str) else f"text is a {type(r.text).__name__}"
            raise _Failed(f"{what} on {_short(text)}: apply_edits(original, edits) != text ({why})")

    def agree(self, what: str, got: list, want: list, texts: list[str] | None = None) -> None:
        for g, w, t in zip(got, want, texts or self.texts):
            g = tuple(g) if isinstance(g, tuple) else _key(g)
            if g != _key(w):
                why = _where(g[0], w.text) if g[0] != w.text else "same text, other edits"
                raise _Failed(f"{what} gave another output for {_short(t, 40)}: {why}")

    # -- the checks --------------------------------------------------------------------------------------
    def check_traits(self) -> None:
        super().check_traits()
        a = self.c
        takes_rate = "rate" in type(a)._param_tuple()
        if a.has_rate and not takes_rate:
            raise _Failed("has_rate is True but __init__ takes no rate (add a rate or set has_rate = False)")
        if a.has_rate and not (isinstance(a.rate, (int, float, np.number)) and 0 <= float(a.rate) <= 1):
            raise _Failed(f"has_rate is True but rate is {a.rate!r}, not a fraction θ in [0, 1]")
        # a rate with has_rate False: the class says its rate is no fraction θ (QPA: an optional override)
        if not isinstance(getattr(a, "batches", False), bool):
            raise _Failed(f"batches is {a.batches!r}, not a bool (True: batch() works a batch out together)")

    def check_bad_input(self) -> None:
        a = self.c
        _expect_type_error("apply(None)", a.apply, None, "NoneType")
        _expect_type_error("apply(b'bytes')", a.apply, b"bytes", "bytes")
        _expect_type_error("attack(None)", a, None, "NoneType")
        _expect_type_error("batch('a single str')", a.batch, "a single str", "str")
        _expect_type_error("batch(None)", a.batch, None, "NoneType")
        _expect_type_error("batch([text, 3])", a.batch, [self.texts[0], 3], "int")

    def check_edits(self) -> None:
        self.outputs()  # each result is checked as it is made
        self.singles()

    def check_batch(self) -> None:
        self.agree("apply() one by one", self.singles(), self.outputs())
        order = list(range(len(self.texts)))[::-1] + [0]  # reversed, and the first document twice
        texts = [self.texts[i] for i in order]
        self.agree("batch(reversed texts + [texts[0]])", self.batch("batch(reordered texts)", self.c, texts),
                   [self.outputs()[i] for i in order], texts)
        if _call("batch([])", self.c.batch, []) != []:
            raise _Failed("batch([]) did not return []")

    def check_determinism(self) -> None:
        self.agree("a clone with the same seed", self.batch("clone.batch(texts)", _clone(self.c), self.texts),
                   self.outputs())
        copy = _roundtrip(self.c)
        self.agree("an unpickled copy", [self.apply("unpickled.apply(texts[0])", copy, self.texts[0])], self.outputs())

    def check_odd_inputs(self) -> None:
        mixed = _mixed(self.texts[0])
        together = self.batch("batch(ODD_TEXTS with texts[0])", self.c, mixed)
        self.agree("batch(ODD_TEXTS with texts[0])", together[1:2], self.outputs())
        blank = [i for i, t in enumerate(mixed) if not t.strip()]  # alone, no document for a model to run
        self.agree("apply() one by one on blank texts", [self.apply(f"apply({mixed[i]!r})", self.c, mixed[i])
                                                         for i in blank], [together[i] for i in blank],
                   [mixed[i] for i in blank])
        self.apply("apply() on its own output", self.c, self.outputs()[0].text)

    def check_fingerprint(self) -> None:
        snap, fp = self.start()
        self.outputs()
        if _snapshot(self.c) != snap or _call("fingerprint()", self.c.fingerprint) != fp:
            raise _Failed(f"applying changed the parameters or the fingerprint: {_differ(snap, _snapshot(self.c))}")
        self.same_params("an unpickled copy of the used attack", _roundtrip(self.c, "pickle after use"))


def check_attack(attack: Attack, texts: Sequence[str] | None = None, *, process: bool = True,
                 checks: Sequence[str] | None = None) -> None:
    """Run ``checks`` (default: all of :data:`ATTACK_CHECKS`; ``process=False`` drops ``"process"``) on ``attack``.

    ``texts`` (default :data:`DEFAULT_TEXTS`) are the documents it runs: keep them short for a model
    attack. Raises :class:`ConformanceError` naming each failed check and what differed.
    """
    _AttackCase(attack, texts).run(checks, process)


# -- detectors --------------------------------------------------------------------------------------------

class _DetectorCase(_Case):
    kind, checks, method, base = "detector", DETECTOR_CHECKS, "score", Detector

    def __init__(self, detector, texts, labels):
        if not isinstance(detector, Detector):
            raise TypeError(f"check_detector expects a Detector instance, got {type(detector).__name__}")
        if labels is not None and texts is None:
            raise ValueError("check_detector: labels given without the texts they label")
        super().__init__(detector, texts)
        self.train = (self.texts, list(labels)) if labels is not None else (list(TRAIN_TEXTS), list(TRAIN_LABELS))

    def fit(self, what: str):
        if not self.c.learnable:
            return self.c
        c = _clone(self.c)
        _fresh()
        if _call(f"{what}.fit(texts, labels)", c.fit, *self.train) is not c:
            raise _Failed("fit(texts, labels) must return the detector itself")
        return c

    def fitted(self):
        return self.once("fitted", lambda: self.fit("clone"))

    def score(self, what: str, det, texts: list[str]) -> np.ndarray:
        _fresh()
        s = _call(what, det.score, texts)
        if not isinstance(s, np.ndarray) or s.dtype.kind != "f" or s.shape != (len(texts),):
            raise _Failed(f"{what} returned a {type(s).__name__} {getattr(s, 'dtype', '')} of shape "
                          f"{getattr(s, 'shape', '?')} (expected a float array of shape ({len(texts)},))")
        return s

    def outputs(self) -> np.ndarray:
        return self.once("scores", lambda: self.score("score(texts)", self.fitted(), self.texts))

    def agree(self, what: str, got, want, texts: list[str] | None = None) -> None:
        got, want, texts = np.asarray(got, float), np.asarray(want, float), texts or self.texts
        bad = ~np.isclose(got, want, rtol=RTOL, atol=ATOL, equal_nan=True)
        if bad.any():
            i = int(np.argmax(bad))
            raise _Failed(f"{what} gave {got[i]!r} for {_short(texts[i], 40)}, against {want[i]!r} "
                          f"(tolerance {RTOL:g} relative + {ATOL:g})")

    # -- the checks --------------------------------------------------------------------------------------
    def check_bad_input(self) -> None:
        det = self.fitted()
        _expect_type_error("score('a str')", det.score, "a str", "str")
        _expect_type_error("score(None)", det.score, None, "NoneType")
        _expect_type_error("score([1, 2])", det.score, [1, 2], "int")
        if not self.c.learnable:
            return
        _expect_type_error("fit('a str', labels)", lambda x: _clone(self.c).fit(x, [1]), "a str", "str")
        try:
            _clone(self.c).fit(self.train[0], self.train[1][:-1])
        except ValueError:
            return
        except Exception as exc:  # noqa: BLE001
            raise _Failed(f"fit with one label too few raised {type(exc).__name__}: {exc} (expected ValueError)")
        raise _Failed("fit with one label too few was accepted (expected a ValueError)")

    def check_not_fitted(self) -> None:
        c = _clone(self.c)
        if not self.c.learnable:
            if _call("fit(texts, labels)", c.fit, *self.train) is not c:
                raise _Failed("fit on a detector that learns nothing must return the detector itself")
            return
        try:
            c.score(self.texts)
        except NotFittedError:
            return
        except Exception as exc:  # noqa: BLE001 - scikit-learn's NotFittedError, or another error saying "fit"
            if type(exc).__name__ != "NotFittedError" and "fit" not in str(exc):
                raise _Failed(f"score before fit raised {type(exc).__name__}: {exc} "
                              f"(expected NotFittedError)") from None
            return
        raise _Failed("score before fit was accepted (expected humanize.detectors.NotFittedError)")

    def check_scores(self) -> None:
        s = self.outputs()
        if not np.all(np.isfinite(s)):
            i = int(np.argmax(~np.isfinite(s)))
            raise _Failed(f"score(texts) gave {s[i]!r} for {_short(self.texts[i], 40)} (expected a finite number)")
        self.score("score([])", self.fitted(), [])

    def check_batch(self) -> None:
        det, s = self.fitted(), self.outputs()
        self.agree("score([text]) one by one", [self.score(f"score([texts[{i}]])", det, [t])[0]
                                                 for i, t in enumerate(self.texts)], s)
        order = list(range(len(self.texts)))[::-1] + [0]  # reversed, and the first document twice
        texts = [self.texts[i] for i in order]
        self.agree("score(reversed texts + [texts[0]])", self.score("score(reordered)", det, texts), s[order], texts)

    def check_determinism(self) -> None:
        self.agree("a second clone fitted on the same data", self.score("score(texts)", self.fit("second clone"),
                                                                          self.texts), self.outputs())
        copy = _roundtrip(self.fitted())
        self.agree("an unpickled copy", self.score("unpickled.score(texts)", copy, self.texts), self.outputs())

    def check_odd_inputs(self) -> None:
        """Every odd text scores a finite number; a blank one may give NaN with a warning, or a ValueError
        that says it is empty (the LM metrics: no token to score)."""
        det, mixed = self.fitted(), _mixed(self.texts[0])
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            try:
                s = self.score("score(ODD_TEXTS with texts[0])", det, mixed)
            except _Failed as exc:
                if not isinstance(exc.__cause__, ValueError) or "empty" not in str(exc):
                    raise
                mixed = [t for t in mixed if t.strip()]
                s = self.score("score(non-blank ODD_TEXTS with texts[0])", det, mixed)
            blank = [i for i, t in enumerate(mixed) if not t.strip()]
            alone = [self.score(f"score([{mixed[i]!r}])", det, [mixed[i]])[0] for i in blank]
        for t, v in zip(mixed, s):
            if not math.isfinite(v) and (t.strip() or not seen):
                raise _Failed(f"score gave {v!r} for {_short(t)} (expected a finite number, or for a blank text "
                              f"NaN with a warning or a ValueError saying it is empty)")
        j = mixed.index(self.texts[0])
        self.agree("score(ODD_TEXTS with texts[0])", s[j:j + 1], self.outputs()[:1])
        self.agree("score([text]) one by one on blank texts", alone, s[blank], [mixed[i] for i in blank])

    def check_fingerprint(self) -> None:
        self.outputs()
        self.same_params("the fitted and used detector", self.fitted())
        self.same_params("the detector after scoring", self.c)
        self.same_params("an unpickled copy of the used detector", _roundtrip(self.fitted(), "pickle after use"))


def check_detector(detector: Detector, texts: Sequence[str] | None = None, labels: Sequence | None = None, *,
                   process: bool = True, checks: Sequence[str] | None = None) -> None:
    """Run ``checks`` (default: all of :data:`DETECTOR_CHECKS`; ``process=False`` drops ``"process"``).

    A learnable detector is fitted, on clones, on ``(texts, labels)``, or on :data:`TRAIN_TEXTS` when no
    labels are given; ``texts`` (default :data:`DEFAULT_TEXTS`) are scored. Raises :class:`ConformanceError`.
    """
    _DetectorCase(detector, texts, labels).run(checks, process)


# -- defenses ---------------------------------------------------------------------------------------------

class _DefenseCase(_AttackCase):
    """A defense is checked as an attack is (exact edits, batch = one by one, clone and pickle give the same
    output, odd texts), less the rate: it has none."""

    kind, checks, method, base = "defense", DEFENSE_CHECKS, "batch", Defense

    def check_traits(self) -> None:
        _Case.check_traits(self)  # no rate to check


def check_defense(defense: Defense, texts: Sequence[str] | None = None, *, process: bool = True,
                  checks: Sequence[str] | None = None) -> None:
    """Run ``checks`` (default: all of :data:`DEFENSE_CHECKS`; ``process=False`` drops ``"process"``) on ``defense``.

    ``texts`` (default :data:`DEFAULT_TEXTS`) are the documents it defends. Raises :class:`ConformanceError`.
    """
    _DefenseCase(defense, texts).run(checks, process)


# -- quality meters ---------------------------------------------------------------------------------------

def _is_number(v) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


class _MeterCase(_Case):
    kind, checks, method, base = "meter", METER_CHECKS, "measure", PairMeter

    def __init__(self, meter, pairs):
        if not isinstance(meter, PairMeter):
            raise TypeError(f"check_meter expects a PairMeter instance, got {type(meter).__name__}")
        pairs = list(DEFAULT_PAIRS if pairs is None else pairs)
        if not pairs or not all(isinstance(p, (tuple, list)) and len(p) == 2 and all(isinstance(t, str) for t in p)
                                for p in pairs):
            raise TypeError("check_meter: pairs must be a non-empty sequence of (original, attacked) str pairs")
        self.attacked = [b for _, b in pairs]
        super().__init__(meter, [a for a, _ in pairs])

    def measure(self, what: str, meter, originals: list[str], attacked: list[str]) -> dict:
        """``meter.measure``'s columns, checked: distinct non-empty names (not ``note``), one value per pair, all
        numbers (NaN allowed) or all str (a label, such as the model's name), and one str note per pair."""
        _fresh()
        out = _call(what, meter.measure, list(originals), list(attacked))
        if not isinstance(out, tuple) or len(out) != 2 or not isinstance(out[0], dict):
            raise _Failed(f"{what} returned a {type(out).__name__}, not (columns: dict, notes: list)")
        cols, notes = out
        n = len(originals)
        if not cols:
            raise _Failed(f"{what} returned no column")
        if not isinstance(notes, list) or len(notes) != n or not all(isinstance(x, str) for x in notes):
            raise _Failed(f"{what}: notes must be a list of one str per pair ({n})")
        for name, values in cols.items():
            if not isinstance(name, str) or not name or name == "note":
                raise _Failed(f"{what}: column name {name!r} is not a non-empty str other than 'note'")
            values = list(values)
            if len(values) != n:
                raise _Failed(f"{what}: column {name!r} has {len(values)} values for {n} pairs")
            if not (all(_is_number(v) for v in values) or all(isinstance(v, str) for v in values)):
                bad = next(v for v in values if not _is_number(v))
                raise _Failed(f"{what}: column {name!r} holds {type(bad).__name__} {bad!r} (numbers, or str labels)")
        return {k: list(v) for k, v in cols.items()}

    def fitted(self):
        return self.c

    def outputs(self) -> dict:
        return self.once("measure", lambda: self.measure("measure(originals, attacked)", self.c, self.texts,
                                                         self.attacked))

    def agree(self, what: str, got: dict, want: dict, rows: list[int] | None = None) -> None:
        """``got`` equals ``want``'s rows ``rows`` (default: all), numbers within RTOL/ATOL (NaN equal to NaN)."""
        rows = list(range(len(self.texts))) if rows is None else rows
        if set(got) != set(want):
            raise _Failed(f"{what} gave columns {sorted(got)}, against {sorted(want)}")
        for name in want:
            for j, i in enumerate(rows):
                a, b = got[name][j], want[name][i]
                same = (a == b) if isinstance(b, str) or isinstance(a, str) else \
                    bool(np.isclose(float(a), float(b), rtol=RTOL, atol=ATOL, equal_nan=True))
                if not same:
                    a, b = (v if isinstance(v, str) else float(v) for v in (a, b))
                    raise _Failed(f"{what} gave {name} = {a!r} for the pair of {_short(self.texts[i], 40)}, "
                                  f"against {b!r}")

    # -- the checks --------------------------------------------------------------------------------------
    def check_traits(self) -> None:
        super().check_traits()
        for attr in ("default", "as_read"):
            if not isinstance(getattr(self.c, attr), bool):
                raise _Failed(f"{attr} must be a bool, got {getattr(self.c, attr)!r}")

    def check_columns(self) -> None:
        want = self.outputs()
        got = self.measure("measure([], [])", self.c, [], [])
        if set(got) != set(want):
            raise _Failed(f"measure([], []) gave columns {sorted(got)}, against {sorted(want)} for pairs")

    def check_batch(self) -> None:
        want = self.outputs()
        for i in range(len(self.texts)):
            self.agree(f"measure(pairs[{i}]) alone", self.measure(f"measure(pairs[{i}])", self.c, [self.texts[i]],
                                                                   [self.attacked[i]]), want, [i])
        order = list(range(len(self.texts)))[::-1] + [0]  # reversed, and the first pair twice
        got = self.measure("measure(reordered pairs)", self.c, [self.texts[i] for i in order],
                           [self.attacked[i] for i in order])
        self.agree("measure(reversed pairs + [pairs[0]])", got, want, order)

    def check_determinism(self) -> None:
        want = self.outputs()
        self.agree("a clone", self.measure("clone.measure(pairs)", _clone(self.c), self.texts, self.attacked), want)
        self.agree("an unpickled copy", self.measure("unpickled.measure(pairs)", _roundtrip(self.c), self.texts,
                                                     self.attacked), want)

    def check_odd_inputs(self) -> None:
        """Odd texts paired with themselves, with a document and the other way round are measured (NaN allowed),
        and a pair's figures do not change among odd neighbours."""
        originals = [self.texts[0], *ODD_TEXTS, *ODD_TEXTS, *([self.texts[0]] * len(ODD_TEXTS))]
        attacked = [self.attacked[0], *ODD_TEXTS, *([self.texts[0]] * len(ODD_TEXTS)), *ODD_TEXTS]
        got = self.measure("measure(pairs of ODD_TEXTS)", self.c, originals, attacked)
        self.agree("measure(pairs[0] among pairs of ODD_TEXTS)", {k: v[:1] for k, v in got.items()},
                   self.outputs(), [0])

    def check_fingerprint(self) -> None:
        snap, fp = self.start()
        self.outputs()
        if _snapshot(self.c) != snap or _call("fingerprint()", self.c.fingerprint) != fp:
            raise _Failed(f"measuring changed the parameters or the fingerprint: {_differ(snap, _snapshot(self.c))}")
        self.same_params("an unpickled copy of the used meter", _roundtrip(self.c, "pickle after use"))

    def check_process(self) -> None:
        out, _ = _in_fresh_process(self.c, "measure", (self.texts, self.attacked))
        self.agree("a fresh process", out, self.outputs())


def check_meter(meter: PairMeter, pairs: Sequence[tuple[str, str]] | None = None, *, process: bool = True,
                checks: Sequence[str] | None = None) -> None:
    """Run ``checks`` (default: all of :data:`METER_CHECKS`; ``process=False`` drops ``"process"``) on a quality
    meter (:class:`~humanize.quality.PairMeter`), through :meth:`~humanize.quality.PairMeter.measure`, the call
    :class:`~humanize.quality.QualityMeter` makes.

    ``pairs`` (default :data:`DEFAULT_PAIRS`) are the (original, attacked) pairs it measures. Raises
    :class:`ConformanceError`.
    """
    _MeterCase(meter, pairs).run(checks, process)


_ABOUT = {
    "traits": "name (the registry key) and version are non-empty str; has_rate, needs_model, learnable are bools; "
              "has_rate True only with a rate parameter in [0, 1]",
    "params": "a sklearn clone has equal parameters (as exact canonical data) and an equal fingerprint",
    "bad_input": "None, bytes, a single str where a batch is due, non-str items (and for fit, too few labels) "
                 "raise a TypeError (ValueError) naming the culprit",
    "not_fitted": "a learnable detector's score before fit raises NotFittedError; fit of any other returns it",
    "pickle": "an unpickled copy has equal parameters and fingerprint",
    "edits": "every result is an AttackResult of this attack whose sorted, in-range, non-overlapping edits "
             "rebuild its text: apply_edits(original, edits) == text",
    "scores": "score gives a finite float array, one per text (an empty one for no text)",
    "columns": "measure gives distinct non-empty column names (not 'note'), one value per pair, all numbers (NaN "
               "allowed) or all str labels, and one str note per pair; the same columns, empty, for no pair",
    "batch": "the same output one by one as in a batch, reversed or with a document (pair) twice",
    "determinism": "a clone (fitted on the same data) and an unpickled copy give the same outputs",
    "odd_inputs": "empty, blank, emoji, CJK and Arabic texts and an attack's own output work; a "
                  "blank text gives the same alone as in a batch, and a text the same among odd neighbours",
    "fingerprint": "running leaves parameters and fingerprint as they were, pickled or not",
    "process": "a fresh interpreter, given the pickled component, gives the same outputs (and loads no model "
               "when needs_model is False)",
}


def _single(kind: str, name: str) -> Callable:
    run = {"attack": check_attack, "defense": check_defense, "meter": check_meter}
    if kind in run:
        def check(component, texts=None) -> None:
            run[kind](component, texts, checks=[name])
    else:
        def check(detector: Detector, texts: Sequence[str] | None = None, labels: Sequence | None = None) -> None:
            check_detector(detector, texts, labels, checks=[name])
    check.__name__ = check.__qualname__ = f"check_{kind}_{name}"
    check.__doc__ = f"Only the {name!r} check of :func:`check_{kind}`: {_ABOUT[name]}."
    return check


for _kind, _names in (("attack", ATTACK_CHECKS), ("detector", DETECTOR_CHECKS), ("defense", DEFENSE_CHECKS),
                      ("meter", METER_CHECKS)):
    for _name in _names:
        globals()[f"check_{_kind}_{_name}"] = _single(_kind, _name)
        __all__.append(f"check_{_kind}_{_name}")
