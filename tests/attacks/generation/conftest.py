"""Session fixtures for the generation attacks' tests.

- ``tiny_t5_dir``: a tiny randomly initialised T5 (``T5ForConditionalGeneration``) and a
  Unigram tokenizer trained here on a few demo sentences (``</s>`` appended like T5's),
  saved to a temporary directory and loaded back through the model layer. Its outputs
  are noise: it tests DIPPER's plumbing, never paraphrase quality.
- ``tiny_dipper``: :class:`~humanize.generation.dipper.Dipper` on that model, few tokens.
- ``chat_generator``: ``LocalChat`` on the packaged SmolLM2 (the session's ``smollm``), sampled, few tokens.
"""
import pytest

DEMO = [
    "The committee met on Tuesday to discuss the new budget. Several members raised concerns about costs.",
    "Rain is expected later this week, and the temperatures will drop sharply by Friday evening.",
    "Researchers found that the model improves accuracy. However, the results need more careful study.",
    "She walked to the market, bought fresh bread and apples, and returned home before noon.",
    "lexical = 40, order = 100 <sent> paraphrase these sentences please </sent>",
]


def build_tiny_t5(directory):
    """Build a Unigram tokenizer from DEMO and a tiny random T5 with a fixed seed, save both to ``directory``."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast, T5Config, T5ForConditionalGeneration

    # A Unigram vocabulary written out (the trainer is not deterministic across processes):
    # each demo word as a whole piece, each character alone and word-initial as fallbacks.
    words = sorted({w for line in DEMO for w in line.split()})
    chars = sorted({c for line in DEMO for c in line if not c.isspace()})
    scores: dict = {"<pad>": 0.0, "</s>": 0.0, "<unk>": 0.0}
    for piece, score in ([("\u2581" + w, -5.0) for w in words] + [("\u2581" + c, -9.0) for c in chars]
                         + [(c, -10.0) for c in chars]):
        scores.setdefault(piece, score)
    vocab = list(scores.items())
    tok = Tokenizer(models.Unigram(vocab, unk_id=2))
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    eos = tok.token_to_id("</s>")
    tok.post_processor = processors.TemplateProcessing(single="$A </s>", special_tokens=[("</s>", eos)])
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="</s>", unk_token="<unk>",
                                   model_max_length=512)
    config = T5Config(vocab_size=tok.get_vocab_size(), d_model=32, d_kv=8, d_ff=64, num_layers=2,
                      num_decoder_layers=2, num_heads=4, pad_token_id=fast.pad_token_id,
                      eos_token_id=fast.eos_token_id, decoder_start_token_id=fast.pad_token_id)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = T5ForConditionalGeneration(config)
    model.save_pretrained(directory)
    fast.save_pretrained(directory)
    return directory


@pytest.fixture(scope="session")
def tiny_t5_dir(tmp_path_factory):
    return str(build_tiny_t5(tmp_path_factory.mktemp("tiny_t5")))


@pytest.fixture(scope="session")
def tiny_dipper(tiny_t5_dir):
    from humanize.generation.dipper import Dipper

    return Dipper(model=tiny_t5_dir, tokenizer=None, max_new_tokens=6, device="cpu")


@pytest.fixture(scope="session")
def chat_generator(smollm):
    from humanize.generation.local import LocalChat

    return LocalChat(model=smollm, max_new_tokens=24)
