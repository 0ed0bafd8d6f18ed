"""The Dagster UI in a real browser, as a person sees it after two `retrieval-eval nightly` runs on a fresh
instance, the second after alpha × good lost two hits: that partition failed, its check failed and its
run failed; the other pairs materialized and passed; the label audit was refreshed by the second night.

Debian's Chromium and chromedriver (installed by `.ci/run`), driven headless by Selenium; no browser is
ever downloaded. The webserver is started outside the checkout with `-m retrieval_pipeline.definitions`,
the command the README gives for any folder. The two nights, the webserver and the browser are shared by
this module's tests. Screenshots land in `.artifacts/browser/` (git-ignored) so a failure can be looked at.
"""

from __future__ import annotations

import io
import re
import shutil
import time
from collections import Counter

import pytest
from dagster import DagsterInstance
from dagster_test_project import degraded, write_project
from rich.console import Console
from selenium import webdriver
from selenium.common.exceptions import ElementClickInterceptedException, NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.chrome.service import Service
from webserver_helpers import REPO_ROOT, fresh_dagster_home, running_webserver

from retrieval_pipeline.cli.nightly import run_nightly
from retrieval_pipeline.dagster_layer.definitions import EVALUATION_JOB

CHROMIUM, CHROMEDRIVER = shutil.which("chromium"), shutil.which("chromedriver")
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
PAIRS = ("good|alpha", "good|beta.small", "other|alpha", "other|beta.small")  # partition keys: retriever|set
RUN_STATUSES = ("Success", "Failure", "Canceled", "Started", "Starting", "Queued", "Not started")
SKIP_FIRST_VISIT_DIALOG = "for (const b of document.querySelectorAll('button')) { if (b.innerText.trim() === 'Skip') b.click(); }"
# Dagster draws a partition's status as a coloured dot after its name (`background: var(--color-accent-red)`,
# `background-color: ...` in a check's Partitions tab).
STATUS_DOTS = r"""
return Object.fromEntries(Array.from(document.querySelectorAll('div[data-tooltip]')).map(name => [
  name.dataset.tooltip,
  Array.from(name.parentElement.children).filter(dot => dot.style.borderRadius === '100%')
    .map(dot => (dot.getAttribute('style').match(/background[-a-z]*: var\(--color-accent-(\w+)\)/) || [])[1] || dot.getAttribute('style')),
]).filter(([, dots]) => dots.length));
"""
# An asset's row in the catalog (the largest block holding its link and no other asset's), then its status
# cell: its text, and its icons (`aria-label` partition_success / partition_failure ..., colour, count beside).
CATALOG_STATUS = r"""
let row = document.querySelector(`a[href='/assets/${arguments[0]}']`);
while (row && row.parentElement && row.parentElement.querySelectorAll("a[href^='/assets/']").length === 1) row = row.parentElement;
const icons = row ? Array.from(row.querySelectorAll("[aria-label^='partition_']")) : [];
if (!icons.length) return null;
let cell = icons[0];
while (!cell.innerText.includes('partitions')) cell = cell.parentElement;
if (!/\d+ partitions/.test(cell.innerText)) return null;  // "- partitions": the statuses are still loading
return [cell.innerText, icons.map(icon => [icon.getAttribute('aria-label'),
  (icon.style.getPropertyValue('--icon-color').match(/-(\w+)\)$/) || [])[1], icon.parentElement.innerText.trim()])];
"""
# A metadata table whose header has the given column, as drawn: its right edge, and that of the first box
# around it that clips what overflows (the Overview's metadata table scrolls sideways).
TABLE_EDGES = r"""
const table = Array.from(document.querySelectorAll('table')).find(t =>
  Array.from(t.querySelectorAll('th')).some(h => h.closest('table') === t && h.innerText.trim() === arguments[0]));
if (!table) return null;
let box = table.parentElement;
while (box && getComputedStyle(box).overflowX === 'visible') box = box.parentElement;
return box ? {table: table.getBoundingClientRect().right, shown: box.getBoundingClientRect().right} : null;
"""

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not (CHROMIUM and CHROMEDRIVER),
        reason="Debian's chromium and chromium-driver are not both on PATH (.ci/run installs them where apt-get can)",
    ),
]


@pytest.fixture(scope="module")
def dagster_ui(tmp_path_factory):
    """The webserver's URL on the instance of two nightlies of 2 sets × 2 retrievers; before the second,
    `good` lost a1 and a2 (alpha × good regresses, the other three pairs answer as the first night)."""
    folder = tmp_path_factory.mktemp("browser")
    project = write_project(folder / "project")
    home = fresh_dagster_home(folder / "dagster_home")
    output = io.StringIO()
    with DagsterInstance.from_config(str(home)) as instance:
        first = run_nightly(project.config, instance=instance, console=Console(file=output, width=200))
        project.write_run("good", degraded("a1", "a2"))
        second = run_nightly(project.config, instance=instance, console=Console(file=output, width=200))
    assert (first.exit_code, second.exit_code) == (0, 1), output.getvalue()  # 1: a regression
    target = ["-m", "retrieval_pipeline.definitions"]
    with running_webserver(home, project.config, folder / "webserver.log", target, cwd=folder) as url:
        yield url


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    try:
        yield driver
    finally:
        driver.quit()


