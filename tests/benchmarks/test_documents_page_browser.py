"""The documents page in a real headless browser (Debian's chromium, driven by Selenium through
chromium-driver): the highlighted edits are elements, the attack filter hides the other rows and
the sort orders rows by score change. A missing browser fails the test with what to install."""

from __future__ import annotations

import math

import pytest

from humanize.benchmarks.runner.config import AttackSpec, DetectorSpec, RunConfig
from humanize.benchmarks.reporting.documents_page import write_documents_page
from humanize.benchmarks.runner import run
from tests._browser import chromium


@pytest.fixture(scope="module")
def page_path(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("page")
    cfg = RunConfig(n=10, seed=4, db=str(tmp / "r.sqlite"), quality=False, n_boot=0, fprs=(0.2,), per_domain=False,
                    attacks=[AttackSpec("homoglyph", rates=[0.3]), AttackSpec("zero_width_space"),
                             AttackSpec("whitespace", rates=[0.5])],
                    detectors=[DetectorSpec("surface_probe"), DetectorSpec("tfidf_lr")])
    run(cfg, progress=False)
    return write_documents_page(cfg.db, tmp / "documents.html")


@pytest.fixture(scope="module")
def browser(page_path):
    with chromium(page_path.as_uri()) as driver:
        yield driver


def _rows(driver) -> list[dict]:
    """Every row in DOM order: its attack, score changes and whether it is shown."""
    return driver.execute_script(
        "return Array.from(document.querySelectorAll('#docs tbody tr')).map(function(r){"
        "return {attack: r.getAttribute('data-attack'), c0: r.getAttribute('data-change-0'),"
        " c1: r.getAttribute('data-change-1'), shown: r.offsetParent !== null};});")


def _choose(driver, select_id: str, value: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    Select(driver.find_element(By.ID, select_id)).select_by_value(value)


def test_highlighted_edits_are_elements_on_the_page(browser):
    from selenium.webdriver.common.by import By

    subs = browser.find_elements(By.CSS_SELECTOR, "tr[data-attack='homoglyph'] ins.edit.sub")
    assert subs and all(s.is_displayed() for s in subs[:5])
    assert "CYRILLIC" in " ".join(s.get_attribute("title") for s in subs) or \
           "GREEK" in " ".join(s.get_attribute("title") for s in subs)
    zw = browser.find_elements(By.CSS_SELECTOR, "tr[data-attack='zero_width_space'] ins.edit .inv")
    assert zw and zw[0].text == "ZWSP" and zw[0].get_attribute("title") == "U+200B ZERO WIDTH SPACE"
    assert zw[0].size["width"] > 0  # the invisible character is visible on the page
    ws = browser.find_elements(By.CSS_SELECTOR, "tr[data-attack='whitespace'] .edit .ws")
    assert ws


def test_choosing_an_attack_hides_the_other_rows(browser):
    from selenium.webdriver.common.by import By

    total = len(_rows(browser))
    _choose(browser, "attack-filter", "zero_width_space")
    rows = _rows(browser)
    shown = [r for r in rows if r["shown"]]
    assert shown and all(r["attack"] == "zero_width_space" for r in shown)
    assert all(not r["shown"] for r in rows if r["attack"] != "zero_width_space")
    assert browser.find_element(By.ID, "shown").text == str(len(shown))
    _choose(browser, "attack-filter", "")
    assert sum(r["shown"] for r in _rows(browser)) == total


def test_sorting_orders_rows_by_score_change(browser):
    for value, key, sign in (("0:asc", "c0", 1), ("1:desc", "c1", -1)):
        _choose(browser, "sort", value)
        changes = [float(r[key]) for r in _rows(browser)]
        finite = [c for c in changes if not math.isnan(c)]
        assert finite == sorted(finite, key=lambda c: sign * c)
        assert all(not math.isnan(c) for c in changes[:len(finite)])  # rows without a score go last
    _choose(browser, "attack-filter", "homoglyph")  # the filter still holds after a sort
    shown = [r for r in _rows(browser) if r["shown"]]
    assert shown and {r["attack"] for r in shown} == {"homoglyph"}
    desc = [float(r["c1"]) for r in shown]
    assert desc == sorted(desc, reverse=True)
