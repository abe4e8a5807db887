"""What a rewriter says (issue #22): answers that are no rewrite keep their chunk, and every attack that
leaves a document unchanged says why in ``info["unchanged"]``. Scripted generators and rule-based fakes only."""
import pytest

from humanize.attacks import apply_edits
from humanize.attacks.generation.answers import classify_answer
from humanize.attacks.generation.paraphrase import DEFAULT_INSTRUCTION, Paraphrase, clean_answer
from humanize.attacks.generation.prompt import Prompt
from humanize.generation import Generation, Generator, check_requests

DOC = "The committee met on Tuesday. Members raised concerns about costs."
REFUSAL = "I'm sorry, but I can't help with that."


class Scripted(Generator):
    """A chat back end answering ``answer(request)``; it records every batch of requests it got."""

    name = "scripted_answers"

    def __init__(self, answer):
        self.answer = answer

    def generate(self, requests):
        reqs = check_requests("Scripted", requests)
        self.__dict__.setdefault("seen", []).append(reqs)
        return [Generation(self.answer(r), 10, 3) for r in reqs]


def _user(request):
    return request.messages[-1][1]


def _classify(answer, chunk="The committee met on Tuesday."):
    prompt = f"{DEFAULT_INSTRUCTION}\n\n{chunk}"
    return classify_answer(answer, clean_answer(answer, chunk), chunk, prompt)


@pytest.mark.parametrize("answer, kind", [
    ("Here is the paraphrased text:", "announcement"),
    ("Sure! Here's the rewritten version.", "announcement"),
    ("Certainly! Here it is:", "announcement"),
    ("Sure!", "announcement"),
    ("   ", "empty"),
    (REFUSAL, "refusal"),
    ("I cannot rewrite this text.", "refusal"),
    ("As an AI language model, I must decline.", "refusal"),
    (DEFAULT_INSTRUCTION + "\n\nThe committee met on Tuesday.", "echo"),
    ("Paraphrase the following text. The panel met on Tuesday.", "echo"),
    # near misses: real text that starts like an announcement or a refusal
    ("Sure enough, the river rose by Tuesday.", "text"),
    ("Here is the revised budget.", "text"),
    ("Here is a cat that sat.", "text"),
    ("Sorry, I can't make it on Tuesday.", "text"),
    ("Unfortunately, the meeting could not take place.", "text"),
    ("Sure! Here is the paraphrased text:\n\nThe panel convened on Tuesday.", "text"),
    ("The committee met on Tuesday.", "text"),  # a copy is text (the rewriter's choice)
])
def test_classify_answer(answer, kind):
    assert _classify(answer) == kind


def test_a_chunk_that_apologises_may_be_rewritten_as_an_apology():
    chunk = "I'm sorry, but I cannot attend the meeting."
    assert _classify("I'm sorry, but I can't help with the meeting.", chunk) == "text"
    assert _classify("I'm sorry, but I can't help with the meeting.") == "refusal"


def test_an_announcement_alone_keeps_the_chunk_and_is_counted():
    gen = Scripted(lambda r: "Here is the paraphrased text:")
    r = Paraphrase(gen, chunk_sentences=1).apply(DOC)
    assert r.text == DOC and r.edits == []
    assert r.info["bad_answers"] == {"announcement": 2} and r.info["kept_chunks"] == 2
    assert r.info["unchanged"] == "every answer rejected (announcement: 2)" and r.info["retries"] == 0


def test_a_refusal_keeps_its_chunk_and_the_other_chunk_is_rewritten():
    gen = Scripted(lambda r: REFUSAL if "Tuesday" in _user(r) else "Members worried about the costs.")
    r = Prompt(llm=gen, chunk_sentences=1).apply(DOC)
    assert r.text == "The committee met on Tuesday. Members worried about the costs."
    assert apply_edits(DOC, r.edits) == r.text
    assert r.info["bad_answers"] == {"refusal": 1} and r.info["kept_chunks"] == 1 and "unchanged" not in r.info


