"""One self-contained HTML page of a run's attacked documents (issue #12 §4).

Each attacked machine text is shown as its original with the attack's exact edits marked
(``<del>`` for deleted, ``<ins>`` for inserted text, both for a replacement; invisible and
look-alike characters get a visible marker and their code point as a tooltip; a whole word replaced
by one word is coloured by its validity class, :func:`humanize.quality.validity.classify_swap`:
synonym, antonym, sister term, ...), next to each detector's score before (the clean text) and
after the attack. A ``<select>`` filters by attack, another sorts by the change of a detector's score. Inline CSS and JavaScript only:
the page opens from disk with no network.
"""

from __future__ import annotations

import html
import json
import math
import re
import unicodedata
from pathlib import Path

import pandas as pd

from ._escape import INVISIBLE, char_name, html_text, is_invisible, marker, plain_text
from ._files import write_text

__all__ = ["documents_page", "write_documents_page", "render_edits"]

from .selection import CLEAN
_INVISIBLE = INVISIBLE  # the one list, in ._escape (labels on every page are marked with it too)
_WHITESPACE = {" ": "\u2423", "\n": "\u21b5", "\t": "\u21e5", "\r": "CR"}
_name, _is_invisible, _marker = char_name, is_invisible, marker


def _plain(text: str) -> str:
    """Unchanged text: escaped, with invisible characters (other than line breaks and tabs) marked."""
    return html_text(text)


def _edited(text: str) -> str:
    """Text an edit removed or inserted: every whitespace, invisible or non-ASCII character made visible."""
    out = []
    for c in text:
        if c in _WHITESPACE:
            out.append(f'<span class="ws" title="{html.escape(_name(c))}">{_WHITESPACE[c]}</span>'
                       + ("\n" if c == "\n" else ""))
        elif _is_invisible(c):
            out.append(_marker(c))
        elif ord(c) > 127:
            out.append(f'<span class="cp" title="{html.escape(_name(c))}">{html.escape(c)}</span>')
        else:
            out.append(html.escape(c))
    return "".join(out)


_SWAP_CLASS_NAMES = {"synonym": "synonym", "morphological": "morphological variant", "hypernym": "hypernym / hyponym",
                     "antonym": "antonym", "sister": "sister term (co-hyponym)", "unrelated": "unrelated word",
                     "non_word": "not a word"}


def _swap_class(original: str, start: int, end: int, new: str, state: dict) -> str | None:
    """The validity class of a whole word replaced by one word; None for any other edit (or without WordNet)."""
    from humanize.quality.validity import WORD_RE, classify_swap

    if state.get("unavailable") or not WORD_RE.fullmatch(new):
        return None
    if "words" not in state:
        state["words"] = {m.span() for m in WORD_RE.finditer(original)}
    if (start, end) not in state["words"]:
        return None  # not a whole word of the original (e.g. one letter of it replaced)
    from humanize.models import ModelUnavailable

    try:
        return classify_swap(original[start:end], new)
    except ModelUnavailable:
        state["unavailable"] = True
        return None


def render_edits(original: str, edits, text: str | None = None, *, counts: dict | None = None,
                 misfits: set | None = None) -> str:
    """HTML of ``original`` with ``edits`` ([start, end, replacement] over it) marked; with ``text``,
    check that the edits rebuild it (ValueError otherwise). A word replaced by a word is coloured by
    its validity class (class ``swap v-<class>``, tooltip naming it); ``counts`` collects them. A swap
    whose ``(start, end)`` is in ``misfits`` (the context meter's, issue #33) is also struck through
    (class ``ctx-fail``, tooltip saying it does not fit its sentence), and counted as ``"ctx_fail"``."""
    pos, parts, rebuilt, state = 0, [], [], {}
    for edit in sorted((tuple(e) for e in edits), key=lambda e: (e[0], e[1])):
        if len(edit) != 3:
            raise ValueError(f"an edit is (start, end, replacement), got {edit!r}")
        start, end, repl = int(edit[0]), int(edit[1]), str(edit[2])
        if not pos <= start <= end <= len(original):
            raise ValueError(f"edit {edit!r} overlaps another or falls outside the original "
                             f"({len(original)} characters)")
        parts.append(_plain(original[pos:start]))
        rebuilt += [original[pos:start], repl]
        gone, new = original[start:end], repl
        if len(gone) == 1 and len(new) == 1:  # one character for another (e.g. a homoglyph): the new one, marked
            title = html.escape(f"{_name(gone)} -> {_name(new)}")
            shown = _edited(new) if _is_invisible(new) or new in _WHITESPACE else html.escape(new)
            parts.append(f'<ins class="edit sub" title="{title}">{shown}</ins>')
        elif gone and new and (kind := _swap_class(original, start, end, new, state)):
            misfit = misfits is not None and (start, end) in misfits
            if counts is not None:
                counts[kind] = counts.get(kind, 0) + 1
                if misfit:
                    counts["ctx_fail"] = counts.get("ctx_fail", 0) + 1
            note = "; does not fit its sentence (context meter)" if misfit else \
                ("; fits its sentence (context meter)" if misfits is not None else "")
            title = html.escape(plain_text(f"{_SWAP_CLASS_NAMES[kind]}: {gone} -> {new}{note}"))
            parts.append(f'<span class="edit rep swap v-{kind}{" ctx-fail" if misfit else ""}" title="{title}">'
                         f'<del>{_edited(gone)}</del><ins>{_edited(new)}</ins></span>')
        elif gone and new:
            parts.append(f'<span class="edit rep"><del>{_edited(gone)}</del><ins>{_edited(new)}</ins></span>')
        elif gone:
            parts.append(f'<del class="edit del">{_edited(gone)}</del>')
        elif new:
            parts.append(f'<ins class="edit ins">{_edited(new)}</ins>')
        pos = end
    parts.append(_plain(original[pos:]))
    rebuilt.append(original[pos:])
    if text is not None and "".join(rebuilt) != text:
        raise ValueError("the stored edits do not rebuild the stored attacked text")
    return "".join(parts)


