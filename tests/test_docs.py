"""The documentation site builds with warnings as errors (`bash scripts/docs.sh` runs the same
sphinx-build), its gallery examples run, and in a headless browser the catalogue generated from the
registries and a gallery page render. The docs' Python blocks are run by tests/test_readme.py."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from tests._browser import chromium

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site") / "html"
    # the command scripts/docs.sh runs; run_stale_examples: the gallery's examples run even when
    # an earlier build in this checkout ran them already
    cmd = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-E", "-q", "-b", "html",
           "-D", "sphinx_gallery_conf.run_stale_examples=1", str(DOCS), str(out)]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"sphinx-build failed (warnings are errors):\n{proc.stderr[-4000:]}"
    return out


@pytest.fixture(scope="module")
def catalogue_module():
    sys.path.insert(0, str(DOCS / "_ext"))
    try:
        yield importlib.import_module("humanize_catalogue")
    finally:
        sys.path.remove(str(DOCS / "_ext"))


def test_docs_script_is_the_documented_build_command():
    script = (ROOT / "scripts" / "docs.sh").read_text(encoding="utf-8")
    assert "-m sphinx -W --keep-going" in script and "docs/_build/html" in script
    assert "bash scripts/docs.sh" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_catalogue_rows_come_from_the_registries(catalogue_module):
    from humanize import attacks
    from humanize.attacks.registry import _registry

    class Shout(attacks.Attack):
        """Upper-cases the text (a test attack)."""

        name = "shout_catalogue_test"

        def __init__(self, rate: float = 0.3, seed: int = 0):
            self._init_params(locals())

    saved, origins = dict(_registry.entries), dict(_registry._origins)
    attacks.register("shout_catalogue_test", Shout)
    try:
        rows = {r["name"]: r for r in catalogue_module.rows("attacks")}
    finally:
        _registry.entries.clear()
        _registry.entries.update(saved)
        _registry._origins.clear()
        _registry._origins.update(origins)
    assert set(rows) == set(attacks.available()) | {"shout_catalogue_test"}
    assert rows["shout_catalogue_test"]["params"] == [("rate", 0.3), ("seed", 0)]
    assert rows["shout_catalogue_test"]["summary"] == "Upper-cases the text (a test attack)."
    assert rows["homoglyph"]["needs"] == [] and "RAID" in rows["homoglyph"]["note"]
    assert any(n.startswith("offline model qwen2.5-coder-0.5b-instruct (extra offline-models")
               for n in rows["paraphrase"]["needs"])
    assert catalogue_module.needs_of("tiiuae/falcon-7b") == ["hub: tiiuae/falcon-7b", "GPU"]
    assert catalogue_module.needs_of("openai-community/roberta-base-openai-detector") == [
        "hub: openai-community/roberta-base-openai-detector"]


def test_site_has_every_section_and_the_reference(site):
    for page in ("index", "getting-started", "catalogue", "reference", "tutorials/th-bench-study",
                 "tutorials/raid-leaderboard", "tutorials/audit-dataset", "howto/endpoints", "howto/ray",
                 "howto/plugins", "howto/defenses", "concepts/determinism", "concepts/fingerprints",
                 "concepts/protocols", "auto_examples/index", "contributing"):
        assert (site / f"{page}.html").is_file(), page
    ray = (site / "howto" / "ray.html").read_text(encoding="utf-8")
    assert "Capacity plan" in ray
    attacks_ref = (site / "_generated" / "humanize.attacks.html").read_text(encoding="utf-8")
    assert 'id="humanize.attacks.Homoglyph"' in attacks_ref


def test_catalogue_page_renders_in_a_browser(site):
    from selenium.webdriver.common.by import By

    from humanize import attacks, detectors
    from humanize.benchmarks.data import available_datasets

    with chromium((site / "catalogue.html").as_uri()) as driver:
        def names(kind):
            cells = driver.find_elements(By.CSS_SELECTOR, f"table.catalogue-{kind} tbody tr td:first-child")
            return [c.text for c in cells if c.is_displayed()]

        assert names("attacks") == attacks.available()
        assert names("detectors") == detectors.available()
        assert names("datasets") == available_datasets() and "raid" in names("datasets")
        assert "normalize" in names("defenses") and "perplexity" in names("meters")
        row = driver.find_element(By.XPATH, "//table[contains(@class,'catalogue-detectors')]"
                                            "//tr[td[1][normalize-space()='binoculars']]")
        assert "hub: tiiuae/falcon-7b" in row.text and "GPU" in row.text
        link = driver.find_element(By.XPATH, "//table[contains(@class,'catalogue-attacks')]"
                                             "//tr[td[1][normalize-space()='homoglyph']]/td[2]//a")
        assert link.get_attribute("href").endswith("_generated/humanize.attacks.html#humanize.attacks.Homoglyph")


def test_gallery_page_shows_its_figure_in_a_browser(site):
    from selenium.webdriver.common.by import By

    with chromium((site / "auto_examples" / "plot_rule_attacks.html").as_uri()) as driver:
        images = driver.find_elements(By.CSS_SELECTOR, "img.sphx-glr-single-img")
        assert images, "the gallery page has no figure"
        width = driver.execute_script("return arguments[0].complete && arguments[0].naturalWidth", images[0])
        assert width and width > 200  # the PNG the example drew, loaded
        text = driver.find_element(By.TAG_NAME, "article").text
        assert "homoglyph" in text and "% of characters in edits" in text  # the example's printed output
