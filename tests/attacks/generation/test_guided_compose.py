"""Guided paraphrases compose (issue #23 §3): QPA's text constraints veto a candidate the guide would pick (rerank)
or a token-mode chunk at its end; a Blend mixes a guided paraphrase with a word-level attack; the cost meter and
the runner's cost table count guide queries beside the generator's."""
import numpy as np
import pandas as pd
import pytest

from humanize import detectors
from humanize.attacks import apply_edits, get
from humanize.attacks.blend import Blend
from humanize.attacks.generation.guided import AdversarialParaphrase
from humanize.attacks.wordsub.constraints import SwapValidity
from humanize.attacks.text_constraints import TextConstraint
from humanize.cost import CostMeter
from humanize.generation.base import report_usage
from humanize.generation.local import LocalChat

from .test_guided import DOCS, Scripted, count_zz


class Forbid(TextConstraint):
    """Vetoes the rewrites in ``texts`` (QPA's interface, as a user's own constraint would implement it)."""

    def __init__(self, texts: tuple = ()):
        self._init_params(locals())

    def values(self, originals, variants, doc=None):
        return np.array([float(v in self.texts) for v in variants])

    def passes(self, values):
        return values == 0


def _guide():
    return detectors.get("function", fn=count_zz)


def _candidates(gen):
    by_chunk: dict = {}
    for chunk, _, text in gen.seen:  # in request order: candidate j of each chunk
        by_chunk.setdefault(chunk, []).append(text)
    return by_chunk


def _best(texts, forbidden=()):
    allowed = [j for j, t in enumerate(texts) if t not in forbidden]
    return texts[min(allowed, key=lambda j: (texts[j].count("zz"), j))]


def test_a_constraint_vetoes_the_candidate_the_guide_would_pick():
    kw = dict(guide=_guide(), mode="rerank", n_candidates=4, seed=5, chunk_sentences=2)
    gen0 = Scripted()
    AdversarialParaphrase(paraphraser=gen0, **kw).batch(DOCS)
    picks = tuple(_best(ts) for ts in _candidates(gen0).values())  # the guide's picks
    gen = Scripted()
    res = AdversarialParaphrase(paraphraser=gen, constraints=[Forbid(picks)], **kw).batch(DOCS)
    by_chunk = _candidates(gen)
    for ts in by_chunk.values():
        assert _best(ts) in picks and _best(ts, picks) not in picks
    for d, r in enumerate(res):  # each chunk keeps its best allowed candidate: the guide's next choice
        mine = [ts for chunk, ts in by_chunk.items() if chunk in DOCS[d]]
        assert r.text.count("zz") == sum(_best(ts, picks).count("zz") for ts in mine)
        assert r.text.count("zz") > sum(_best(ts).count("zz") for ts in mine)
    for r in res:
        assert apply_edits(r.original, r.edits) == r.text
        assert r.info["vetoed"] == r.info["vetoes"]["Forbid"] > 0
        assert r.info["guide_queries"] == r.info["llm_queries"] - r.info["vetoed"]  # vetoed: never scored
    assert sum(r.info["vetoed"] for r in res) == sum(t in picks for ts in by_chunk.values() for t in ts)
    # every candidate vetoed: the chunks keep their text
    gen2 = Scripted()
    AdversarialParaphrase(paraphraser=gen2, **{**kw, "n_candidates": 2}).batch(DOCS)
    every = tuple(t for _, _, t in gen2.seen)
    none = AdversarialParaphrase(paraphraser=Scripted(), constraints=[Forbid(every)],
                                 **{**kw, "n_candidates": 2}).batch(DOCS)
    assert [r.text for r in none] == DOCS
    assert [r.info["vetoed_chunks"] for r in none] == [r.info["chunks"] for r in none]


def test_constraints_are_text_constraints():
    with pytest.raises(ValueError, match="SwapValidity is a CandidateConstraint"):
        AdversarialParaphrase(paraphraser=Scripted(), guide=_guide(), mode="rerank", constraints=[SwapValidity()])
    attack = AdversarialParaphrase(paraphraser=Scripted(), guide=_guide(), mode="rerank", constraints="qpa")
    assert [type(c).__name__ for c in attack._constraint_objects()] == [
        "FleschChange", "SentenceSimilarity", "PerplexityChange"]


@pytest.fixture(scope="module")
def tiny_chat(tmp_path_factory):
    from ...detectors.conftest import _save_tiny_llama, _train_tokenizer

    path = _save_tiny_llama(tmp_path_factory.mktemp("compose_lm") / "a", _train_tokenizer(300), seed=0)
    return LocalChat(model=path, max_new_tokens=5, temperature=0.7)