_SWAP_LEGEND = "".join(f'<span class="edit rep swap v-{k}" title="{html.escape(v)}"><ins>{html.escape(v)}</ins></span> '
                       for k, v in _SWAP_CLASS_NAMES.items()) + \
    "(synonyms and morphological variants keep the meaning; antonyms, sister terms and unrelated words change it); " \
    '<span class="edit rep swap ctx-fail"><ins>struck through</ins></span>: the swap does not fit its sentence ' \
    "(the context meter: the perplexity meter's language model finds the sentence much less likely with it); a " \
    "valid swap is a synonym or morphological variant that is not struck through"


def _score_lookup(scores: pd.DataFrame) -> tuple[dict, list[str], list[str]]:
    if "defense" not in scores.columns:
        scores = scores.assign(defense=CLEAN)
    scores = scores.assign(defense=scores["defense"].fillna(CLEAN))
    look = {(d, a, str(i), det): float(s) for d, a, i, det, s in
            zip(scores["defense"], scores["attack"], scores["id"], scores["detector"], scores["score"])}
    detectors = sorted(set(scores["detector"]))
    defenses = sorted(set(scores["defense"]) - {CLEAN})
    return look, detectors, defenses


def _fmt(v: float) -> str:
    return "n/a" if v is None or math.isnan(v) else f"{v:.3f}"


