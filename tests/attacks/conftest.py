import pytest

from humanize import attacks


@pytest.fixture(scope="session")
def demo_machine_texts():
    from humanize.benchmarks.data import load_demo

    return load_demo().query("label == 'machine'")["generation"].tolist()


#: Every rule attack at its default parameters (misspelling without a model).
RULE_ATTACKS = list(attacks.RULE_BASED) + ["strip_format"]

TRICKY_TEXTS = [
    "",
    " ",
    "   \n\t  \n",
    "a",
    "The",
    "日本語の文です。次の文。",
    "Привет, мир! Это тест 123.",
    "مرحبا بالعالم ١٢٣ و ٤٥٦",
    "Emoji 😀👍🏽 party 🎉 at 10.30 — the color is grey… “quoted”",
    "\u200bT\u200bh\u200be\u200b \u200bc\u200ba\u200bt",
    "Τhе соlоr оf thе fаvоrіtе",  # already homoglyph-attacked
    "A a an the THE The. An apple. a\n\nthe  end ",
    "Ünïcødé straße ß İstanbul ǅ ﬁ",
    "x" * 5000,
    "Lone \ud800 surrogate. Next sentence \udfff here.",
]
