"""The Dagster UI in a real browser, as a person sees it after two nightly runs on a fresh instance: the
regressed pair found from the asset catalog, then the pair's own partition, chart and check.

Debian's Chromium and chromedriver (installed by `.ci/run`), driven headless by Selenium; no browser is
ever downloaded. The webserver is started outside the checkout with `-m retrieval_pipeline.definitions`,
the command the README gives for any folder. Screenshots land in `.artifacts/browser/` (git-ignored) so
a failure can be looked at.
"""

from __future__ import annotations

import io
import time
from pathlib import Path

import pytest
from dagster import DagsterInstance
from dagster_test_project import degraded, write_project
from rich.console import Console
from webserver_helpers import REPO_ROOT, fresh_dagster_home, running_webserver

from retrieval_pipeline.cli.nightly import run_nightly

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1920,1200",  # a common desktop screen: the metadata table is as wide as its longest path
)
ARTIFACTS = REPO_ROOT / ".artifacts" / "browser"
PAGE_TIMEOUT_SECONDS = 45
REGRESSION = "Regression: top-1 hit rate dropped 33.3 pp (tolerance 10.0 pp)"

pytestmark = pytest.mark.skipif(
    not (CHROMIUM.exists() and CHROMEDRIVER.exists()),
    reason="Debian's chromium and chromium-driver are not installed (.ci/run installs them where apt-get can)",
)


@pytest.fixture
def browser(tmp_path):
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'chromium-profile'}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def nightly_twice(tmp_path, retrievers: tuple[str, ...]):
    """Two nightlies of set alpha on a fresh instance; before the second, `good` lost a1 and a2."""
    project = write_project(tmp_path / "project", sets=("alpha",), retrievers=retrievers)
    home = fresh_dagster_home(tmp_path / "dagster_home")
    output = io.StringIO()
    with DagsterInstance.from_config(str(home)) as instance:
        run_nightly(project.config, instance=instance, console=Console(file=output, width=160))
        project.write_run("good", degraded("a1", "a2"))
        second = run_nightly(project.config, instance=instance, console=Console(file=output, width=160))
    assert second.exit_code != 0 and REGRESSION in output.getvalue().replace("\n", " "), output.getvalue()
    return project, home


@pytest.fixture
def two_nightly_runs(tmp_path):
    """One set, one retriever: one partition keeps it quick."""
    return nightly_twice(tmp_path, ("good",))


@pytest.fixture
def one_of_two_pairs_regressed(tmp_path):
    """Two retrievers on one set; `other` answered the second night as the first."""
    return nightly_twice(tmp_path, ("good", "other"))


@pytest.mark.slow
def test_a_person_finds_the_regressed_pair_from_the_asset_catalog_without_opening_partitions(
    one_of_two_pairs_regressed, browser, tmp_path
):
    project, home = one_of_two_pairs_regressed
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    target = ["-m", "retrieval_pipeline.definitions"]
    with running_webserver(home, project.config, tmp_path / "webserver.log", target, cwd=tmp_path) as url:
        browser.get(f"{url}/assets")
        page_text_once_shown(browser, "leaderboard", "retrieval_evaluation")
        failed = assets_with_failed_checks(browser)
        browser.save_screenshot(str(ARTIFACTS / "catalog.png"))
        assert failed == ["leaderboard"]  # the one red asset of the catalog

        click_once_clickable(browser, "(//a[@href='/assets/leaderboard'])[1]")
        page_text_once_shown(browser, "Latest check results")
        click_once_clickable(browser, "//a[normalize-space()='Checks']")
        page = page_text_once_shown(browser, "every_pair_passes", "Latest execution", "alpha × good")
        browser.save_screenshot(str(ARTIFACTS / "leaderboard-check.png"))
        assert "Failed" in page and "Partition" in page
        assert f"1 of 2 pairs failed their latest check. alpha × good (regression): {REGRESSION}" in page
        assert "alpha × other" not in page.split("Latest execution")[1].split("Metadata")[0]