def test_the_regressed_pair_shows_failed_in_the_partitions_tab_and_the_other_pairs_materialized(dagster_ui, browser):
    browser.get(f"{dagster_ui}/assets/retrieval_evaluation?view=partitions&partition=good%7Calpha")
    page = page_text_once_shown(browser, "Failed (1)", "Materialized (3)", "did not materialize this asset")
    dots = browser.execute_script(STATUS_DOTS)
    browser.save_screenshot(str(ARTIFACTS / "evaluation-partitions.png"))
    assert "Missing (0)" in page
    # retrievers, then the sets of the selected retriever `good`: red is failed, green materialized
    assert dots == {"good": ["red", "green"], "other": ["green"], "alpha": ["red"], "beta.small": ["green"]}
    assert re.search(r"good\|alpha\n.*\nRun \w{8} failed, and did not materialize this asset\.", page, re.DOTALL), page


def test_the_no_regression_check_shows_that_partition_failed_and_the_others_passed(dagster_ui, browser):
    browser.get(f"{dagster_ui}/assets/retrieval_evaluation?view=checks")
    page = page_text_once_shown(browser, "no_regression", "Latest execution")
    assert "no_regression\nFailed" in page  # the check's own status, in the list of checks

    click_once_clickable(browser, "//button[@role='tab' and normalize-space()='Partitions']")
    page = page_text_once_shown(browser, "Failed (1)", "Passed (3)")
    assert "Execution Failed (0)" in page and "Missing (0)" in page
    click_once_clickable(browser, "//span[text()='good']")
    click_once_clickable(browser, "//span[text()='alpha']")
    page = page_text_once_shown(browser, "good|alpha\nFailed\nLatest execution", REGRESSION)
    dots = browser.execute_script(STATUS_DOTS)
    browser.save_screenshot(str(ARTIFACTS / "regression-check-partition.png"))
    assert "View all historical executions (2)" in page  # one per night
    assert dots == {"good": ["red"], "other": ["green"], "alpha": ["red"], "beta.small": ["green"]}


def test_the_regressed_pairs_run_shows_failure_and_every_other_run_success(dagster_ui, browser):
    browser.get(f"{dagster_ui}/runs?q%5B%5D=job%3A{EVALUATION_JOB}")  # Runs, filtered to the evaluations
    page_text_once_shown(browser, "Job is")
    runs = runs_once_listed(browser)
    browser.save_screenshot(str(ARTIFACTS / "evaluation-runs.png"))
    expected = [(EVALUATION_JOB, pair, "Success") for pair in (*PAIRS, *PAIRS)]  # two nights of every pair
    expected[0] = (EVALUATION_JOB, "good|alpha", "Failure")  # but the regressed pair's second
    assert Counter(runs) == Counter(expected), runs
    assert [status for _, pair, status in runs if pair == "good|alpha"] == ["Failure", "Success"]  # newest first

    browser.get(f"{dagster_ui}/runs?q%5B%5D=status%3AFAILURE&q%5B%5D=status%3ACANCELED")  # Runs' "Failed" tab
    page_text_once_shown(browser, "Status is any of")
    failed = runs_once_listed(browser)
    browser.save_screenshot(str(ARTIFACTS / "failed-runs.png"))
    assert failed == [(EVALUATION_JOB, "good|alpha", "Failure")]  # of every run of both nights (sets, audits, ...)


def test_the_label_audit_was_refreshed_by_the_second_night(dagster_ui, browser):
    browser.get(f"{dagster_ui}/assets/label_audit?view=partitions&partition=alpha")
    page = page_text_once_shown(browser, "Materialized (2)", "Latest materialization", "View all historical events (2)")
    dots = browser.execute_script(STATUS_DOTS)
    browser.save_screenshot(str(ARTIFACTS / "label-audit.png"))
    assert "Failed (0)" in page and "Missing (0)" in page
    assert "alpha\nMaterialized\nLatest materialization" in page  # materialized once a night, the latest shown
    assert dots == {"alpha": ["green"], "beta.small": ["green"]}


def test_the_catalog_counts_the_failed_partition_of_retrieval_evaluation(dagster_ui, browser):
    browser.get(f"{dagster_ui}/assets")
    text, icons = once_shown(browser, lambda: browser.execute_script(CATALOG_STATUS, "retrieval_evaluation"), "its status")
    counts = {(label, colour): count for label, colour, count in icons}
    browser.save_screenshot(str(ARTIFACTS / "catalog.png"))
    assert counts[("partition_success", "green")] == "3" and counts[("partition_failure", "red")] == "1", icons
    assert "4 partitions" in text and "All" not in text.split(), text  # not the "All ✓" of a fully materialized asset
    retrievers_text, _ = once_shown(browser, lambda: browser.execute_script(CATALOG_STATUS, "retriever_config"), "its status")
    assert "All" in retrievers_text.split()  # what a healthy partitioned asset shows there


