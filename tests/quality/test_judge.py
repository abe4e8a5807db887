"""The LLM-judge meaning meter: its prompt, the parsing of answers, batching, notes and determinism,
with a scripted back end (directly, and behind the OpenAI-compatible test server)."""
import json
import math
import pickle

import numpy as np
import pytest

import humanize.quality.judge as judge_module
from humanize.exceptions import EndpointError
from humanize.generation import Generation, Generator
from humanize.generation.endpoint import EndpointChat
from humanize.quality import QualityMeter
from humanize.quality.judge import JUDGE_SCALE, MeaningJudge, judge_prompt, judge_with_notes, parse_score, resolve_judge

from ..generation.chat_server import ChatServer

KEY = "sk-judge-SECRET-77c1"
ORIGINAL = "Blood pressure fell in most patients."


class ScriptedJudge(Generator):
    """Answers ``default``, or the answer of the first ``(substring, answer)`` whose substring is in the rewrite."""

    name = "scripted"

    def __init__(self, default: str = "4", answers: tuple = (), temperature: float = 0.0):
        self.default = default
        self.answers = answers
        self.temperature = temperature
        self.calls = []

    def generate(self, requests):
        self.calls.append(list(requests))
        out = []
        for r in requests:
            rewrite = r.messages[-1][1].split("Rewrite:\n<<<\n", 1)[1].split("\n>>>", 1)[0]
            text = next((a for key, a in self.answers if key in rewrite), self.default)
            out.append(Generation(text, 100, 2, "stop"))
        return out


# -- the prompt and the scale --------------------------------------------------------------------------

def test_the_prompt_holds_both_texts_the_scale_and_the_answer_format():
    gen = ScriptedJudge()
    judge_with_notes([ORIGINAL], ["Blood pressure rose in most patients."], gen)
    (request,), = gen.calls
    (role_s, system), (role_u, user) = request.messages
    assert role_s == "system" and role_u == "user" and "single integer from 1 to 5" in system
    assert "Original:\n<<<\nBlood pressure fell in most patients.\n>>>" in user
    assert "Rewrite:\n<<<\nBlood pressure rose in most patients.\n>>>" in user
    for k, v in JUDGE_SCALE.items():
        assert f"{k} = {v}" in user
    assert user.endswith("Answer with one integer from 1 to 5 and nothing else.")
    assert request.max_new_tokens == 16
    shown = judge_prompt()
    assert shown["system"] == system and set(shown["scale"]) == {1, 2, 3, 4, 5}
    assert shown["template"].format(original=ORIGINAL, rewrite="Blood pressure rose in most patients.") == user
    for v in JUDGE_SCALE.values():                                # the module docstring quotes the same scale
        assert v in " ".join(judge_module.__doc__.split())


@pytest.mark.parametrize("answer, score", [
    ("4", 4), ("Score: 4", 4), ("4/5", 4), ("Score: 4/5.", 4), ("**5**", 5), ("I'd rate it 3 out of 5.", 3),
    ("On a scale of 1 to 5, I give it a 2.", 2), ("Rating: 1", 1), ("The rewrite changes 2 facts. Score: 3", 3),
    (" 5\n\nThe meaning is the same.", 5), ("4.5", None), ("10", None), ("0", None), ("junk", None), ("", None),
    ("Score: 7", None),
])
def test_parsing_takes_the_first_score_from_1_to_5(answer, score):
    assert parse_score(answer) == score


# -- scores, notes, batching, seeds ---------------------------------------------------------------------

def test_scores_notes_and_calls():
    gen = ScriptedJudge(default="5", answers=(("rose", "Score: 1"), ("junk", "I cannot tell."),
                                              ("long", "The two texts")))
    originals = [ORIGINAL, ORIGINAL, ORIGINAL, ORIGINAL, "", ORIGINAL, "Something long here."]
    attacked = ["Blood pressure rose in most patients.", "Most patients saw their blood pressure fall.", ORIGINAL,
                "junk", "text", "  ", "Something long there."]
    cols, notes, name = judge_with_notes(originals, attacked, gen)
    s = cols["judge_score"]
    assert s[0] == 1 and s[1] == 5 and s[2] == 5                 # identical texts: 5 without a call
    assert np.isnan(s[[3, 4, 5, 6]]).all()
    np.testing.assert_allclose(cols["judge_meaning"], (s - 1) / 4, equal_nan=True)
    assert cols["judge_meaning"][0] == 0.0 and cols["judge_meaning"][1] == 1.0
    assert notes[3] == "no score 1-5 in the judge's answer 'I cannot tell.'"
    assert notes[4] == "empty original" and notes[5] == "empty attacked text"
    assert notes[:3] == ["", "", ""] and name == "ScriptedJudge"
    assert sum(len(c) for c in gen.calls) == 4                    # pairs 0, 1, 3, 6: no call for 2, 4, 5
    none, notes, _ = judge_with_notes([], [], gen)
    assert none["judge_score"].shape == (0,) and notes == []


