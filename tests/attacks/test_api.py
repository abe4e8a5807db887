"""The Attack API: parameters, validation, results, registry."""

import pytest

from humanize import attacks
from humanize.attacks import Attack, AttackResult, Edit

from .conftest import RULE_ATTACKS


@pytest.mark.parametrize("name", RULE_ATTACKS)
def test_registry_builds_every_attack_with_readable_params(name):
    a = attacks.get(name, seed=3)
    assert isinstance(a, Attack)
    assert a.name == name
    params = a.get_params()
    assert params["seed"] == 3
    assert repr(a).startswith(type(a).__name__ + "(")
    assert "seed=3" in repr(a)
    assert eval(repr(a), {type(a).__name__: type(a)}) == a  # repr round-trips for plain params


def test_constructor_arguments_are_stored_as_given():
    a = attacks.Whitespace(rate=0.25, seed=7)
    assert a.rate == 0.25 and a.seed == 7
    assert a.get_params() == {"rate": 0.25, "seed": 7}
    a.set_params(rate=0.5)
    assert a.rate == 0.5


@pytest.mark.parametrize("rate", [-0.1, 1.5, float("nan"), 2])
@pytest.mark.parametrize("name", ["homoglyph", "whitespace", "misspelling", "zero_width_space"])
def test_rate_outside_unit_interval_is_a_value_error_naming_attack_and_value(name, rate):
    with pytest.raises(ValueError) as err:
        attacks.get(name, rate=rate)
    msg = str(err.value)
    assert type(attacks.get(name)).__name__ in msg
    assert repr(rate) in msg


def test_bad_parameter_types_and_names():
    with pytest.raises(TypeError, match=r"^Homoglyph: rate must be a number in \[0, 1\], got '0.5' \(str\)$"):
        attacks.Homoglyph(rate="0.5")
    with pytest.raises(TypeError, match=r"^Homoglyph: seed must be an int seed, got 1.5 \(float\)$"):
        attacks.Homoglyph(seed=1.5)
    with pytest.raises(ValueError, match="no parameter"):
        attacks.get("homoglyph", strength=2)
    with pytest.raises(ValueError, match="no parameter"):
        attacks.Homoglyph().set_params(strength=2)
    with pytest.raises(ValueError, match="unknown attack 'homoglif'.*homoglyph"):
        attacks.get("homoglif")
    with pytest.raises(ValueError, match="^Misspelling: dictionary must be one of 'common', 'wikipedia', got 'klingon'"):
        attacks.Misspelling(dictionary="klingon")
    with pytest.raises(TypeError, match="^Misspelling: lm must be .*, got 3 \\(int\\)$"):
        attacks.Misspelling(lm=3)


@pytest.mark.parametrize("name", RULE_ATTACKS)
@pytest.mark.parametrize("bad", [None, 3, b"bytes", ["a list"]])
def test_non_str_input_is_a_type_error_naming_the_type(name, bad):
    a = attacks.get(name)
    with pytest.raises(TypeError, match=type(bad).__name__):
        a(bad)
    with pytest.raises(TypeError, match=type(bad).__name__):
        a.apply(bad)


def test_batch_rejects_a_single_string():
    with pytest.raises(TypeError, match="single str"):
        attacks.Homoglyph().batch("hello")


def test_result_carries_text_edits_name_and_params():
    r = attacks.Homoglyph(rate=1.0, seed=1).apply("aaa bbb")
    assert isinstance(r, AttackResult)
    assert r.original == "aaa bbb"
    assert r.text == "ааа bbb"  # Cyrillic a
    assert r.edits == [Edit(0, 1, "а"), Edit(1, 2, "а"), Edit(2, 3, "а")]
    assert r.attack == "homoglyph"
    assert r.params == {"rate": 1.0, "seed": 1}
    assert r.changed and r.n_edits == 3
    assert attacks.Homoglyph(rate=1.0, seed=1)("aaa bbb") == r.text


