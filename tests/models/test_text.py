"""The door into model code (humanize.models.text): surrogate repair and token prefixes."""
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from humanize.models.text import TextRepairWarning, model_input, repair_text, token_prefix

from ..text_strategies import BAD, any_text, mixed_scripts, repaired


@given(text=any_text)
@settings(max_examples=100, deadline=None)
def test_repair_is_one_for_one_and_only_touches_surrogates(text):
    clean, changed = repair_text(text)
    assert clean == repaired(text) and len(clean) == len(text)
    assert changed == (clean != text)
    clean.encode("utf-8")                                      # always encodable afterwards


def test_model_input_counts_and_warns_once():
    with pytest.warns(TextRepairWarning, match=r"unit test: 2 of 3 text\(s\)") as seen:
        out, n = model_input([BAD, "fine", "\udfff"], where="unit test")
    assert out == [repaired(BAD), "fine", "\ufffd"] and n == 2 and len(seen) == 1
    assert seen[0].filename == __file__                         # points at the caller, not the library
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert model_input(["fine", ""]) == (["fine", ""], 0)


@pytest.fixture(scope="module")
def tokenizers(smollm, minilm):
    return {"smollm": smollm.tokenizer, "minilm": minilm.model.tokenizer}


@pytest.mark.slow
@pytest.mark.parametrize("name", ["smollm", "minilm"])
@given(parts=st.lists(mixed_scripts, min_size=1, max_size=4), reps=st.integers(1, 200), n=st.integers(1, 300))
@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
def test_token_prefix_keeps_the_first_tokens(tokenizers, name, parts, reps, n):
    tok = tokenizers[name]
    text = " ".join(parts) * reps

    def ids(s):
        return tok(s, add_special_tokens=False)["input_ids"]

    prefix = token_prefix(text, n, lambda s: len(ids(s)))
    assert text.startswith(prefix)
    full, head = ids(text), ids(prefix)
    assert head[: n + 1] == full[: n + 1]
    if prefix != text:
        assert len(head) > n
