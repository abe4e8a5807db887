"""A component class defined outside the package is fingerprinted with its code (issue #22): editing it
and rerunning cannot reuse cached results silently."""
from __future__ import annotations

import importlib
import sys
import textwrap

import pytest

from humanize import plugins
from humanize.params import class_source_digest
from humanize.attacks import Homoglyph
from humanize.detectors import FunctionDetector

CODE = textwrap.dedent('''
    from humanize.detectors.base import Detector

    class Lengthy(Detector):
        name = "lengthy"
        learnable = False
        needs_model = False

        def __init__(self, scale: float = 1.0):
            self.scale = scale

        def score(self, texts):
            return [len(t) * {factor} for t in texts]
''')


def _import_fresh(tmp_path, monkeypatch, name, factor):
    (tmp_path / f"{name}.py").write_text(CODE.format(factor=factor))
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop(name, None)
    importlib.invalidate_caches()
    return importlib.import_module(name).Lengthy


def test_an_edited_module_class_gets_a_new_fingerprint(tmp_path, monkeypatch):
    before = _import_fresh(tmp_path, monkeypatch, "srcfp_mod", 1)().fingerprint()
    same = _import_fresh(tmp_path, monkeypatch, "srcfp_mod", 1)()
    assert same.fingerprint() == before and same.provenance()["source"].startswith("source:")
    edited = _import_fresh(tmp_path, monkeypatch, "srcfp_mod", 2)()  # the same class name, parameters, version
    assert edited.fingerprint() != before
    sys.modules.pop("srcfp_mod", None)


def test_a_plugin_class_is_fingerprinted_by_its_file_digest(tmp_path, monkeypatch):
    monkeypatch.setattr(plugins, "_LOADED", {})
    path = tmp_path / "srcfp_plugin.py"
    path.write_text(CODE.format(factor=1))
    cls = plugins.load_plugin(path).Lengthy
    assert cls().provenance()["source"] == f"file:{plugins.file_digest(path)}"
    first = cls().fingerprint()
    monkeypatch.setattr(plugins, "_LOADED", {})
    sys.modules.pop("srcfp_plugin", None)
    path.write_text(CODE.format(factor=3))  # edited, then loaded again (a rerun)
    assert plugins.load_plugin(path).Lengthy().fingerprint() != first
    sys.modules.pop("srcfp_plugin", None)


def test_package_classes_carry_no_source_and_unreadable_ones_warn():
    assert class_source_digest(FunctionDetector) is None and class_source_digest(Homoglyph) is None
    assert "source" not in Homoglyph().provenance()
    namespace: dict = {"__name__": "srcfp_nowhere"}
    exec(CODE.format(factor=1), namespace)  # noqa: S102 - a class without a source file
    with pytest.warns(RuntimeWarning, match=r"^srcfp_nowhere\.Lengthy: its source cannot be read"):
        namespace["Lengthy"]().fingerprint()
