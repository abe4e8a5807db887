"""Headless Chromium for the browser tests (Debian's chromium and chromium-driver, driven by Selenium):
the documents page (tests/benchmarks/test_documents_page_browser.py) and the documentation site
(tests/test_docs.py). A missing browser fails the test with what to install."""

from __future__ import annotations

import shutil
from contextlib import contextmanager

import pytest

INSTALL = ("run `bash scripts/setup_browser.sh` as root (installs Debian's chromium and chromium-driver with "
           "apt-get) and `pip install -e '.[test]'` (Selenium)")


def browser_paths() -> tuple[str, str]:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not browser or not driver:
        pytest.fail(f"the browser test needs headless Chromium and its driver (found chromium={browser}, "
                    f"chromedriver={driver}): {INSTALL}", pytrace=False)
    return browser, driver


@contextmanager
def chromium(url: str, window: str = "1400,1000"):
    """A headless Chromium showing ``url``; quit on exit."""
    browser_bin, driver_bin = browser_paths()
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.fail(f"the browser test needs the selenium package: {INSTALL}", pytrace=False)
    options = webdriver.ChromeOptions()
    options.binary_location = browser_bin
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                f"--window-size={window}"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(executable_path=driver_bin), options=options)
    try:
        driver.get(url)
        yield driver
    finally:
        driver.quit()