def documents_page(store_or_path, run_id: str | None = None) -> str:
    """The HTML page of a finished run's attacked documents (the latest run by default)."""
    from .card import check_run_id, open_store
    from .documents import run_documents
    from humanize.benchmarks.runner.manifest import run_config

    check_run_id(run_id)
    store, close = open_store(store_or_path)
    try:
        run_id, config = run_config(store, run_id)
        docs = run_documents(store, run_id, clean=False)
        tables = store.run_tables(run_id)
        scores = tables["scores"]
        misfit_of = _misfits(tables.get("quality"))
    finally:
        if close:
            store.close()
    look, detectors, defenses = _score_lookup(scores)
    # shown text: escaped, invisible characters marked; attribute values: escaped, invisible characters as ⟨U+XXXX⟩
    e, attr = html_text, (lambda s: html.escape(plain_text(s)))
    rows = []
    for order, r in enumerate(docs.itertuples(index=False)):
        doc_id = str(r.id)
        attrs = [f'data-attack="{attr(str(r.attack))}"', f'data-order="{order}"']
        counts: dict = {}
        marked = render_edits(r.original, r.edits, r.text, counts=counts,
                              misfits=misfit_of.get((str(r.attack), doc_id)))
        swaps = "".join(f' · <span class="swap v-{k}">{counts[k]} {e(_SWAP_CLASS_NAMES[k])}</span>'
                        for k in _SWAP_CLASS_NAMES if k in counts)
        if "ctx_fail" in counts:
            swaps += f' · <span class="swap ctx-fail">{counts["ctx_fail"]} not fitting their sentence</span>'

        cells = [f'<td class="attack">{e(str(r.attack))}</td>',
                 f'<td class="doc"><div class="id">{e(doc_id)} · {e(str(r.domain))} · {len(r.edits)} edit'
                 f'{"" if len(r.edits) == 1 else "s"}{swaps}</div>'
                 f'<div class="text">{marked}</div></td>']
        for k, det in enumerate(detectors):
            before = look.get((CLEAN, CLEAN, doc_id, det), math.nan)
            after = look.get((CLEAN, str(r.attack), doc_id, det), math.nan)
            change = after - before
            attrs.append(f'data-change-{k}="{"nan" if math.isnan(change) else repr(change)}"')
            cls = "" if math.isnan(change) or change == 0 else (" down" if change < 0 else " up")
            extra = "".join(
                f'<div class="def">{e(d)}: {_fmt(look.get((d, CLEAN, doc_id, det), math.nan))} → '
                f'{_fmt(look.get((d, str(r.attack), doc_id, det), math.nan))}</div>' for d in defenses)
            cells.append(f'<td class="score{cls}"><span class="before">{_fmt(before)}</span> → '
                         f'<span class="after">{_fmt(after)}</span> <span class="change">'
                         f'({"n/a" if math.isnan(change) else f"{change:+.3f}"})</span>{extra}</td>')
        rows.append(f'<tr class="row" {" ".join(attrs)}>{"".join(cells)}</tr>')
    attacks = list(dict.fromkeys(docs["attack"].astype(str)))
    options = "".join(f'<option value="{attr(a)}">{e(a)}</option>' for a in attacks)
    sorts = "".join(f'<option value="{k}:asc">{e(d)}: largest score drop first</option>'
                    f'<option value="{k}:desc">{e(d)}: largest score rise first</option>'
                    for k, d in enumerate(detectors))
    head = "".join(f"<th>{e(d)}<br><small>clean → attacked (change)</small></th>" for d in detectors)
    meta = {"run_id": run_id, "dataset": config.dataset, "documents": len(docs), "attacks": attacks,
            "detectors": detectors, "defenses": defenses}
    return _fill(
        title=attr(plain_text(f"Documents of run {run_id}")), css=_CSS, js=_JS, options=options, sorts=sorts, head=head,
        rows="\n".join(rows), n=str(len(docs)), meta=attr(json.dumps(meta)), swap_legend=_SWAP_LEGEND,
        intro=e(f"Run {run_id} on dataset {config.dataset}: {len(docs)} attacked machine texts, "
                f"{len(attacks)} attacks, detectors {', '.join(detectors)}. Scores: higher = more machine-like; "
                "a drop means the attack pushed the text toward human."
                + (f" Defended scores ({', '.join(defenses)}) below each pair." if defenses else "")))


def _misfits(quality) -> dict:
    """``{(attack, document id): {(start, end), ...}}``: the swaps the context meter found not fitting their
    sentence (the quality table's ``context_misfits``); a document without the meter's figure is absent."""
    if quality is None or not len(quality) or "context_misfits" not in quality.columns:
        return {}
    out = {}
    for attack, doc_id, spans in zip(quality["attack"], quality["id"], quality["context_misfits"]):
        if isinstance(spans, str):
            out[(str(attack), str(doc_id))] = {tuple(int(x) for x in sp.split(":")) for sp in spans.split()}
    return out


def _fill(**values: str) -> str:
    """The page template with each ``@@name@@`` replaced in one pass (inserted text is never rescanned)."""
    return re.sub(r"@@(\w+)@@", lambda m: values[m.group(1)], _PAGE)


def write_documents_page(store_or_path, path, run_id: str | None = None) -> Path:
    """Write :func:`documents_page` to ``path`` (UTF-8); returns the path."""
    page = documents_page(store_or_path, run_id)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_text(path, page)


