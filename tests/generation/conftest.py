"""Session fixtures of the generation tests (models come from tests/conftest.py, loaded once per process)."""
import pytest


@pytest.fixture(scope="session")
def local_chat(smollm):
    """SmolLM2-135M-Instruct as a greedy :class:`LocalChat` (16 new tokens), built once per session."""
    from humanize.generation.local import LocalChat

    return LocalChat(smollm, temperature=0, max_new_tokens=16)
