"""Attacks by name, so configs and the CLI can build them.

Adding an attack is one new module plus one line in ``_REGISTRY``. Entries are
import paths, resolved on first use, so importing :mod:`humanize.attacks` stays cheap.
"""

from __future__ import annotations

from humanize._registry import Registry

from .base import Attack

_REGISTRY: dict[str, "str | type[Attack]"] = {
    # RAID (Dugan et al., 2024), Table 11 / Appendix E.4
    "alternative_spelling": "humanize.attacks.alternative_spelling:AlternativeSpelling",
    "article_deletion": "humanize.attacks.article_deletion:ArticleDeletion",
    "homoglyph": "humanize.attacks.homoglyph:Homoglyph",
    "insert_paragraphs": "humanize.attacks.insert_paragraphs:InsertParagraphs",
    "misspelling": "humanize.attacks.misspelling:Misspelling",
    "number_swap": "humanize.attacks.number_swap:NumberSwap",
    "upper_lower": "humanize.attacks.upper_lower:UpperLower",
    "whitespace": "humanize.attacks.whitespace:Whitespace",
    "zero_width_space": "humanize.attacks.zero_width_space:ZeroWidthSpace",
    "synonym": "humanize.attacks.wordsub.presets:Synonym",  # RAID synonym swap (word-substitution engine)
    "qpa": "humanize.attacks.wordsub.presets:QPA",  # TH-Bench App. G: quality constraints on an engine attack
    "raft": "humanize.attacks.wordsub.raft:RAFT",
    "hmgc": "humanize.attacks.wordsub.hmgc:HMGC",  # Zhou et al. 2024 (TH-Bench §2.2): surrogate-guided swaps
    # Generation attacks (TH-Bench §2.2): a language model rewrites the text (humanize.attacks.generation)
    "paraphrase": "humanize.attacks.generation.paraphrase:Paraphrase",  # DIPPER (Krishna et al. 2023) or a chat LLM
    "recursion": "humanize.attacks.generation.paraphrase:Recursion",  # Sadasivan et al. 2023; TH-Bench §4.1
    "prompt": "humanize.attacks.generation.prompt:Prompt",  # Xu et al. 2023 (PromptAttack), TH-Bench's Prompt
    "qpa_prompt": "humanize.attacks.generation.prompt:QPAPrompt",  # TH-Bench App. G: Prompt + quality instruction
    "toblend": "humanize.attacks.generation.toblend:TOBLEND",  # Huang et al. 2024; TH-Bench §2.2, §4.1
    "qpa_toblend": "humanize.attacks.generation.toblend:QPA_TOBLEND",  # TH-Bench App. G, Algorithm 2
    # Cheng et al. 2025 (arXiv 2506.07001): a guide detector picks each token, or reranks sampled paraphrases
    "adversarial_paraphrase": "humanize.attacks.generation.guided:AdversarialParaphrase",
    # RL-trained humanizers (detector feedback, GRPO) as plain rewrites with their presets (humanize.generation.presets)
    "authormist": "humanize.attacks.generation.humanizers:AuthorMist",  # David & Gervais 2025, arXiv 2503.08716
    "stealthrl": "humanize.attacks.generation.humanizers:StealthRL",  # arXiv 2602.08934 (a LoRA on Qwen3-4B)
    # Composites (humanize.attacks.composite): attacks in order, or one per sentence (TH-Bench App. H)
    "pipeline": "humanize.attacks.pipeline:Pipeline",
    "blend": "humanize.attacks.blend:Blend",
    # Watermark scrubbing (issue #37, humanize.attacks.watermark)
    "copy_paste": "humanize.attacks.watermark:CopyPasteDilution",  # Kirchenbauer et al. 2023b, §4.1
    "emoji_attack": "humanize.attacks.watermark:EmojiAttack",  # Kirchenbauer et al. 2023, §7
    "self_info_rewrite": "humanize.attacks.watermark:SelfInformationRewrite",  # SIRA, Cheng et al. 2025
    "watermark_stealing": "humanize.attacks.watermark:WatermarkStealing",  # Jovanovic et al. 2024
    # Format counterfactuals (artifact-reliance paper, Section 5.1)
    "strip_format": "humanize.attacks.format:StripFormat",
    "impose_format": "humanize.attacks.format:ImposeFormat",
}

#: Attacks that need no model: the demo and the rule-based benchmark use these.
RULE_BASED = (
    "alternative_spelling",
    "article_deletion",
    "homoglyph",
    "insert_paragraphs",
    "misspelling",
    "number_swap",
    "upper_lower",
    "whitespace",
    "zero_width_space",
)

_registry = Registry("attack", Attack, _REGISTRY, group="humanize.attacks")
register, available, resolve, get, origin = _registry.functions()
