"""Same seed, same output for a document, whatever the batch, order or process."""

import hashlib
import json
import subprocess
import sys

import pytest

from humanize import attacks

from .conftest import RULE_ATTACKS


def _digest(results):
    return hashlib.sha256(json.dumps([[r.text, [list(e) for e in r.edits]] for r in results]).encode()).hexdigest()


@pytest.mark.parametrize("name", RULE_ATTACKS)
def test_output_does_not_depend_on_batch_size_or_order(name, demo_machine_texts):
    texts = demo_machine_texts[:12]
    a = attacks.get(name, seed=11, rate=0.5)
    whole = {t: r.text for t, r in zip(texts, a.batch(texts))}
    reversed_ = {t: r.text for t, r in zip(texts[::-1], a.batch(texts[::-1]))}
    one_by_one = {t: a(t) for t in texts}
    assert whole == reversed_ == one_by_one


def test_different_seeds_give_different_outputs(demo_machine_texts):
    text = demo_machine_texts[0]
    outs = {attacks.Whitespace(seed=s)(text) for s in range(5)}
    assert len(outs) == 5


def test_attacks_do_not_touch_global_random_state(demo_machine_texts):
    import random

    import numpy as np

    random.seed(123)
    np.random.seed(123)
    expected = (random.random(), np.random.random())
    random.seed(123)
    np.random.seed(123)
    for name in RULE_ATTACKS:
        attacks.get(name, rate=0.5).batch(demo_machine_texts[:3])
    assert (random.random(), np.random.random()) == expected


def test_same_output_in_a_fresh_process(demo_machine_texts):
    texts = demo_machine_texts[:5]
    here = {name: _digest(attacks.get(name, seed=2, rate=0.5).batch(texts)) for name in RULE_ATTACKS}
    script = f"""
import hashlib, json, sys
from humanize import attacks
from humanize.benchmarks.data import load_demo
texts = load_demo().query("label == 'machine'")["generation"].tolist()[:5][::-1]
out = {{}}
for name in {RULE_ATTACKS!r}:
    rs = attacks.get(name, seed=2, rate=0.5).batch(texts)[::-1]
    out[name] = hashlib.sha256(json.dumps([[r.text, [list(e) for e in r.edits]] for r in rs]).encode()).hexdigest()
print(json.dumps(out))
"""
    env = {"PYTHONHASHSEED": "977"}
    import os

    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env={**os.environ, **env})
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == here
