"""Generation throughput: batched :class:`~humanize.generation.local.LocalChat` against one-at-a-time ``generate``.

Both decode greedily with the same model (default SmolLM2-135M-Instruct, offline)
on the same paraphrase prompts (a demo machine text each, TH-Bench §2.2's
rewriting request) and the same number of new tokens:

- batched: ``LocalChat(temperature=0).generate(requests)``: prompts sorted by
  length, left-padded batches of ``--batch-size``, its own KV-cache loop;
- one at a time: the model's own ``model.generate(do_sample=False)``, one prompt
  per call (how a rewriting loop over documents calls a model without batching).

Printed: new tokens per second of each (wall-clock and per CPU second, which
shared machines distort less), the speed-up, and how many outputs are the same
tokens (the script fails when one differs). Model loading and one warm-up call
are not timed. Floor (issue 11): speed-up >= 3x on a 2-core CPU with SmolLM2.

What bounds the speed-up: the prompt pass (about 270 tokens here) is
compute-bound and costs the same batched or not, while each decoding step
reads all the weights for one row or for a whole batch alike. So the ratio
grows with new tokens per prompt tokens and with the batch size. Measured on
a 2-core CPU (2 threads), 16 prompts: 48 new tokens 3.2x with batch size 16,
2.7x with 8; 256 new tokens (a whole paraphrase; 191 on average before EOS)
4.2x with 16, 2.8x with 8 (with 8, rows that stop early leave the last steps
to a part-empty batch).

    python benchmarks/bench_generation.py                          # 16 prompts, 48 new tokens, batch 16
    python benchmarks/bench_generation.py --new-tokens 256         # whole paraphrases
    python benchmarks/bench_generation.py --prompts 8 --new-tokens 24 --batch-size 8 --threads 1   # quick
"""
from __future__ import annotations

import argparse
import sys
import time

PROMPT = "Paraphrase the following text. Keep its meaning and its length; answer with the paraphrase only.\n\n{text}"


def one_at_a_time(lm, prompts: list[str], new_tokens: int, stop: frozenset) -> tuple[list[list[int]], tuple]:
    """``model.generate`` per prompt (greedy): the new token ids of each, and (wall, CPU) seconds taken."""
    import torch

    tok = lm.tokenizer
    outs = []
    start, cpu = time.perf_counter(), time.process_time()
    for p in prompts:
        text = tok.apply_chat_template([{"role": "user", "content": p}], tokenize=False, add_generation_prompt=True)
        ids = tok(text, add_special_tokens=False, return_tensors="pt")["input_ids"].to(lm.device)
        with torch.inference_mode():
            gen = lm.model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=new_tokens,
                                    do_sample=False, num_beams=1, temperature=None, top_p=None, top_k=None,
                                    eos_token_id=sorted(stop), pad_token_id=tok.pad_token_id)
        outs.append(gen[0, ids.shape[1]:].tolist())
    return outs, (time.perf_counter() - start, time.process_time() - cpu)


def batched(gen, prompts: list[str], new_tokens: int) -> tuple[list, tuple]:
    """``LocalChat.generate`` on all prompts at once: the generations, and (wall, CPU) seconds taken."""
    from humanize.generation import Request, chat

    start, cpu = time.perf_counter(), time.process_time()
    out = gen.generate([Request(chat(p), seed=i, max_new_tokens=new_tokens) for i, p in enumerate(prompts)])
    return out, (time.perf_counter() - start, time.process_time() - cpu)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2-135m-instruct", help="chat model (default: %(default)s)")
    parser.add_argument("--prompts", type=int, default=16, help="demo machine texts to paraphrase (default 16)")
    parser.add_argument("--new-tokens", type=int, default=48, help="new tokens per prompt (default 48)")
    parser.add_argument("--batch-size", type=int, default=16, help="LocalChat batch size (default 16)")
    parser.add_argument("--words", type=int, default=None,
                        help="cut each text after its W-th whitespace-separated word (default: whole texts)")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's choice)")
    parser.add_argument("--device", default=None, help="device (default: CUDA when present, else CPU)")
    args = parser.parse_args(argv)

    import torch

    from humanize.benchmarks.data import load_demo
    from humanize.generation.local import LocalChat

    if args.threads:
        torch.set_num_threads(args.threads)
    texts = load_demo().query("label == 'machine'")["generation"].tolist()
    if args.words:
        texts = [" ".join(t.split(" ")[: args.words]) for t in texts]
    prompts = [PROMPT.format(text=t) for t in texts[1: 1 + args.prompts]]
    gen = LocalChat(args.model, temperature=0, batch_size=args.batch_size, max_new_tokens=args.new_tokens,
                    device=args.device)
    lm = gen.loaded()
    stop = gen._stop_ids(lm)
    warm = [PROMPT.format(text=texts[0])]
    batched(gen, warm, 4)  # warm-up, not timed
    one_at_a_time(lm, warm, 4, stop)

    fast, sec_fast = batched(gen, prompts, args.new_tokens)
    slow, sec_slow = one_at_a_time(lm, prompts, args.new_tokens, stop)
    n_in = sum(g.tokens_in for g in fast)
    n_out = sum(g.tokens_out for g in fast)
    n_slow = sum(len(s) for s in slow)
    tok = lm.tokenizer
    same = 0
    for g, s in zip(fast, slow):  # same number of tokens, same text: the same tokens
        stopped = bool(s) and s[-1] in stop
        text = tok.decode(s[:-1] if stopped else s, skip_special_tokens=True)
        same += g.tokens_out == len(s) and g.text == (text if stopped else text.rstrip("\ufffd"))
    print(f"model {lm.resolved} on {lm.device}; torch threads {torch.get_num_threads()}; {len(prompts)} prompts, "
          f"{n_in / len(prompts):.0f} prompt tokens on average, up to {args.new_tokens} new tokens, "
          f"batch size {args.batch_size}")
    print(f"{'':28s}{'seconds':>10s}{'CPU s':>10s}{'new tokens':>12s}{'tokens/s':>10s}{'per CPU s':>10s}")
    for label, (wall, cpu), n in (("LocalChat (batched)", sec_fast, n_out),
                                  ("model.generate (one by one)", sec_slow, n_slow)):
        print(f"{label:28s}{wall:10.2f}{cpu:10.2f}{n:12d}{n / wall:10.2f}{n / cpu:10.2f}")
    ratio = (n_out / sec_fast[0]) / (n_slow / sec_slow[0])
    ratio_cpu = (n_out / sec_fast[1]) / (n_slow / sec_slow[1])
    print(f"speed-up (tokens/s): {ratio:.2f}x wall-clock, {ratio_cpu:.2f}x per CPU second; "
          f"same outputs: {same}/{len(prompts)}")
    if same != len(prompts):
        print("outputs differ: batched greedy decoding should give the one-by-one tokens", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
