import pytest


@pytest.fixture(scope="session")
def short_texts():
    """The first three sentences of a few demo machine texts (cheap for the LM)."""
    import blingfire

    from humanize.benchmarks.data import load_demo

    texts = load_demo().query("label == 'machine'")["generation"].tolist()
    return [" ".join(blingfire.text_to_sentences(t).split("\n")[:3]) for t in texts[:3]]


@pytest.fixture(scope="session")
def synonym(smollm):
    from humanize.attacks.wordsub import Synonym

    return Synonym(lm=smollm)


@pytest.fixture(scope="session")
def synonym_results(synonym, short_texts):
    return synonym.batch(short_texts)