def test_an_echo_of_the_prompt_keeps_the_chunk():
    gen = Scripted(lambda r: _user(r))  # the prompt, instruction and chunk, said back
    r = Paraphrase(gen, chunk_sentences=2).apply(DOC)
    assert r.text == DOC and r.info["bad_answers"] == {"echo": 1}


def test_a_near_miss_is_the_rewrite():
    gen = Scripted(lambda r: "Sure enough, the committee met on Tuesday and members worried about costs.")
    r = Paraphrase(gen, chunk_sentences=2).apply(DOC)
    assert r.text.startswith("Sure enough") and r.info["bad_answers"] == {} and "unchanged" not in r.info


def test_retry_asks_again_with_the_next_seed_deterministically():
    docs = [DOC, "Rain is expected later this week. Temperatures will drop by Friday."]
    probe = Prompt(llm=Scripted(lambda r: "x"), chunk_sentences=1, seed=3)
    first = {probe.request_seed(d, j) for d in docs for j in range(2)}
    # refuses every first attempt; answers the retries with their seed, so the output shows which seed asked
    gen = Scripted(lambda r: REFUSAL if r.seed in first else f"Fresh wording {r.seed % 1000}.")
    attack = Prompt(llm=gen, chunk_sentences=1, seed=3, on_bad_answer="retry", max_retries=2)
    out = attack.batch(docs)
    for d, r in zip(docs, out):
        seeds = [attack.request_seed(d, j, attempt=1) for j in range(2)]
        assert r.text == f"Fresh wording {seeds[0] % 1000}. Fresh wording {seeds[1] % 1000}."
        assert r.info["retries"] == 2 and r.info["bad_answers"] == {"refusal": 2} and r.info["llm_queries"] == 4
    assert len(gen.seen) == 2  # one generate call per round, every document's chunks together
    assert [r.text for r in attack.batch(docs[::-1])] == [r.text for r in out][::-1]
    assert attack.apply(docs[1]).text == out[1].text
    # "keep" (the default) does not ask again
    kept = Prompt(llm=gen, chunk_sentences=1, seed=3).apply(DOC)
    assert kept.text == DOC and kept.info["retries"] == 0


def test_retries_are_bounded():
    gen = Scripted(lambda r: REFUSAL)
    r = Paraphrase(gen, chunk_sentences=1, on_bad_answer="retry", max_retries=2).apply(DOC)
    assert r.text == DOC and r.info["llm_queries"] == 6 and r.info["retries"] == 4
    assert r.info["unchanged"] == "every answer rejected (refusal: 6)"
    with pytest.raises(ValueError, match="on_bad_answer"):
        Paraphrase(gen, on_bad_answer="drop")
    with pytest.raises(ValueError, match="max_retries"):
        Prompt(llm=gen, max_retries=0)


def test_toblend_short_text_says_why():
    from humanize.attacks.generation.toblend import TOBLEND

    r = TOBLEND(prefix_words=30).apply("Only a few words here.")  # no model loads for a short text
    assert r.text == "Only a few words here." and r.info["unchanged"].startswith("short: 5 words <= prefix_words=30")


def test_rule_attacks_say_why_only_when_nothing_changed():
    from humanize.attacks.number_swap import NumberSwap

    assert NumberSwap(rate=1.0).apply("No digits in this text.").info["unchanged"] == "no sites"
    assert NumberSwap(rate=0.0).apply("It cost 12 dollars.").info["unchanged"] == "no site drawn at rate=0"
    changed = NumberSwap(rate=1.0).apply("It cost 12 dollars.")
    assert changed.changed and "unchanged" not in changed.info


def test_recursion_says_every_answer_was_rejected():
    from humanize.attacks.generation.paraphrase import Recursion

    para = Paraphrase(Scripted(lambda r: REFUSAL), chunk_sentences=2)
    r = Recursion(para, depth=2).apply(DOC)
    assert r.text == DOC and r.info["unchanged"] == "every answer rejected (refusal: 2)"
    assert [s["bad_answers"] for s in r.info["steps"]] == [{"refusal": 1}, {"refusal": 1}]