@pytest.mark.slow
def test_a_person_sees_the_history_chart_the_rates_and_the_check_verdict(two_nightly_runs, browser, tmp_path):
    project, home = two_nightly_runs
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    target = ["-m", "retrieval_pipeline.definitions"]
    with running_webserver(home, project.config, tmp_path / "webserver.log", target, cwd=tmp_path) as url:
        browser.get(f"{url}/assets/retrieval_evaluation?view=partitions&partition=good%7Calpha")
        page = page_text_once_shown(browser, "history_chart")
        browser.save_screenshot(str(ARTIFACTS / "evaluation-partition.png"))
        assert REGRESSION in page
        assert "66.7% (4/6)" in page  # rates read as percentages
        assert "errors first, then top-3 misses" in page

        click_once_clickable(browser, "//tr[td[normalize-space()='history_chart']]//a[normalize-space()='[Show Markdown]']")
        width, height = loaded_image_size(browser, "top-k hit rates of alpha × good")
        browser.save_screenshot(str(ARTIFACTS / "history-chart.png"))
        assert width > 0 and height > 0

        browser.get(f"{url}/assets/retrieval_evaluation?view=checks")
        page = page_text_once_shown(browser, "Latest execution", REGRESSION)
        browser.save_screenshot(str(ARTIFACTS / "regression-check.png"))
        assert "Failed" in page
        assert "-33.3 pp (baseline 100.0%, now 66.7%)" in page


def page_text_once_shown(browser, *texts: str) -> str:
    """The page's visible text once all `texts` are on it; Dagster's first-visit dialog is dismissed as a
    person would (Skip)."""
    deadline = time.monotonic() + PAGE_TIMEOUT_SECONDS
    page = ""
    while time.monotonic() < deadline:
        page = browser.execute_script(
            "for (const b of document.querySelectorAll('button')) { if (b.innerText.trim() === 'Skip') b.click(); }"
            "return document.body.innerText;"
        )
        if all(text in page for text in texts):
            return page
        time.sleep(0.5)
    browser.save_screenshot(str(ARTIFACTS / "timed-out.png"))
    pytest.fail(f"{texts} not shown within {PAGE_TIMEOUT_SECONDS}s; the page showed:\n{page[-2000:]}")


def click_once_clickable(browser, xpath: str) -> None:
    """Clicked as a person would once it is drawn and the first-visit dialog, which may open late, is
    dismissed (Skip)."""
    from selenium.common.exceptions import (
        ElementClickInterceptedException,
        NoSuchElementException,
        StaleElementReferenceException,
    )

    deadline = time.monotonic() + PAGE_TIMEOUT_SECONDS
    while True:
        page_text_once_shown(browser)
        try:
            browser.find_element("xpath", xpath).click()
            return
        except (ElementClickInterceptedException, NoSuchElementException, StaleElementReferenceException):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def assets_with_failed_checks(browser) -> list[str]:
    """The catalog rows marked with Dagster's failed-check icon, by asset name, once any is drawn (the
    statuses load after the rows)."""
    deadline = time.monotonic() + PAGE_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        names = browser.execute_script(
            "return Array.from(document.querySelectorAll(\"[aria-label='check_failed']\")).map(icon => {"
            "  let row = icon;"
            "  while (row && !row.querySelector(\"a[href^='/assets/']\")) row = row.parentElement;"
            "  return row ? row.querySelector(\"a[href^='/assets/']\").getAttribute('href').slice(8) : null;"
            "});"
        )
        if names:
            return names
        time.sleep(0.5)
    return []


def loaded_image_size(browser, alt_prefix: str) -> tuple[int, int]:
    deadline = time.monotonic() + PAGE_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        size = browser.execute_script(
            "const image = Array.from(document.images).find(i => i.alt.startsWith(arguments[0]));"
            "return image && image.complete ? [image.naturalWidth, image.naturalHeight] : null;",
            alt_prefix,
        )
        if size:
            return tuple(size)
        time.sleep(0.25)
    pytest.fail(f"no loaded image with alt text {alt_prefix!r}")
