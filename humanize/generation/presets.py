"""Named generators: the RL-trained humanizers as paraphrasers (AuthorMist, StealthRL; issue #23 §2).

A :class:`GeneratorPreset` says what a released rewriting model needs at inference: which weights
(a hub id, or a base model plus a LoRA adapter), the prompt it was trained with (a user turn holding
the text), an optional system turn, and its recommended decoding (temperature, top-p, the token
budget). :class:`PresetChat` runs a preset through the library's own back ends, a
:class:`~humanize.generation.local.LocalChat` (token mode of the guided paraphrase included) or an
:class:`~humanize.generation.endpoint.EndpointChat` (the model served by vLLM or any
OpenAI-compatible server), so everything the rest of the library does with a generator (seeds per
request, usage counts, the cost meter, fingerprints) holds for it unchanged. A rewriting attack
that finds :meth:`PresetChat.paraphrase_prompt` uses the preset's prompt for each chunk in place of
its own default instruction (:func:`humanize.attacks.generation.rewrite.chunk_prompt`).

``model=`` (and, for an adapter preset, ``adapter=``) point the same preset at other weights: a
local copy of the model, or, in the tests, a tiny model built there; the prompt and the decoding
are the preset's either way.

>>> from humanize.generation import resolve_generator
>>> resolve_generator("authormist")                                    # doctest: +SKIP
>>> resolve_generator({"backend": "preset", "preset": "stealthrl", "adapter": "/ckpt/lora"})  # doctest: +SKIP
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass
from numbers import Integral
from typing import Any, Optional, Sequence

from humanize.validation import MODEL, NONBLANK_STR, Interval, Options
from humanize.exceptions import ModelUnavailable

from .base import SAMPLING_CONSTRAINTS, Generation, Generator, Request, check_requests
from .local import LocalChat

__all__ = ["GeneratorPreset", "PRESETS", "PresetChat", "get_preset", "LORA_EXTRA"]

#: The optional dependency group that installs peft, which LoRA-adapter presets load with.
LORA_EXTRA = "lora"


@dataclass(frozen=True)
class GeneratorPreset:
    """A released rewriting model and how it was trained to be prompted and decoded.

    ``model``: the full model's hub id (None when the weights are ``base_model`` plus ``adapter``).
    ``adapter``: the LoRA adapter's hub id, None when it is not published (a user passes their
    own). ``prompt``: the user turn, ``{text}`` standing for the text to rewrite. ``system``: a
    system turn (None: the chat template's own default). ``needs``: what it takes at full scale.
    """

    name: str
    model: Optional[str]
    prompt: str
    temperature: float
    top_p: float
    max_new_tokens: int
    source: str
    needs: str
    system: Optional[str] = None
    base_model: Optional[str] = None
    adapter: Optional[str] = None
    adapter_note: str = ""

    @property
    def weights(self) -> str:
        """The hub id(s) the preset loads, for messages."""
        if self.model:
            return self.model
        return f"{self.base_model} + LoRA {self.adapter or '(adapter not published)'}"

    def format(self, text: str) -> str:
        """The user turn for ``text``."""
        return self.prompt.replace("{text}", text)


PRESETS: dict[str, GeneratorPreset] = {p.name: p for p in [
    GeneratorPreset(
        "authormist", "authormist/authormist-originality",
        # the prompt of the model card (as StealthRL's evaluation code quotes it), one user turn;
        # Qwen2.5's chat template adds its default system turn
        "Please paraphrase the following text to make it more human-like while preserving the original "
        "meaning:\n\n{text}\n\nParaphrased text:",
        temperature=0.7, top_p=0.9, max_new_tokens=512,
        source="David & Gervais 2025, AuthorMist (arXiv 2503.08716): Qwen2.5-3B-Instruct trained with GRPO "
               "against Originality.ai; MIT licence",
        needs="the Hugging Face hub (`hf download authormist/authormist-originality`, about 6 GB) and, for speed, "
              "a GPU with about 8 GB (bf16); about 13 GB of RAM on a CPU (fp32)",
    ),
    GeneratorPreset(
        "stealthrl", None,
        # arXiv 2602.08934 §3.4 (Inference): one paraphrase per input, temperature 1.0, top-p 0.9, 512 tokens
        "Paraphrase the following text while preserving its meaning: {text}",
        temperature=1.0, top_p=0.9, max_new_tokens=512,
        source="StealthRL (arXiv 2602.08934): Qwen3-4B-Instruct with a LoRA adapter (rank 32, alpha 32) trained "
               "with GRPO against RoBERTa and Fast-DetectGPT",
        needs="the Hugging Face hub (`hf download Qwen/Qwen3-4B-Instruct-2507`, about 8 GB), the adapter, peft "
              f"(pip install 'humanize-bench[{LORA_EXTRA}]') and, for speed, a GPU with about 10 GB (bf16)",
        base_model="Qwen/Qwen3-4B-Instruct-2507",
        adapter=None,
        adapter_note="the StealthRL adapter has no published hub id (the authors' repository, "
                     "suraj-ranganath/StealthRL, keeps its checkpoints out of the repository): pass "
                     "adapter='<directory or hub id of the LoRA adapter>'",
    ),
]}


def get_preset(name: str) -> Optional[GeneratorPreset]:
    """The preset called ``name`` (case-insensitive), or None."""
    return PRESETS.get(str(name).strip().lower()) if isinstance(name, str) else None


def _unavailable(name: str, message: str) -> ModelUnavailable:
    """A :class:`ModelUnavailable` whose message is the one line ``message``."""
    err = ModelUnavailable(name, [], message)
    err.args = (message,)
    return err


class PresetChat(Generator):
    """A :class:`GeneratorPreset` as a chat :class:`~humanize.generation.Generator`.

    ``preset``: a name of :data:`PRESETS`. ``model``: other weights for the same preset (a local
    directory, a hub id or a loaded causal LM; for an adapter preset, the base model), None: the
    preset's. ``adapter``: the LoRA adapter (a directory or hub id; adapter presets only).
    ``via``: ``"local"`` (a :class:`~humanize.generation.local.LocalChat`) or ``"endpoint"`` (an
    :class:`~humanize.generation.endpoint.EndpointChat` asking ``base_url`` for the model by name).
    ``temperature``, ``top_p``, ``max_new_tokens``: None keeps the preset's recommended decoding.
    Every request gets the preset's system turn when it has none of its own.
    """

    name = "preset"
    kind = "chat"
    _model_params = ("model",)
    _parameter_constraints = {
        "preset": [Options(str, set(PRESETS))],
        "model": [MODEL, None],
        "adapter": [NONBLANK_STR, None],
        "via": [Options(str, {"local", "endpoint"})],
        "temperature": [*SAMPLING_CONSTRAINTS["temperature"], None],
        "top_p": [*SAMPLING_CONSTRAINTS["top_p"], None],
        "max_new_tokens": [*SAMPLING_CONSTRAINTS["max_new_tokens"], None],
        "batch_size": [Interval(Integral, 1, None)],
        "base_url": [NONBLANK_STR, None],
    }

    def __init__(self, preset: str = "authormist", model: Any = None, adapter: Optional[str] = None,
                 via: str = "local", temperature: Optional[float] = None, top_p: Optional[float] = None,
                 max_new_tokens: Optional[int] = None, batch_size: int = 16, device: Any = None, dtype: Any = None,
                 base_url: Optional[str] = None):
        self._init_params(locals())

    def _check(self) -> None:
        spec = self.spec
        if self.adapter is not None and spec.base_model is None:
            raise ValueError(f"PresetChat: preset {spec.name!r} is a full model ({spec.model}); adapter= applies "
                             "to adapter presets only")
        if self.via == "endpoint" and self.adapter is not None:
            raise ValueError("PresetChat: via='endpoint' asks a server for a model by name; serve the adapter "
                             "there (vLLM --lora-modules) and pass its served name as model=")
        loaded = self.model is not None and not isinstance(self.model, (str, os.PathLike))
        if loaded and (self.device is not None or self.dtype is not None):
            raise ValueError("PresetChat: device and dtype apply to a model given by name; a loaded model keeps "
                             f"its own (got device={self.device!r}, dtype={self.dtype!r})")
        if self.via == "endpoint" and self.model is not None and not isinstance(self.model, str):
            raise TypeError("PresetChat: via='endpoint' takes model= as the served model's name (a str)")
        if self.via == "endpoint" and self.model is None and spec.model is None:
            raise ValueError(f"PresetChat: preset {spec.name!r} is an adapter on {spec.base_model}; with "
                             "via='endpoint' pass model='<the served adapter's name>' (not the base model)")

    # -- what runs --------------------------------------------------------------------
    @property
    def spec(self) -> GeneratorPreset:
        """The :class:`GeneratorPreset` this generator runs."""
        return PRESETS[self.preset]

    def decoding(self) -> dict:
        """The temperature, top-p and token budget used: the parameters, else the preset's."""
        spec = self.spec
        return {"temperature": spec.temperature if self.temperature is None else self.temperature,
                "top_p": spec.top_p if self.top_p is None else self.top_p,
                "max_new_tokens": spec.max_new_tokens if self.max_new_tokens is None else self.max_new_tokens}

    def paraphrase_prompt(self, text: str) -> str:
        """The user turn asking this model to rewrite ``text``, as it was trained."""
        return self.spec.format(text)

    def backend_generator(self) -> Generator:
        """The back end every request goes through (built once per parameter values; loads nothing)."""
        key = repr(sorted((k, repr(v)) for k, v in self.get_params(deep=False).items()))
        found = self.__dict__.get("_backend")
        if found is not None and found[0] == key:
            return found[1]
        if self.via == "endpoint":
            from .endpoint import EndpointChat

            served = self.model if self.model is not None else self.spec.model
            gen: Generator = EndpointChat(model=served, base_url=self.base_url, **self.decoding())
        else:
            gen = _PresetLocal(owner=self, batch_size=int(self.batch_size), **self.decoding())
        self.__dict__["_backend"] = (key, gen)
        return gen

    def loaded(self):
        """The causal LM (a :class:`~humanize.models.LoadedModel`), loaded once per process; one line
        naming the hub id and what it needs when it cannot be loaded here."""
        spec = self.spec
        if spec.base_model is not None and (self.adapter or spec.adapter) is None:
            raise _unavailable(spec.name, f"preset {spec.name!r}: {spec.adapter_note}")
        given = self.model is not None and not isinstance(self.model, (str, os.PathLike))
        base = self.model if given else self._load_named(self._base_name())
        return base if self.spec.base_model is None else self._with_adapter(base)

    def _base_name(self) -> str:
        spec = self.spec
        if self.model is not None:
            return os.fspath(self.model)
        return spec.model or spec.base_model

    def _load_named(self, name: str):
        from humanize.models import load_causal_lm

        spec = self.spec
        try:
            return load_causal_lm(name, device=self.device, dtype=self.dtype)
        except ModelUnavailable as exc:
            why = exc.tried[-1] if exc.tried else str(exc).splitlines()[0]
            why = why.split(": ", 1)[-1].split(". ")[0][:200]
            if self.model is not None:
                raise _unavailable(name, f"preset {spec.name!r}: model={name!r} cannot be loaded ({why})") from None
            raise _unavailable(name, f"preset {spec.name!r} needs {name} from {spec.needs}; it is not available "
                                     f"here ({why}); or pass model='<local directory>' with a copy") from None

    def _with_adapter(self, base):
        """``base`` with the preset's LoRA adapter merged in (a copy: the cached base model stays as it is)."""
        spec = self.spec
        adapter = self.adapter or spec.adapter
        if adapter is None:
            raise _unavailable(spec.name, f"preset {spec.name!r}: {spec.adapter_note}")
        try:
            import peft  # noqa: F401 - an optional dependency
        except ImportError:
            raise _unavailable(spec.name, f"preset {spec.name!r} loads a LoRA adapter, which needs peft: "
                                          f"pip install 'humanize-bench[{LORA_EXTRA}]'") from None
        from humanize.models.cache import get_or_load

        key = ("preset-lora", spec.name, str(getattr(base, "resolved", base)), os.fspath(adapter),
               str(base.device), str(base.dtype))
        return get_or_load(key, lambda: _merge_adapter(spec.name, base, os.fspath(adapter)))

    # -- generation -------------------------------------------------------------------
    def _requests(self, requests: Sequence[Request]) -> list[Request]:
        reqs = check_requests("PresetChat", requests)
        system = self.spec.system
        if not system:
            return reqs
        return [r if r.messages[0][0] == "system" else r._replace(messages=(("system", system), *r.messages))
                for r in reqs]

    def generate(self, requests: Sequence[Request]) -> list[Generation]:
        """One generation per request, through the back end, with the preset's system turn and decoding."""
        return self.backend_generator().generate(self._requests(requests))

    @property
    def generate_guided(self):
        """:meth:`LocalChat.generate_guided <humanize.generation.local.LocalChat.generate_guided>` of the
        local back end (None on an endpoint, which has no decode loop to guide)."""
        gen = self.backend_generator()
        guided = getattr(gen, "generate_guided", None)
        if guided is None:
            return None

        def run(requests, choose, top_k: int = 50, top_p: float = 0.99, min_new_tokens=0):
            return guided(self._requests(requests), choose, top_k=top_k, top_p=top_p, min_new_tokens=min_new_tokens)
        return run

    def provenance(self) -> dict:
        """As every generator's, plus the preset's prompt, system turn, decoding and weights."""
        out = super().provenance()
        spec = self.spec
        weights = {"model": spec.model, "base_model": spec.base_model, "adapter": self.adapter or spec.adapter}
        out["params"]["preset_spec"] = {"prompt": spec.prompt, "system": spec.system, **self.decoding(), **weights}
        return out


class _PresetLocal(LocalChat):
    """The local back end of a :class:`PresetChat`: a LocalChat whose model is the preset's, loaded through
    :meth:`PresetChat.loaded` (its one-line messages, the adapter merge)."""

    def __init__(self, owner: Any = None, temperature: float = 0.7, top_p: float = 0.95, max_new_tokens: int = 256,
                 batch_size: int = 16):
        self.owner = owner
        super().__init__(model=f"preset:{owner.preset}", temperature=temperature, top_p=top_p,
                         max_new_tokens=max_new_tokens, batch_size=batch_size)

    def loaded(self):
        return self.owner.loaded()


def _merge_adapter(name: str, base, adapter: str):
    """A :class:`~humanize.models.LoadedModel` of ``base`` (copied) with the LoRA ``adapter`` merged in."""
    import copy

    from peft import PeftModel

    from humanize.models.loading import LoadedModel, _hub_options

    start = time.perf_counter()
    local = os.path.isdir(adapter)
    opts = {} if local else {k: v for k, v in _hub_options(adapter).items() if not k.startswith("_")}
    try:
        merged = PeftModel.from_pretrained(copy.deepcopy(base.model), adapter, **opts).merge_and_unload()
    except Exception as exc:  # noqa: BLE001 - a missing or mismatched adapter: one line naming it
        text = " ".join(str(exc).split())[:200]
        raise _unavailable(adapter, f"preset {name!r}: the LoRA adapter {adapter!r} cannot be loaded onto "
                                    f"{base.resolved} ({type(exc).__name__}: {text})") from None
    merged.eval()
    merged.requires_grad_(False)
    return LoadedModel(name=f"{name}:{adapter}", resolved=adapter, model=merged, tokenizer=base.tokenizer,
                       device=base.device, dtype=base.dtype, kind="causal_lm",
                       load_seconds=time.perf_counter() - start, source="local" if local else "hub")