def test_a_passed_pair_shows_its_rates_and_its_history_chart_and_the_leaderboard_check_names_the_failed_one(dagster_ui, browser):
    browser.get(f"{dagster_ui}/assets/retrieval_evaluation?view=partitions&partition=other%7Calpha")
    page = page_text_once_shown(browser, "history_chart", "errors first, then top-3 misses")
    assert "No regression: top-1 +0.0 pp, top-3 +0.0 pp." in page
    click_once_clickable(browser, "//tr[td[normalize-space()='history_chart']]//a[normalize-space()='[Show Markdown]']")
    width, height = loaded_image_size(browser, "top-k hit rates of alpha × other")
    browser.save_screenshot(str(ARTIFACTS / "history-chart.png"))
    assert width > 0 and height > 0

    browser.get(f"{dagster_ui}/assets/leaderboard?view=checks")
    page = page_text_once_shown(browser, "every_pair_passes", "alpha × good")
    assert "1 of 4 pairs failed their latest check. alpha × good (regression): Regression: top-1 hit rate dropped" in page


def test_the_leaderboards_ranked_table_is_seen_whole_on_its_overview(dagster_ui, browser):
    """Latency and run ids are a second table (`leaderboard_runs`), so the ranked one is not cut."""
    browser.get(f"{dagster_ui}/assets/leaderboard")
    page_text_once_shown(browser, "leaderboard_runs", "judged")
    edges = once_shown(browser, lambda: browser.execute_script(TABLE_EDGES, "judged"), "the leaderboard table")
    browser.save_screenshot(str(ARTIFACTS / "leaderboard-overview.png"))
    assert edges["table"] <= edges["shown"], edges


def loaded_image_size(browser, alt_prefix: str) -> tuple[int, int]:
    size = once_shown(
        browser,
        lambda: browser.execute_script(
            "const image = Array.from(document.images).find(i => i.alt.startsWith(arguments[0]));"
            "return image && image.complete ? [image.naturalWidth, image.naturalHeight] : null;",
            alt_prefix,
        ),
        f"a loaded image with alt text {alt_prefix!r}",
    )
    return tuple(size)


def once_shown(browser, read, what: str):
    """`read()` once it returns something, Dagster's first-visit dialog dismissed as a person would (Skip)."""
    deadline = time.monotonic() + PAGE_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        browser.execute_script(SKIP_FIRST_VISIT_DIALOG)
        value = read()
        if value:
            return value
        time.sleep(0.5)
    browser.save_screenshot(str(ARTIFACTS / "timed-out.png"))
    page = browser.execute_script("return document.body.innerText")
    pytest.fail(f"{what} not shown within {PAGE_TIMEOUT_SECONDS}s at {browser.current_url}; the page showed:\n{page[-2000:]}")


def page_text_once_shown(browser, *texts: str) -> str:
    def page_with_texts():
        page = browser.execute_script("return document.body.innerText")
        return page if all(text in page for text in texts) else None

    return once_shown(browser, page_with_texts, repr(texts))


def runs_once_listed(browser) -> list[tuple[str, str, str]]:
    """The rows of the Runs table, newest first, as (job, partition, status), once they show a status."""

    def rows():
        texts = browser.execute_script("return Array.from(document.querySelectorAll('[data-index]')).map(r => r.innerText)")
        listed = [run_row(text) for text in texts]
        return listed if listed and all(status for *_, status in listed) else None

    return once_shown(browser, rows, "runs with their status")


def run_row(text: str) -> tuple[str, str, str]:
    lines = [line.strip() for line in text.splitlines()]
    job = next((line for line in lines if line.endswith("_job")), "")
    partition = next((line.removeprefix("partition: ") for line in lines if line.startswith("partition: ")), "")
    return job, partition, next((line for line in lines if line in RUN_STATUSES), "")


def click_once_clickable(browser, xpath: str) -> None:
    """Clicked as a person would once it is drawn and the first-visit dialog, which may open late, is
    dismissed (Skip)."""
    deadline = time.monotonic() + PAGE_TIMEOUT_SECONDS
    while True:
        browser.execute_script(SKIP_FIRST_VISIT_DIALOG)
        try:
            browser.find_element("xpath", xpath).click()
            return
        except (ElementClickInterceptedException, NoSuchElementException, StaleElementReferenceException):
            if time.monotonic() > deadline:
                browser.save_screenshot(str(ARTIFACTS / "timed-out.png"))
                raise
            time.sleep(0.5)
