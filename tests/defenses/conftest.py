import pytest


@pytest.fixture(scope="session")
def demo_texts():
    """Every demo text, human and machine (the issue's "every demo text")."""
    from humanize.benchmarks.data import load_dataset

    return load_dataset("demo")["generation"].tolist()
