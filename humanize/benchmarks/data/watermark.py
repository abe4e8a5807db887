"""Watermarked datasets (issue #37): prompts in, three aligned sets out, in the RAID schema.

For each prompt: the text a local model writes with a watermark, the text the same model writes
with the same decoding and the same per-prompt seed without it, and the human text (when there is
one). Rows carry RAID's columns plus ``label``, ``pair`` (the prompt's index) and ``watermark``
(the scheme's name, ``"none"`` or None for human rows), so the runner, reports and exports take
them as they take any dataset (``load_file`` of the saved frame, or the frame itself in Python).

Prompts come from the user (a list; RAID's ``prompt`` column), or from the demo set
(:func:`demo_prompts`: the first words of each human text, which the model continues; the human
text is then what follows those words, so no side shares the prompt's words). ``max_new_tokens``
sets the length: detection strength grows with the number of tokens scored.

Generations are cached by content: one JSON-lines file per generator configuration (named by its
fingerprint, which holds the watermark key only as a digest), one line per request digest, under
``$HUMANIZE_CACHE/watermark-generations``. A second build with the same prompts, model, decoding
and key reads them back instead of generating.
"""
from __future__ import annotations

import hashlib
import json
import uuid
from typing import Any, Sequence

import pandas as pd

from humanize._canonical import canonical_json
from humanize.validation import check_texts
from humanize.exceptions import InvalidParameterError

from .schema import validate_rows

__all__ = ["demo_prompts", "watermark_rows"]

_NAMESPACE = uuid.UUID("3b8e0d52-5a6f-4f0e-9d0c-7c2f52d4a9e1")
CONTINUE = "Continue the following text. Write only the continuation.\n\n{prefix}"


def demo_prompts(n: "int | None" = None, prefix_words: int = 30, domain: "str | None" = None,
                 seed: int = 0) -> pd.DataFrame:
    """Prompts from the demo set's human texts: ``prompt`` (the first ``prefix_words`` words), ``human``
    (the rest of the text), ``domain``; one row per distinct human text with more words than the prefix,
    ``n`` of them sampled with ``seed`` (all when None)."""
    from .demo import load_demo

    human = load_demo(domain=domain)
    human = human[human["label"] == "human"].drop_duplicates("generation")
    rows = []
    for text, dom in zip(human["generation"], human["domain"]):
        words = text.split()
        if len(words) > prefix_words + 10:
            rows.append({"prompt": " ".join(words[:prefix_words]), "human": " ".join(words[prefix_words:]),
                         "domain": dom})
    out = pd.DataFrame(rows)
    if n is not None:
        out = out.sample(n=min(int(n), len(out)), random_state=seed)
    return out.reset_index(drop=True)


def _request_seed(seed: int, prompt: str) -> int:
    """A prompt's own sampling seed: the same whatever the order or the batch of the prompts."""
    digest = hashlib.blake2b(f"{int(seed)}\0{prompt}".encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "little")


def _cached_generate(generator, requests: list, cache: bool) -> list[str]:
    """The requests' texts, read from the content cache where present, generated (and stored) otherwise."""
    if not cache:
        return [g.text for g in generator.generate(requests)]
    from ._cache import cache_dir

    path = cache_dir("watermark-generations") / f"{generator.fingerprint()}.jsonl"
    keys = [hashlib.blake2b(canonical_json(list(r), "request").encode("utf-8", "surrogatepass"),
                            digest_size=16).hexdigest() for r in requests]
    known: dict = {}
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                item = json.loads(line)
                known[item["request"]] = item["text"]
            except (ValueError, KeyError, TypeError):
                continue  # a damaged line is generated again
    todo = [i for i, k in enumerate(keys) if k not in known]
    if todo:
        made = generator.generate([requests[i] for i in todo])
        with open(path, "a", encoding="utf-8") as f:
            for i, g in zip(todo, made):
                known[keys[i]] = g.text
                f.write(json.dumps({"request": keys[i], "text": g.text}, ensure_ascii=False) + "\n")
    return [known[k] for k in keys]


