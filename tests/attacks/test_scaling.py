"""Cost stays linear in text length: a 1 MB document is a valid input and not quadratic."""

import pytest

from humanize import attacks

from ..timing import best_time
from .conftest import RULE_ATTACKS


@pytest.fixture(scope="module")
def megabyte_text(demo_machine_texts):
    big = "\n\n".join(demo_machine_texts)
    while len(big) < 1_000_000:
        big += "\n\n" + big
    return big[:1_000_000]


@pytest.mark.parametrize("name", RULE_ATTACKS)
def test_one_megabyte_text_is_linear_not_quadratic(name, megabyte_text):
    a = attacks.get(name, rate=0.5 if name != "zero_width_space" else 1.0)
    small = megabyte_text[:100_000]
    r = a.apply(megabyte_text)
    assert attacks.apply_edits(megabyte_text, r.edits) == r.text
    t_small = best_time(lambda: a.apply(small).edits)
    t_big = best_time(lambda: a.apply(megabyte_text).edits)
    # 10x the text: linear is ~10x, quadratic ~100x. The bound is generous for noisy machines.
    assert t_big < 35 * max(t_small, 1e-3), (name, t_small, t_big)
