"""An attack output has one shape in the runner whether it was read from the store or just computed
(issue #21), and a text has one content hash (humanize.text.text_hash)."""
import numpy as np

from humanize import attacks
from humanize.attacks import AttackResult
from humanize.benchmarks.runner import jobs
from humanize.benchmarks.runner.store import ResultsStore, attack_record, computed_attack_record
from humanize.text import text_digest, text_hash


class _Odd(attacks.Homoglyph):
    """Info values JSON has no exact form for (a tuple, a numpy int, a set): stored as JSON gives them back."""

    def apply(self, text):
        r = super().apply(text)
        return AttackResult(original=r.original, text=r.text, attack=r.attack, params=r.params, _edits=r.edits,
                            info={"pair": (1, 2), "count": np.int64(3), "tags": {"a"}})


def test_a_computed_row_has_the_shape_and_types_of_the_same_row_read_back(tmp_path):
    texts = ["The owl agreed with the cat.", "Nothing here"]
    key = "odd/k"
    rows = jobs.attack_store_rows(key, _Odd(rate=0.5, seed=1), texts)
    computed = {text_hash(t): computed_attack_record(key, text_hash(t), r) for t, r in zip(texts, rows)}
    with ResultsStore(tmp_path / "s.sqlite") as store:
        store.put_attack_outputs(key, [{**r, "input_hash": text_hash(t)} for t, r in zip(texts, rows)])
        cached = store.attack_outputs(key, list(computed))
    assert cached == computed
    for h in computed:
        assert {k: type(v) for k, v in cached[h].items()} == {k: type(v) for k, v in computed[h].items()}
        assert computed[h]["n_edits"] == len(computed[h]["edits"]) and isinstance(computed[h]["edits"], list)
    assert computed[text_hash(texts[0])]["info"] == {"pair": [1, 2], "count": repr(np.int64(3)),
                                                       "tags": "{'a'}"}
    assert attack_record(("x", "[[0, 1, \"y\"]]", "{}", *[None] * 8))["n_edits"] == 1


def test_one_text_hash():
    from humanize.benchmarks.audits.reliance import _text_key
    from humanize.models.scoring import text_key

    text = "caf\u00e9 \ud800"  # a lone surrogate is hashed, not refused
    assert text_hash(text) == text_digest(text).hex() == text_key(text).hex()
    assert _text_key(text) == text_hash(text, size=12) == text_digest(text, 12).hex() and len(text_hash(text)) == 32
