"""Attack.apply caches the parameters and the digest head per instance; changing a parameter drops them."""

from humanize import attacks

TEXT = "The quick brown fox jumps over the lazy dog, and then the dog sleeps in the sun."


def test_setting_an_attribute_or_set_params_is_seen_by_the_next_document():
    a = attacks.Whitespace(rate=0.2, seed=1)
    assert a.apply(TEXT).params == {"rate": 0.2, "seed": 1}
    a.rate = 0.9
    r = a.apply(TEXT)
    assert r.params == {"rate": 0.9, "seed": 1}
    assert r == attacks.Whitespace(rate=0.9, seed=1).apply(TEXT)
    a.seed = 2  # the seed names the per-document stream
    assert a.apply(TEXT) == attacks.Whitespace(rate=0.9, seed=2).apply(TEXT)
    a.set_params(seed=3, rate=0.5)
    assert a.apply(TEXT) == attacks.Whitespace(rate=0.5, seed=3).apply(TEXT)
    assert a.random(TEXT).getstate() == attacks.document_random(3, "whitespace", TEXT).getstate()


def test_each_result_has_its_own_params_dict():
    a = attacks.Homoglyph(seed=4)
    first = a.apply(TEXT)
    first.params["seed"] = 99
    assert a.apply(TEXT).params == {"rate": 1.0, "seed": 4}


def test_nested_parameters_are_read_afresh():
    # a pipeline's parameters hold its member attacks, which can change behind its back
    member = attacks.Whitespace(rate=0.2)
    pipe = attacks.Pipeline([member])
    pipe.apply(TEXT)
    member.rate = 0.9
    assert pipe.apply(TEXT).params["whitespace__rate"] == 0.9
