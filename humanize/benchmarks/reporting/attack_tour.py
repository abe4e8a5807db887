"""A tour of the rule-based attacks on the demo set: what each does and how fast.

This is what ``humanize-bench attacks-demo`` prints: per attack, how many
documents it changed, how many edits it made, how much of the text changed, and
its throughput, with before/after samples where the edits are marked.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import pandas as pd

from humanize import attacks
from humanize.attacks import AttackResult

from ..data import load_demo
from ._escape import plain_text


@dataclass
class AttackTour:
    summary: pd.DataFrame
    samples: dict[str, AttackResult]


def run_attack_tour(names=None, n: int = 200, seed: int = 0) -> AttackTour:
    """Attack ``n`` demo machine texts with each attack (default: every rule-based one)."""
    names = list(attacks.RULE_BASED) if names is None else list(names)
    texts = load_demo().query("label == 'machine'").sample(n=min(n, 900), random_state=seed)["generation"].tolist()
    rows, samples = [], {}
    for name in names:
        attack = attacks.get(name, seed=seed)
        t0 = time.perf_counter()
        results = attack.batch(texts)
        elapsed = time.perf_counter() - t0
        changed_chars = [sum(max(e.end - e.start, len(e.replacement)) for e in r.edits) for r in results]
        rows.append(
            {
                "attack": name,
                "rate": getattr(attack, "rate", None),
                "docs": len(texts),
                "docs_changed": sum(r.changed for r in results),
                "edits_per_doc": sum(r.n_edits for r in results) / len(texts),
                "chars_changed_pct": 100 * sum(changed_chars) / max(1, sum(len(t) for t in texts)),
                "docs_per_s": len(texts) / elapsed if elapsed > 0 else float("inf"),
            }
        )
        samples[name] = next((r for r in results if r.changed), results[0])
    return AttackTour(pd.DataFrame(rows), samples)


def _visible(s: str) -> str:
    """Every invisible or bidi character shown (⟨ZW⟩ for U+200B, ⟨U+202E⟩ ...; :func:`._escape.plain_text`)."""
    return plain_text(s.replace("\u200b", "⟨ZW⟩")).replace("\n", "⏎").replace("\t", "⇥")


def mark_edits(result: AttackResult, width: int = 160, max_marked: int = 12) -> tuple[str, str]:
    """Before/after excerpts of ``width`` original characters around the first edit.

    Edits are shown in [brackets] when there are at most ``max_marked`` in the
    excerpt; invisible and bidi characters are made visible (⟨ZW⟩, ⟨U+202E⟩, ⏎, ⇥).
    """
    if not result.edits:
        return _visible(result.original[:width]), _visible(result.text[:width])
    lo = max(0, result.edits[0].start - 30)
    hi = min(len(result.original), lo + width)
    inside = [e for e in result.edits if lo <= e.start and e.end <= hi]
    mark = len(inside) <= max_marked
    before, after, pos = [], [], lo
    for e in inside:
        same = _visible(result.original[pos:e.start])
        old, new = _visible(result.original[e.start:e.end]), _visible(e.replacement)
        before.append(same + (f"[{old}]" if mark else old))
        after.append(same + (f"[{new}]" if mark else new))
        pos = e.end
    tail = _visible(result.original[pos:hi])
    dots = ("…" if lo else "", "…" if hi < len(result.original) else "")
    return dots[0] + "".join(before) + tail + dots[1], dots[0] + "".join(after) + tail + dots[1]