def test_available_lists_registered_names_and_register_adds_one():
    names = attacks.available()
    assert set(attacks.RULE_BASED) <= set(names)
    assert names == sorted(names)

    class Shout(Attack):
        name = "shout_test"

        def __init__(self, rate: float = 1.0, seed: int = 0):
            self.rate = rate
            self.seed = seed
            self._validate()

        def propose(self, text, rng):
            return [Edit(0, len(text), text.upper())] if text else []

    attacks.register("shout_test", Shout)
    try:
        assert attacks.get("shout_test")("hey") == "HEY"
        assert "shout_test" in attacks.available()
    finally:
        attacks.registry._REGISTRY.pop("shout_test")
    with pytest.raises(TypeError):
        attacks.register("bad", object)


def test_check_edits_rejects_malformed_edit_lists():
    with pytest.raises(ValueError, match="out of range"):
        attacks.check_edits("abc", [Edit(2, 5, "x")])
    with pytest.raises(ValueError, match="overlaps"):
        attacks.check_edits("abcdef", [Edit(0, 3, "x"), Edit(2, 4, "y")])
    with pytest.raises(ValueError, match="two insertions"):
        attacks.check_edits("abc", [Edit(1, 1, "x"), Edit(1, 1, "y")])
    attacks.check_edits("abc", [Edit(1, 1, "x"), Edit(1, 2, "y"), Edit(2, 2, "z")])


@pytest.mark.parametrize("name", ["article_deletion", "zero_width_space", "homoglyph", "whitespace"])
def test_results_with_deferred_edits_pickle_and_attacks_run_in_worker_processes(name):
    import multiprocessing
    import pickle

    text = "The cat saw a dog and a bird in the garden, 12 times."
    attack = attacks.get(name, seed=3)
    r = attack.apply(text)
    back = pickle.loads(pickle.dumps(r))
    assert back == r and back.edits == r.edits and back.text == r.text
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        (remote,) = pool.map(attack.apply, [text])
    assert remote.text == r.text and remote.edits == r.edits


def test_output_versions_are_per_attack_and_a_pipeline_carries_its_members():
    assert attacks.Homoglyph().version == attacks.Whitespace().version == "2"
    assert attacks.Pipeline([attacks.Homoglyph(), attacks.Whitespace()]).version == "2+2"


def test_registry_rejects_a_class_whose_name_is_not_its_key():
    class Quiet(Attack):
        name = "quiet_test"

        def __init__(self, rate: float = 1.0, seed: int = 0):
            self.rate = rate
            self.seed = seed

    with pytest.raises(ValueError, match=r"name attribute is 'quiet_test'"):
        attacks.register("loud_test", Quiet)
    assert "loud_test" not in attacks.available()
    # a lazily registered path is checked when it is resolved
    attacks.register("not_homoglyph_test", "humanize.attacks.homoglyph:Homoglyph")
    try:
        with pytest.raises(ValueError, match="name attribute is 'homoglyph'"):
            attacks.get("not_homoglyph_test")
    finally:
        attacks.registry._REGISTRY.pop("not_homoglyph_test")
    with pytest.raises(ValueError, match="module:Class"):
        attacks.register("no_colon_test", "humanize.attacks.homoglyph")


def test_every_registered_class_is_exported_and_keeps_its_key_as_name():
    from humanize import detectors

    for package in (attacks, detectors):
        for key in package.available():
            cls = package.resolve(key)
            assert cls.name == key
            assert getattr(package, cls.__name__) is cls, f"{package.__name__}.{cls.__name__} is not exported"
            assert cls.__name__ in package.__all__
            assert cls.__name__ in dir(package)


def test_a_class_registered_at_run_time_is_exported_by_its_class_name():
    class ShoutLater(Attack):
        name = "shout_later_test"

        def __init__(self, rate: float = 1.0, seed: int = 0):
            self.rate = rate
            self.seed = seed

    attacks.register("shout_later_test", ShoutLater)
    try:
        assert attacks.ShoutLater is ShoutLater
    finally:
        attacks.registry._REGISTRY.pop("shout_later_test")
    with pytest.raises(AttributeError):
        attacks.ShoutLater