class FirstRefused(TextConstraint):
    """Vetoes the first rewrite it is shown of each original, passes the later ones (token mode's fallback)."""

    def __init__(self):
        self._init_params(locals())
        self.seen = []

    def values(self, originals, variants, doc=None):
        out = [float(o in self.seen) for o in originals]
        self.seen += list(originals)
        return np.array(out)

    def passes(self, values):
        return values > 0


class Refuse(TextConstraint):
    """Vetoes every rewrite."""

    def __init__(self):
        self._init_params(locals())

    def values(self, originals, variants, doc=None):
        return np.zeros(len(variants))

    def passes(self, values):
        return values > 0


def test_token_mode_vetoes_a_chunk_at_its_end_and_falls_back(tiny_chat):
    doc = [DOCS[1]]
    kw = dict(paraphraser=tiny_chat, guide=_guide(), mode="token", top_k=2, chunk_sentences=1)
    guided = AdversarialParaphrase(**kw).batch(doc)[0]
    r = AdversarialParaphrase(**kw, constraints=[FirstRefused()]).batch(doc)[0]
    info = r.info
    assert info["chunks"] == 2 and info["vetoes"] == {"FirstRefused": 2} and info["fallback_chunks"] == 2
    assert info["llm_queries"] == 4 and info["guide_steps"] == guided.info["guide_steps"]  # decode, then plain
    assert info["vetoed_chunks"] == 0 and r.text != guided.text and apply_edits(r.original, r.edits) == r.text
    assert AdversarialParaphrase(**kw, constraints=[FirstRefused()]).batch(doc)[0].text == r.text  # seeded fallback
    # vetoed twice (nothing passes): the chunks keep their text
    none = AdversarialParaphrase(**kw, constraints=[Forbid(()), Refuse()]).batch(doc)[0]
    assert none.text == DOCS[1] and none.info["vetoed_chunks"] == 2 and none.info["fallback_chunks"] == 0
    assert none.info["vetoes"] == {"Refuse": none.info["vetoed"]} and none.info["vetoed"] >= 2


def test_blend_mixes_a_guided_paraphrase_with_a_word_level_attack(tiny_chat):
    guided = AdversarialParaphrase(paraphraser=tiny_chat, guide=_guide(), mode="rerank", n_candidates=2, seed=1)
    blend = Blend([guided, get("misspelling", rate=0.5, seed=2)], policy="random", seed=7)
    res = blend.batch(DOCS)
    for r in res:
        assert apply_edits(r.original, r.edits) == r.text
    used = [n for r in res for n in r.info["per_sentence"]]
    assert set(used) == {"adversarial_paraphrase", "misspelling"}
    n_guided = used.count("adversarial_paraphrase")
    assert sum(r.info.get("llm_queries", 0) for r in res) == 2 * n_guided  # 2 candidates per guided sentence
    assert sum(r.info.get("detector_queries", 0) for r in res) >= 2 * n_guided
    again = Blend([guided, get("misspelling", rate=0.5, seed=2)], policy="random", seed=7)
    assert [(r.text, r.edits) for r in again.batch(list(reversed(DOCS)))][::-1] == [(r.text, r.edits) for r in res]


def test_the_cost_meter_counts_guide_queries_beside_llm_queries():
    from humanize.benchmarks.reporting.tables import cost_table
    from humanize.benchmarks.runner import INFO_COUNTS

    class Reporting(Scripted):  # reports its usage to the running meters, as every back end does
        def generate(self, requests):
            out = super().generate(requests)
            report_usage(out)
            return out

    attack = AdversarialParaphrase(paraphraser=Reporting(), guide=_guide(), mode="rerank", n_candidates=3,
                                   chunk_sentences=2)
    meter = CostMeter(count_tokens=None)
    with meter.measure(doc_id=0, attack=attack.name) as m:
        r = attack.apply(DOCS[0])
    rec = m.record
    assert rec["guide_queries"] == r.info["guide_queries"] == 6  # 2 chunks x 3 candidates
    assert rec["queries"] == r.info["llm_queries"] == 6  # the generator's, reported by its back end
    assert {"guide_queries", "llm_queries"} <= set(INFO_COUNTS)
    cost = pd.DataFrame({"attack": ["ap", "ap", "typo"], "wall_s": [1.0, 1.0, 0.1], "cpu_s": 1.0,
                         "peak_rss_mb": 1.0, "peak_gpu_mb": np.nan, "n_edits": 1, "guide_queries": [6, 4, 0],
                         "llm_queries": [6, 4, 0]})
    table = cost_table(cost)
    assert table.loc["ap", "guide_queries_per_doc"] == 5 and table.loc["typo", "guide_queries_per_doc"] == 0
    assert table.loc["ap", "llm_queries_per_doc"] == 5
