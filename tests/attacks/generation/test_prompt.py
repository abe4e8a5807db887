"""Prompt / QPA prompt attack (TH-Bench §2.2, App. G; PromptAttack's three-part prompt)."""
import pytest

from humanize.attacks import apply_edits, check_edits
from humanize.attacks.generation.prompt import (GUIDANCE, LOCAL_CHUNK_SENTENCES, QPA_INSTRUCTION, Prompt, QPAPrompt,
                                                parse_answer)
from humanize.generation import Generation, Generator, check_requests

DOCS = ["The committee met on Tuesday to discuss the budget. Members raised concerns about costs.",
        "Rain is expected later this week."]
LONG = "One sentence here. Two sentences here.\n\nThree is here! Four is there? Five. Six.  Seven ends it. "


class Scripted(Generator):
    """A real (non-model) chat back end for the plumbing tests: answers from a fixed list, in order."""

    name = "scripted"

    def __init__(self, answers=("",)):
        self.answers = answers

    def generate(self, requests):
        reqs = check_requests("Scripted", requests)
        self.__dict__.setdefault("seen", []).append(reqs)
        return [Generation(self.answers[i % len(self.answers)], 10, 3) for i in range(len(reqs))]


def exact(r):
    check_edits(r.original, r.edits)
    assert apply_edits(r.original, r.edits) == r.text


# -- the prompt -------------------------------------------------------------------
def test_prompt_has_the_three_parts_and_the_label():
    p = Prompt(llm=Scripted())
    parts = p.prompt_parts(DOCS[1])
    assert list(parts) == ["original_input", "attack_objective", "attack_guidance"]
    assert DOCS[1] in parts["original_input"] and "machine-generated" in parts["original_input"]
    assert "human-written" in parts["attack_objective"] and "semantic meaning" in parts["attack_objective"]
    assert "Paraphrase the text." in parts["attack_guidance"] and "Only output the new text" in parts["attack_guidance"]
    prompt = p.build_prompt(DOCS[1])
    assert prompt.index(parts["original_input"]) < prompt.index(parts["attack_objective"]) \
        < prompt.index(parts["attack_guidance"])
    for name, (code, instruction) in GUIDANCE.items():  # every PromptAttack instruction, by name or code
        text = instruction.format(unit="text")
        assert text in Prompt(llm=Scripted(), guidance=name).build_prompt("x")
        assert Prompt(llm=Scripted(), guidance=code).build_prompt("x") == Prompt(llm=Scripted(),
                                                                                  guidance=name).build_prompt("x")
    assert len({c for c, _ in GUIDANCE.values()}) == 9


def test_qpa_adds_the_quality_instruction():
    plain, qpa = Prompt(llm=Scripted()).build_prompt(DOCS[0]), QPAPrompt(llm=Scripted()).build_prompt(DOCS[0])
    quality = QPA_INSTRUCTION.format(unit="text")
    assert quality not in plain and quality in qpa and "fluent" in qpa
    assert Prompt(llm=Scripted(), qpa=True).build_prompt(DOCS[0]) == qpa
    assert qpa.replace("\n3. " + quality, "") == plain  # the only difference
    assert QPAPrompt.name == "qpa_prompt" and QPAPrompt().qpa is True and QPAPrompt(qpa=False).qpa is False
    assert QPAPrompt().get_params()["llm"] == Prompt().get_params()["llm"] == "qwen2.5-coder-0.5b-instruct"


def test_guidance_drawn_per_document_with_the_seed():
    docs = [f"Document number {i} talks about topic {i * 7}." for i in range(30)]
    p = Prompt(llm=Scripted(), guidance="random", seed=1)
    drawn = [p.document_guidance(d) for d in docs]
    assert drawn == [p.document_guidance(d) for d in docs] and len(set(drawn)) >= 4
    assert drawn != [Prompt(llm=Scripted(), guidance="random", seed=2).document_guidance(d) for d in docs]
    pool = Prompt(llm=Scripted(), guidance=["typos", "S3"], seed=1)
    assert {pool.document_guidance(d) for d in docs} == {"typos", "syntax"}
    results = pool.batch(docs[:4])
    assert [r.info["guidance"] for r in results] == [pool.document_guidance(d) for d in docs[:4]]


# -- chunks and answers -----------------------------------------------------------
def test_chunk_rule_and_reassembly():
    assert Prompt(llm="endpoint:some-model").chunk_size() is None  # endpoint: whole document
    assert Prompt().chunk_size() == LOCAL_CHUNK_SENTENCES == 3  # a local model: runs of 3 sentences
    assert Prompt(llm="endpoint:m", chunk_sentences=2).chunk_size() == 2
    spans = Prompt.chunks(LONG, 3)
    assert len(spans) == 3
    assert LONG[spans[0][0]:spans[0][1]] == "One sentence here. Two sentences here.\n\nThree is here!"
    assert Prompt.chunks(LONG, None) == [(0, len(LONG) - 1)] and Prompt.chunks("   ", 3) == []
    gen = Scripted(["NEW"])
    r = Prompt(llm=gen, chunk_sentences=3).apply(LONG)
    exact(r)
    assert r.text == "NEW NEW  NEW " and r.info["chunks"] == 3 and r.info["llm_queries"] == 3
    assert r.info["llm_tokens_in"] == 30 and r.info["llm_tokens_out"] == 9
    assert r.text == Prompt(llm=gen, chunk_sentences=3).apply(LONG).text
    # all chunks of all documents in one generate() call
    gen2 = Scripted(["x."])
    Prompt(llm=gen2, chunk_sentences=1).batch([LONG, "", DOCS[0]])
    assert len(gen2.seen) == 1 and len(gen2.seen[0]) == 7 + 2


