"""Cost stays linear in text length: a 1 MB document is a valid input and not quadratic."""

import pytest

from humanize import attacks

from ..work import assert_linear
from .conftest import RULE_ATTACKS


@pytest.fixture(scope="module")
def megabyte_text(demo_machine_texts):
    big = "\n\n".join(demo_machine_texts)
    while len(big) < 1_000_000:
        big += "\n\n" + big
    return big[:1_000_000]


@pytest.fixture(scope="module")
def block(demo_machine_texts):
    """3,000 characters of the demo set's machine documents from the 34th on: every attack has sites in them
    (the 36th is the first with an American spelling)."""
    return "\n\n".join(demo_machine_texts[33:39])[:3_000]


@pytest.mark.parametrize("name", RULE_ATTACKS)
def test_one_megabyte_text_is_linear_not_quadratic(name, megabyte_text, block):
    a = attacks.get(name, rate=0.5 if name != "zero_width_space" else 1.0)
    r = a.apply(megabyte_text)
    assert attacks.apply_edits(megabyte_text, r.edits) == r.text
    assert a.apply(block).edits  # the counted runs go through the attack's sites
    # The work counted on the block repeated 1, 2 and 8 times: the cost of each added block stays the
    # same if the cost is linear, grows if quadratic (tests/work.py; timings: benchmarks/bench_scaling.py).
    assert_linear(lambda k: a.apply("\n\n".join([block] * k)).edits)