def test_batches_and_seeds_do_not_change_the_scores():
    originals = [f"Sentence number {i} about the trial." for i in range(5)]
    attacked = [f"Sentence no. {i} about the study." for i in range(5)]
    one = ScriptedJudge(answers=(("no. 2", "2"), ("no. 4", "5/5")))
    chunked = ScriptedJudge(answers=one.answers)
    a, _, _ = judge_with_notes(originals, attacked, one)
    b, _, _ = judge_with_notes(originals, attacked, chunked, batch_size=2)
    np.testing.assert_array_equal(a["judge_score"], b["judge_score"])
    assert [len(c) for c in one.calls] == [5] and [len(c) for c in chunked.calls] == [2, 2, 1]
    seeds = [r.seed for r in one.calls[0]]
    assert len(set(seeds)) == 5 and seeds == [r.seed for c in chunked.calls for r in c]
    again = ScriptedJudge()
    judge_with_notes(originals[::-1], attacked[::-1], again)      # a pair's seed does not depend on its position
    assert [r.seed for r in again.calls[0]] == seeds[::-1]
    other = ScriptedJudge()
    judge_with_notes(originals, attacked, other, seed=1)
    assert [r.seed for r in other.calls[0]] != seeds


def test_a_judge_by_name_or_dict_decodes_greedily():
    assert resolve_judge("endpoint:gpt-4o-mini").temperature == 0
    assert resolve_judge("smollm2-135m-instruct").temperature == 0      # builds LocalChat, loads nothing
    assert resolve_judge({"backend": "endpoint", "model": "m"}).temperature == 0
    assert resolve_judge({"backend": "endpoint", "model": "m", "temperature": 0.3}).temperature == 0.3
    mine = ScriptedJudge(temperature=0.9)
    assert resolve_judge(mine) is mine and mine.temperature == 0.9      # a Generator is used as given
    with pytest.raises(TypeError, match="judge must be a chat model name"):
        resolve_judge(5)
    with pytest.raises(ValueError, match="judge must not be empty"):
        resolve_judge(" ")
    with pytest.raises(TypeError, match="judge must be a chat generator"):
        resolve_judge("dipper")
    with pytest.raises(ValueError, match="must not hold api_key") as info:
        resolve_judge({"backend": "endpoint", "model": "m", "api_key": KEY})
    assert KEY not in str(info.value)
    for kw, match in (({"max_new_tokens": 0}, "max_new_tokens"), ({"batch_size": 0}, "batch_size"),
                      ({"seed": "1"}, "seed")):
        with pytest.raises((TypeError, ValueError), match=match):
            MeaningJudge(ScriptedJudge(), **kw)


# -- behind a real chat-completions server -------------------------------------------------------------

def test_an_endpoint_judge_is_greedy_seeded_and_never_shows_its_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with ChatServer(ScriptedJudge(answers=(("rose", "Score: 1/5"), ("junk", "no idea"))), api_key=KEY) as server:
        meter = QualityMeter(meters=["rouge_l", "judge"],
                             judge={"backend": "endpoint", "model": "test-model", "base_url": server.url})
        frame = meter.score([ORIGINAL, ORIGINAL], ["Blood pressure rose in most patients.", "junk"])
        assert frame["judge_score"].iloc[0] == 1 and math.isnan(frame["judge_score"].iloc[1])
        assert frame["judge_model"].iloc[0] == f"test-model @ {server.url}"
        assert "judge: no score 1-5 in the judge's answer 'no idea'" in frame["note"].iloc[1]
        sent = [e for e in server.log if e.get("messages")]
        assert [e["temperature"] for e in sent] == [0, 0] and all(isinstance(e["seed"], int) for e in sent)
        assert all(e["authorization"] == f"Bearer {KEY}" for e in sent)
        shown = [frame.to_json(), repr(meter), json.dumps(meter.provenance()), meter.fingerprint()]
        assert not any(KEY in s for s in shown) and KEY.encode() not in pickle.dumps(meter)
        wrong = "sk-wrong-JUDGE-0099"
        bad = QualityMeter(meters=["judge"], judge=EndpointChat(model="test-model", base_url=server.url,
                                                                api_key=wrong, temperature=0, backoff=0.01))
        with pytest.raises(EndpointError) as info:
            bad.score([ORIGINAL], ["Blood pressure rose."])
        assert not any(wrong in s for s in (repr(bad), json.dumps(bad.provenance()), bad.fingerprint()))
    assert info.value.status == 401 and wrong not in str(info.value)


# -- through the QualityMeter ---------------------------------------------------------------------------

def test_quality_meter_judge_is_opt_in_and_in_the_fingerprint():
    with pytest.raises(ValueError, match="meters names 'judge' but judge is None"):
        QualityMeter(meters=["judge"])
    frame = QualityMeter(meters=["judge"], judge=ScriptedJudge(default="3")).score([ORIGINAL], ["Changed text."])
    assert list(frame.columns) == ["judge_score", "judge_meaning", "judge_model", "note"]
    assert frame.loc[0, "judge_score"] == 3 and frame.loc[0, "judge_meaning"] == 0.5
    fp = [QualityMeter(meters=["judge"], judge=j).fingerprint()
          for j in (ScriptedJudge(), ScriptedJudge(default="5"), "endpoint:a", "endpoint:b")]
    assert len(set(fp)) == 4
    assert QualityMeter(meters=["judge"], judge="endpoint:a").fingerprint() == \
        QualityMeter(meters=["judge"], judge={"backend": "endpoint", "model": "a"}).fingerprint()
    assert QualityMeter(meters=["judge"], judge=MeaningJudge("endpoint:a", max_new_tokens=4)).fingerprint() != fp[2]
    idle = [QualityMeter(meters=["rouge_l"], judge=j).fingerprint() for j in (None, "endpoint:a", ScriptedJudge())]
    assert len(set(idle)) == 1                                      # a judge that does not run is not in it
    with pytest.raises(TypeError, match="judge must be a chat model name"):
        QualityMeter(judge=5)
