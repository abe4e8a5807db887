"""Session fixtures shared by every test folder: each packaged model loads once per test process."""
import pytest


@pytest.fixture(scope="session")
def smollm():
    from humanize.models import load_causal_lm

    return load_causal_lm("smollm2-135m-instruct")


@pytest.fixture(scope="session")
def minilm():
    from humanize.models import load_sentence_encoder

    return load_sentence_encoder("all-minilm-l6-v2")
