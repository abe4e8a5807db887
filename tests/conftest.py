"""Session fixtures shared by every test folder: each packaged model loads once per test process."""
import pytest


@pytest.fixture(scope="session")
def smollm():
    from humanize.models import load_causal_lm

    return load_causal_lm("smollm2-135m-instruct")


@pytest.fixture(scope="session")
def qwen():
    """The default rewriting model (humanize.models.DEFAULT_CHAT_LM, Qwen2.5-Coder-0.5B-Instruct)."""
    from humanize.models import DEFAULT_CHAT_LM, load_causal_lm

    return load_causal_lm(DEFAULT_CHAT_LM)


@pytest.fixture(scope="session")
def minilm():
    from humanize.models import load_sentence_encoder

    return load_sentence_encoder("all-minilm-l6-v2")
