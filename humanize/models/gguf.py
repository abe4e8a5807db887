"""Convert a GGUF-packaged model once into a Hugging Face directory in the cache.

Loading a GGUF file makes transformers dequantise every tensor (and, for
SentencePiece vocabularies, rebuild the tokenizer), which takes 20-60 s. The
result is saved with ``save_pretrained`` under ``cache_dir("converted", ...)``
so later loads read plain safetensors in well under a second.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path

from .cache import cache_dir

__all__ = ["converted_dir", "convert_gguf"]

_MARKER = "humanize-converted.json"
#: GGUF files this process de-quantised and saved (a load from the converted cache does not count).
CONVERSIONS = 0


def converted_dir(alias: str, version: str) -> Path:
    """Where the converted copy of ``alias`` (package ``version``) lives."""
    return cache_dir("converted", create=True) / f"{alias}-{version}"


def is_converted(path: Path) -> bool:
    return (path / _MARKER).is_file()


def convert_gguf(src_dir: Path, gguf_file: str, target: Path, *, alias: str, version: str) -> Path:
    """Dequantise ``src_dir/gguf_file`` to fp32 and save it to ``target``.

    Written to a temporary sibling directory and renamed into place, so a
    crash or a concurrent conversion never leaves a half-written cache entry.
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if is_converted(target):
        return target
    start = time.perf_counter()
    tokenizer = AutoTokenizer.from_pretrained(str(src_dir), gguf_file=gguf_file)
    model = AutoModelForCausalLM.from_pretrained(str(src_dir), gguf_file=gguf_file, dtype=torch.float32)
    # The tensors are plain fp32 now; drop the GGUF quantiser so the model can be saved.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        model.save_pretrained(str(tmp))
        tokenizer.save_pretrained(str(tmp))
        (tmp / _MARKER).write_text(json.dumps({
            "alias": alias, "package_version": version, "gguf_file": gguf_file,
            "source": str(src_dir), "convert_seconds": round(time.perf_counter() - start, 2),
        }, indent=1))
        if is_converted(target):  # another process won the race
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            if target.exists():
                shutil.rmtree(target, ignore_errors=True)
            os.replace(tmp, target)
            global CONVERSIONS
            CONVERSIONS += 1
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return target
