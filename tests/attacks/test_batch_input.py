"""Attack.batch: a clear TypeError naming the attack and what it expects."""

import pytest

from humanize import attacks

from .conftest import RULE_ATTACKS


@pytest.mark.parametrize("name", RULE_ATTACKS)
@pytest.mark.parametrize("bad, what", [(None, "NoneType"), (5, "int"), (3.5, "float"), (object(), "object")])
def test_batch_of_a_non_sequence_names_the_attack_and_the_type(name, bad, what):
    attack = attacks.get(name)
    cls = type(attack).__name__
    with pytest.raises(TypeError, match=rf"^{cls}\.batch expects a sequence of str \(one per document\), got {what}$"):
        attack.batch(bad)


def test_batch_of_one_string_says_so():
    with pytest.raises(TypeError, match=r"^Homoglyph\.batch expects a sequence of str \(one per document\), "
                                        r"got a single str: wrap it in a list$"):
        attacks.Homoglyph().batch("hello")


@pytest.mark.parametrize("bad", [b"hello", bytearray(b"hello"), {"a": 1}, {"a"}])
def test_batch_of_bytes_or_a_mapping_or_a_set_is_refused(bad):
    with pytest.raises(TypeError, match=rf"^Homoglyph\.batch expects a sequence of str \(one per document\), "
                                        rf"got {type(bad).__name__}$"):
        attacks.Homoglyph().batch(bad)


@pytest.mark.parametrize("items, index, what", [
    (["a", None], 1, "NoneType"),
    ([3, "b"], 0, "int"),
    (("a", "b", b"c"), 2, "bytes"),
    (["a", "b", "c", ["d"]], 3, "list"),
])
def test_a_non_str_item_is_named_by_its_index(items, index, what):
    with pytest.raises(TypeError, match=rf"^Whitespace\.batch expects a sequence of str \(one per document\): item {index} is {what}, not str$"):
        attacks.Whitespace().batch(items)


def test_a_bad_item_is_reported_before_any_work():
    calls = []

    class Counting(attacks.Whitespace):
        def _run(self, text):
            calls.append(text)
            return super()._run(text)

    with pytest.raises(TypeError, match="item 2"):
        Counting().batch(["a b", "c d", 7])
    assert calls == []


def test_any_iterable_of_str_is_accepted():
    import pandas as pd

    a = attacks.Whitespace(rate=1.0, seed=1)
    texts = ["a b c", "d e"]
    expected = a.batch(texts)
    assert a.batch(tuple(texts)) == expected
    assert a.batch(iter(texts)) == expected
    assert a.batch(t for t in texts) == expected
    assert a.batch(pd.Series(texts)) == expected
    assert a.batch([]) == []
