import mmap
import time
import types

import numpy as np
import pytest

from humanize.cost import CostMeter, bucket_documents, length_sweep, report
from humanize.cost.tokens import gpt2_spans


def test_sees_a_known_sleep():
    meter = CostMeter()
    with meter.measure(doc_id="d1", attack="sleepy") as m:
        time.sleep(0.25)
        m.add(queries=3)
    rec = meter.records[0]
    assert rec["attack"] == "sleepy" and rec["doc_id"] == "d1"
    assert rec["wall_s"] >= 0.25 and rec["cpu_s"] < 0.2        # sleeping burns no CPU
    assert rec["queries"] == 3 and rec["error"] == ""


def touch(mib):
    """Allocate and touch ``mib`` MiB of fresh anonymous memory (not recycled malloc'd pages)."""
    buf = mmap.mmap(-1, mib * 1024 * 1024)
    np.frombuffer(buf, dtype=np.uint8)[:] = 1
    buf.close()


def test_sees_a_known_allocation():
    meter = CostMeter()
    with meter.measure(doc_id=0):
        touch(256)
    with meter.measure(doc_id=1):
        pass
    big, small = meter.records
    assert big["rss_delta_mb"] > 200 and big["peak_rss_mb"] >= big["rss_start_mb"] + 200
    assert small["rss_delta_mb"] < 100                           # the peak was reset between calls


def test_nested_measurements_and_report():
    meter = CostMeter()
    with meter.measure(doc_id="batch", n_docs=2):
        for i in range(2):
            with meter.measure(doc_id=i):
                touch(128)
                report(queries=1, api_tokens_in=10)
    inner0, inner1, outer = meter.records
    assert outer["doc_id"] == "batch" and outer["queries"] == 2 and outer["api_tokens_in"] == 20
    assert inner1["queries"] == 1
    assert outer["rss_delta_mb"] > 100                          # the outer peak survives the inner resets
    assert outer["wall_s_per_doc"] == pytest.approx(outer["wall_s"] / 2)
    report(queries=5)                                            # no meter running: nothing happens
    assert len(meter.records) == 3


def test_errors_are_recorded_and_reraised():
    meter = CostMeter()
    with pytest.raises(ZeroDivisionError):
        with meter.measure(doc_id=0):
            1 / 0
    assert meter.records[0]["error"].startswith("ZeroDivisionError")
    with pytest.raises(TypeError, match="str"):
        with meter.measure() as m:
            m.add(queries="three")


def test_wrap_and_decorator_count_tokens():
    meter = CostMeter()

    class Attack:
        name = "upper"

        def batch(self, texts):
            return [t.upper() for t in texts]

    measured = meter.wrap(Attack().batch)
    assert measured(["hello world", "a b c"]) == ["HELLO WORLD", "A B C"]

    @meter(attack="rev")
    def rev(text):
        return text[::-1]

    rev("hello world", doc_id=7)
    frame = meter.to_frame()
    assert frame["attack"].tolist() == ["upper", "rev"]
    assert frame.loc[0, "n_docs"] == 2 and frame.loc[0, "tokens_in"] == 2 + 3
    assert frame.loc[1, "doc_id"] == 7 and frame.loc[1, "tokens_in"] == 2
    assert "CostMeter(count_tokens='gpt2'" in repr(meter)


def test_model_load_time_is_kept_apart(tmp_path, monkeypatch):
    import torch
    from transformers import BertConfig, BertForMaskedLM

    from humanize.cost import meter as meter_module
    from humanize.models import load_masked_lm, load_sentence_encoder
    from humanize.models import loading as loading_module

    tok = load_sentence_encoder().model.tokenizer
    BertForMaskedLM(BertConfig(vocab_size=len(tok), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                               intermediate_size=32)).save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    # One clock for the meter and the loader that reads 1 s later at each reading: the measurement
    # opens at 0, the load reads 1 and 2, the measurement closes at 3 (whatever the machine's load).
    readings = iter(range(100))
    clock = types.SimpleNamespace(perf_counter=lambda: float(next(readings)), process_time=lambda: 0.0)
    monkeypatch.setattr(meter_module, "time", clock)
    monkeypatch.setattr(loading_module, "time", clock)
    meter = CostMeter(count_tokens=None)
    with meter.measure(doc_id=0, attack="uses-a-model"):
        lm = load_masked_lm(str(tmp_path))
        with torch.inference_mode():
            lm.model(**lm.tokenizer("hello", return_tensors="pt"))
    rec = meter.records[0]
    assert lm.load_seconds == 1.0 and rec["load_s"] == 1.0
    assert rec["wall_s"] == 3.0 - 1.0  # the 3 s measured, less the load: load time is not in wall_s
    assert meter.loads[0]["resolved"] == str(tmp_path.resolve())


def test_gpt2_spans_tile_text():
    text = "Hello world, this is a café test.\u200b ok"
    spans = gpt2_spans(text)
    assert "".join(text[a:b] for a, b in spans) == text and len(spans) == 11


def test_length_sweep_buckets_and_truncates():
    docs = [" ".join(["word"] * n) for n in (120, 150, 180, 230, 260, 40)]
    picked = bucket_documents(docs, [100, 200, 300], per_bucket=2, seed=1)
    assert picked.groupby("bucket").size().to_dict() == {100: 2, 200: 2}
    assert all(len(gpt2_spans(t)) == n for t, n in zip(picked["text"], picked["tokens"]))
    again = bucket_documents(docs, [100, 200, 300], per_bucket=2, seed=1)
    assert again.equals(picked)                                   # seeded, no global RNG

    seen = []

    class Attack:
        name = "recorder"

        def batch(self, texts):
            seen.extend(texts)
            return [t + " x" for t in texts]

    table = length_sweep(Attack().batch, docs, [100, 200, 300], per_bucket=2, warmup=False)
    assert table["bucket"].tolist() == [100, 200, 300]
    assert table["n_docs"].tolist() == [2, 2, 0] and np.isnan(table.loc[2, "wall_s_mean"])
    assert sorted(len(gpt2_spans(t)) for t in seen) == [100, 100, 200, 200]
    per_doc = length_sweep(Attack().apply if hasattr(Attack, "apply") else (lambda t: t), docs, [100],
                           per_bucket=1, per_document=True)
    assert len(per_doc) == 1 and per_doc.loc[0, "tokens_in"] == 100 and "peak_rss_mb" in per_doc