def watermark_rows(prompts: Sequence[str], humans: "Sequence[str] | None" = None, *,
                   model: Any = "smollm2-135m-instruct", watermark: Any = "kgw", max_new_tokens: int = 200,
                   temperature: float = 0.7, top_p: float = 0.95, batch_size: int = 16, seed: int = 0,
                   continuation: bool = True, domains: "Sequence[str] | str" = "watermark",
                   min_new_tokens: int = 0, repetition_penalty: float = 1.0, cache: bool = True) -> pd.DataFrame:
    """Watermarked, unwatermarked and human rows for ``prompts`` (see the module's documentation).

    ``model``: a local model (name, directory or loaded); ``watermark``: a scheme
    (:mod:`humanize.watermarks`), its name or a dict; an endpoint cannot watermark
    (:func:`humanize.generation.watermarked.watermarked_generator` refuses it). ``continuation``: each
    prompt is text to continue (the model is asked to continue it and its answer starts after it), else a
    plain instruction. ``humans``: one human text per prompt (None: no human rows). ``min_new_tokens`` and
    ``repetition_penalty`` (:class:`~humanize.generation.WatermarkedChat`'s: a fixed length, Keskar et al.'s
    penalty) apply to both machine sides; the rows' RAID column ``repetition_penalty`` says ``"yes"`` or ``"no"``.
    """
    from humanize.generation import LocalChat, Request, chat
    from humanize.generation.watermarked import watermarked_generator

    prompts = check_texts(prompts, "watermark_rows", "prompts")
    if humans is not None:
        humans = check_texts(humans, "watermark_rows", "humans")
        if len(humans) != len(prompts):
            raise InvalidParameterError(f"watermark_rows: got {len(humans)} human texts for {len(prompts)} prompts")
    doms = [domains] * len(prompts) if isinstance(domains, str) else list(domains)
    if len(doms) != len(prompts):
        raise InvalidParameterError(f"watermark_rows: got {len(doms)} domains for {len(prompts)} prompts")
    plain = LocalChat(model, temperature=temperature, top_p=top_p, max_new_tokens=max_new_tokens,
                      batch_size=batch_size)
    marked = watermarked_generator(plain, watermark)
    if min_new_tokens or repetition_penalty != 1.0:
        marked.set_params(min_new_tokens=min_new_tokens, repetition_penalty=repetition_penalty)
        plain = type(marked)(**{**marked.get_params(deep=False), "watermark": None})  # the same decoding
    requests = [Request(chat(CONTINUE.format(prefix=p)) if continuation else chat(p), _request_seed(seed, p),
                        answer_start=(p + " ") if continuation else "") for p in prompts]
    texts = {"watermarked": _cached_generate(marked, requests, cache),
             "unwatermarked": _cached_generate(plain, requests, cache)}
    name = marked.scheme().name
    model_name = model if isinstance(model, str) else str(getattr(model, "resolved", "local"))
    decoding = "greedy" if float(temperature) == 0 else "sampling"
    rows = []
    for i, prompt in enumerate(prompts):
        source = str(uuid.uuid5(_NAMESPACE, f"{i}\0{prompt}"))
        common = dict(source_id=source, repetition_penalty="no" if repetition_penalty == 1.0 else "yes",
                      attack="none", domain=doms[i], title=None, prompt=prompt, pair=i)
        for kind, scheme in (("watermarked", name), ("unwatermarked", "none")):
            rows.append(dict(id=str(uuid.uuid5(_NAMESPACE, f"{source}/{kind}")), model=model_name, decoding=decoding,
                             generation=texts[kind][i], label="machine", watermark=scheme, **common))
        if humans is not None:
            rows.append(dict(id=str(uuid.uuid5(_NAMESPACE, f"{source}/human")), model="human", decoding=None,
                             generation=humans[i], label="human", watermark=None, **{**common,
                                                                                     "repetition_penalty": None}))
    return validate_rows(pd.DataFrame(rows))