def test_empty_answers_keep_the_chunk_and_blank_docs_skip_the_model():
    gen = Scripted(["", "Sure!"])
    rs = Prompt(llm=gen, chunk_sentences=2).batch(["", "  \n", DOCS[0] + " " + DOCS[1]])
    assert [r.text for r in rs] == ["", "  \n", DOCS[0] + " " + DOCS[1]]
    assert rs[2].info["kept_chunks"] == 2 and rs[2].edits == []
    assert rs[0].info == {"skipped": "blank", "unchanged": "blank document"}
    assert rs[2].info["bad_answers"] == {"empty": 2} and rs[2].info["unchanged"] == "every answer rejected (empty: 2)"
    assert len(gen.seen) == 1 and len(gen.seen[0]) == 2


TRICKY = ["日本語の文です。次の文。", "Emoji 😀👍🏽 party. 🎉 Next one!", "x" * 5000,
          "Lone \ud800 surrogate. Next sentence \udfff here.", "a", " Привет, мир! "]


@pytest.mark.parametrize("text", TRICKY)
def test_any_text_gives_exact_edits(text):
    r = Prompt(llm=Scripted(["Rewritten, with \u00e9 and emoji \U0001f600."]), chunk_sentences=1).apply(text)
    exact(r)
    assert r.info["chunks"] >= 1 and r.text.strip().startswith("Rewritten")


@pytest.mark.parametrize("answer, expected", [
    ("Sure! Here is the new text:\n\n\"Showers will come.\"", "Showers will come."),
    ("New text: Showers will come.", "Showers will come."),
    ("\u201cShowers will come.\u201d", "Showers will come."),
    ("The new text can be rewritten as \"Showers will come later.\"", "Showers will come later."),
    ('Original: "Rain is expected later this week."\n\nNew: "Showers soon, friends"', "Showers soon, friends"),
    ("Showers will come.\n\nNote: I changed two words.", "Showers will come."),
    ("Okay, showers will come later this week.", "Okay, showers will come later this week."),
    ("Certainly!", ""),
    ("New data: the economy grew.", "New data: the economy grew."),
    ("Here's the revised version:\nShowers will come.", "Showers will come."),
    ("Output: Showers will come.", "Showers will come."),
    ("   ", ""),
])
def test_parse_answer(answer, expected):
    assert parse_answer(answer, "Rain is expected later this week.") == expected


def test_quoted_originals_are_not_cut_to_a_quote():
    original = 'He said "we will win the match" and left.'
    assert parse_answer('He said "we shall win the match" and went.', original) == \
        'He said "we shall win the match" and went.'


# -- parameters ---------------------------------------------------------------------
@pytest.mark.parametrize("kwargs, err, match", [
    ({"guidance": "shout"}, ValueError, r"^Prompt: guidance must be one of 'typos'.*got 'shout' \(str\)$"),
    ({"guidance": []}, ValueError, r"^Prompt: guidance must be a str or a non-empty list .*got \[\] \(list\)$"),
    ({"guidance": ["typos", 3]}, TypeError, r"guidance must be a str or a non-empty list or tuple of str, "
                                            r"got \['typos', 3\] \(list\)"),
    ({"guidance": ["typos", "shout"]}, ValueError, r"guidance must be one of .*got 'shout' \(str\)"),
    ({"guidance": 3}, TypeError, r"guidance must be .*got 3 \(int\)"),
    ({"qpa": "yes"}, TypeError, "qpa"),
    ({"chunk_sentences": 0}, ValueError, "chunk_sentences"),
    ({"chunk_sentences": True}, TypeError, "chunk_sentences"),
    ({"llm": 3}, TypeError, "llm"),
    ({"llm": "  "}, ValueError, "llm"),
    ({"seed": "1"}, TypeError, "seed"),
])
def test_bad_params(kwargs, err, match):
    with pytest.raises(err, match=match):
        Prompt(**kwargs)


def test_seq2seq_generator_rejected_and_bad_input():
    with pytest.raises(TypeError, match="chat generator"):
        Prompt(llm="dipper").apply("Some text.")
    with pytest.raises(TypeError):
        Prompt(llm=Scripted()).apply(None)
    with pytest.raises(TypeError):
        Prompt(llm=Scripted()).batch("one string")


def test_fingerprint_follows_the_generator():
    a = Prompt(llm={"backend": "local", "max_new_tokens": 8}).fingerprint()
    assert a == Prompt(llm={"backend": "local", "max_new_tokens": 8}).fingerprint()
    assert a != Prompt(llm={"backend": "local", "max_new_tokens": 9}).fingerprint()
    assert a != Prompt(llm={"backend": "local", "max_new_tokens": 8}, qpa=True).fingerprint()


# -- a real generation --------------------------------------------------------------
@pytest.fixture(scope="module")
def small_chat(smollm):
    from humanize.generation.local import LocalChat

    return LocalChat(model=smollm, max_new_tokens=8)


def test_real_generation_exact_and_batch_independent(small_chat):
    p = Prompt(llm=small_chat, seed=3)
    rs = p.batch(DOCS)
    for d, r in zip(DOCS, rs):
        exact(r)
        assert r.text.strip() and r.info["chunks"] == 1 and r.info["llm_queries"] == 1
        assert 0 < r.info["llm_tokens_out"] <= 8 and r.info["llm_tokens_in"] > len(d.split())
    assert p.apply(DOCS[1]).text == rs[1].text  # same output alone or in a batch
    assert [r.text for r in p.batch([DOCS[1], DOCS[0]])] == [rs[1].text, rs[0].text]
    q = QPAPrompt(llm=small_chat, seed=3).apply(DOCS[1])
    exact(q)
    assert q.info["guidance"] == "paraphrase"