_CSS = """
body{font:14px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.5rem;color:#1d2430}
h1{font-size:1.4rem;margin:0 0 .3rem}
.controls{position:sticky;top:0;background:#fff;padding:.5rem 0;border-bottom:1px solid #d5dbe3;z-index:1}
.controls label{margin-right:1.2rem}
.legend span{margin-right:.8rem}
table{border-collapse:collapse;width:100%;margin-top:.6rem}
th,td{border:1px solid #d5dbe3;padding:.35rem .5rem;vertical-align:top;text-align:left}
th{background:#eef2f7}
td.attack{white-space:nowrap;font-weight:600}
td.doc{min-width:28rem;max-width:52rem}
.id{color:#66707d;font-size:.8rem}
.text{white-space:pre-wrap;overflow-wrap:anywhere}
td.score{white-space:nowrap;font-variant-numeric:tabular-nums}
td.score.down .change{color:#c53030;font-weight:600}
td.score.up .change{color:#2f855a}
.def{color:#66707d;font-size:.8rem}
del,del.edit{background:#fed7d7;color:#9b2c2c;text-decoration:line-through}
ins.edit.sub{background:#feebc8;color:#7b341e;border-bottom:2px solid #dd6b20}
ins,ins.edit{background:#c6f6d5;color:#22543d;text-decoration:none;border-bottom:2px solid #38a169}
.inv{font:600 .65rem ui-monospace,monospace;background:#faf089;color:#744210;border:1px solid #d69e2e;
border-radius:3px;padding:0 2px;margin:0 1px}
.ws{color:#805ad5;font-weight:600}
.cp{outline:1px dotted #805ad5}
.swap ins{border-bottom-width:3px}
.swap.v-synonym ins{background:#c6f6d5;border-color:#2f855a;color:#22543d}
.swap.v-morphological ins{background:#bee3f8;border-color:#2b6cb0;color:#2a4365}
.swap.v-hypernym ins{background:#fefcbf;border-color:#b7791f;color:#744210}
.swap.v-antonym ins{background:#e53e3e;border-color:#742a2a;color:#fff;font-weight:600}
.swap.v-sister ins{background:#fbd38d;border-color:#c05621;color:#7b341e}
.swap.v-unrelated ins{background:#fbb6ce;border-color:#b83280;color:#702459}
.swap.ctx-fail ins{text-decoration:line-through wavy #9b2c2c}
span.swap.ctx-fail:not(.edit){text-decoration:line-through wavy #9b2c2c}
.swap.v-non_word ins{background:#e2e8f0;border-color:#4a5568;color:#1a202c;border-style:dashed}
span.swap:not(.edit){padding:0 3px;border-radius:3px}
span.swap.v-synonym:not(.edit){background:#c6f6d5}span.swap.v-morphological:not(.edit){background:#bee3f8}
span.swap.v-hypernym:not(.edit){background:#fefcbf}span.swap.v-antonym:not(.edit){background:#e53e3e;color:#fff}
span.swap.v-sister:not(.edit){background:#fbd38d}span.swap.v-unrelated:not(.edit){background:#fbb6ce}
span.swap.v-non_word:not(.edit){background:#e2e8f0}
"""

_JS = """
(function(){
  var body=document.querySelector('#docs tbody');
  var rows=Array.prototype.slice.call(body.rows);
  var filter=document.getElementById('attack-filter'), sort=document.getElementById('sort');
  var shown=document.getElementById('shown');
  function apply(){
    var a=filter.value, n=0;
    rows.forEach(function(r){ r.hidden=(a!=='' && r.getAttribute('data-attack')!==a); if(!r.hidden) n++; });
    shown.textContent=n;
  }
  function reorder(){
    var v=sort.value, sorted=rows.slice();
    if(v){
      var p=v.split(':'), key='data-change-'+p[0], sign=(p[1]==='asc')?1:-1;
      sorted.sort(function(x,y){
        var a=parseFloat(x.getAttribute(key)), b=parseFloat(y.getAttribute(key));
        if(isNaN(a)!==isNaN(b)) return isNaN(a)?1:-1;
        if(!isNaN(a) && a!==b) return sign*(a-b);
        return x.getAttribute('data-order')-y.getAttribute('data-order');
      });
    } else {
      sorted.sort(function(x,y){ return x.getAttribute('data-order')-y.getAttribute('data-order'); });
    }
    sorted.forEach(function(r){ body.appendChild(r); });
  }
  filter.addEventListener('change',apply); sort.addEventListener('change',reorder);
  apply();
})();
"""

_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>@@title@@</title>
<meta name="humanize-run" content="@@meta@@">
<style>@@css@@</style></head><body>
<h1>@@title@@</h1>
<p>@@intro@@</p>
<div class="controls">
<label>Attack <select id="attack-filter"><option value="">all attacks</option>@@options@@</select></label>
<label>Sort <select id="sort"><option value="">document order</option>@@sorts@@</select></label>
<span>showing <b id="shown">@@n@@</b> of @@n@@</span>
<div class="legend"><span><del>deleted</del></span><span><ins>inserted</ins></span>
<span><ins class="edit sub" title="a character replaced by another">a</ins> one character replaced
(hover: by what)</span>
<span><span class="inv" title="an invisible character">ZWSP</span> invisible character (hover: code point)</span>
<span><span class="ws">\u2423</span> inserted/removed space, <span class="ws">\u21b5</span> line break</span>
<span><span class="cp">а</span> non-ASCII character in an edit (hover: code point)</span></div>
<div class="legend">A word replaced by a word, by its WordNet validity class (hover: the class):
@@swap_legend@@</div>
</div>
<table id="docs"><thead><tr><th>attack</th><th>original with the attack's edits</th>@@head@@</tr></thead>
<tbody>
@@rows@@
</tbody></table>
<script>@@js@@</script>
</body></html>
"""
