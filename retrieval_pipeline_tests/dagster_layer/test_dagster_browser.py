"""The Dagster UI in a real browser, as a person sees it after two `retrieval-eval nightly` runs on a fresh
instance, the second after alpha × good lost two hits: that partition failed, its check failed and its
run failed; the other pairs materialized and passed; the label audit was refreshed by the second night;
the nights' runs show in the Timeline and the job's Runs. Then, as a person mends it, the regression is
undone and the failed run re-executed from its page: it succeeds and the partition turns green.

Debian's Chromium and chromedriver (installed by `.ci/run`), driven headless by Selenium; no browser is
ever downloaded. The nights are `nightly`'s default (runs launched against the code location), and the UI
is the command the second night printed (`dagster dev`: webserver, daemon and code server), started
outside the checkout. The two nights, the UI and the browser are shared by this module's tests, which run
in the file's order. Screenshots land in `.artifacts/browser/` (git-ignored) so a failure can be looked at.
"""

from __future__ import annotations

import io
import re
import shutil
import time
from collections import Counter

import pytest
from dagster_test_project import PERFECT, degraded, write_project
from rich.console import Console
from selenium import webdriver
from selenium.common.exceptions import ElementClickInterceptedException, NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.chrome.service import Service
from webserver_helpers import REPO_ROOT, fresh_dagster_home, printed_hint

from retrieval_pipeline.cli.nightly import run_nightly
from retrieval_pipeline.dagster_layer.definitions import EVALUATION_JOB, LEADERBOARD_JOB, RETRIEVERS_JOB, SETS_JOB
from retrieval_pipeline.dagster_layer.launched_runs import LOCATION, UI_COMMAND, LaunchedRuns

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
# The evaluation runs listed after the two nights: every pair's twice, but the regressed pair's second failed.
EVALUATIONS = Counter(
    {
        **{(EVALUATION_JOB, pair, "Success"): 2 for pair in PAIRS},
        **{(EVALUATION_JOB, "good|alpha", s): 1 for s in ("Success", "Failure")},
    }
)
ENDED = ("Success", "Failure", "Canceled")
RUN_STATUSES = (*ENDED, "Started", "Starting", "Queued", "Not started")
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
BUSY = """{
  runsOrError(filter: {statuses: [QUEUED, NOT_STARTED, STARTING, STARTED, CANCELING]}) { ... on Runs { results { runId } } }
  partitionBackfillsOrError(status: REQUESTED) { ... on PartitionBackfills { results { id } } }
}"""

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not (CHROMIUM and CHROMEDRIVER),
        reason="Debian's chromium and chromium-driver are not both on PATH (.ci/run installs them where apt-get can)",
    ),
]


@pytest.fixture(scope="module")
def nights_project(tmp_path_factory):
    return write_project(tmp_path_factory.mktemp("browser") / "project")


@pytest.fixture(scope="module")
def dagster_ui(nights_project):
    """The URL of the UI opened by the command the second night printed, on the instance of two nightlies
    of 2 sets × 2 retrievers; before the second, `good` lost a1 and a2 (alpha × good regresses, the other
    three pairs answer as the first night). The nights are `nightly`'s default, launched against the code
    location, so the UI can act on their runs; the command (`dagster dev`, with the daemon whose queue
    launches what the UI re-executes) runs outside the checkout."""
    folder = nights_project.root.parent
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        patch.setenv("DAGSTER_HOME", str(fresh_dagster_home(folder / "dagster_home")))
        first, _ = night(nights_project)
        nights_project.write_run("good", degraded("a1", "a2"))
        second, output = night(nights_project)
        assert (first, second) == (0, 1), output  # 1: a regression
        environment, command = printed_hint(output)
        assert command == list(UI_COMMAND), command
        with LaunchedRuns(environment) as ui:
            settle(ui)
            yield f"http://127.0.0.1:{ui.port}"


def settle(ui: LaunchedRuns) -> None:
    """Once nothing runs or waits: the daemon's automation sensor refreshes the leaderboard, the label audits
    and the agreements after the nights (as on a deployment), in runs of its own."""
    deadline = time.monotonic() + PAGE_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        busy = ui.query(BUSY)
        if not busy["runsOrError"]["results"] and not busy["partitionBackfillsOrError"]["results"]:
            return
        time.sleep(0.5)
    pytest.fail(f"runs still in progress after {PAGE_TIMEOUT_SECONDS}s: {busy}")


def night(project) -> tuple[int, str]:
    """`retrieval-eval nightly --config ...` as a user runs it: its exit code and what it printed."""
    output = io.StringIO()
    report = run_nightly(project.config, console=Console(file=output, width=200))
    return report.exit_code, output.getvalue()


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
    page = page_text_once_shown(browser, "no_regression\nFailed", "Latest execution")  # its status, in the list of checks

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
    assert Counter(runs) == EVALUATIONS, runs
    assert [status for _, pair, status in runs if pair == "good|alpha"] == ["Failure", "Success"]  # newest first

    browser.get(f"{dagster_ui}/runs?q%5B%5D=status%3AFAILURE&q%5B%5D=status%3ACANCELED")  # Runs' "Failed" tab
    page_text_once_shown(browser, "Status is any of")
    failed = runs_once_listed(browser)
    browser.save_screenshot(str(ARTIFACTS / "failed-runs.png"))
    assert failed == [(EVALUATION_JOB, "good|alpha", "Failure")]  # of every run of both nights (sets, audits, ...)


def test_the_label_audit_was_refreshed_by_the_second_night(dagster_ui, browser):
    browser.get(f"{dagster_ui}/assets/label_audit?view=partitions&partition=alpha")
    events = page_once_matching(browser, r"View all historical events \(([1-9]\d*)\)")  # once they are loaded
    page = page_text_once_shown(browser, "Materialized (2)", "Latest materialization")
    dots = browser.execute_script(STATUS_DOTS)
    browser.save_screenshot(str(ARTIFACTS / "label-audit.png"))
    assert "Failed (0)" in page and "Missing (0)" in page
    assert "alpha\nMaterialized\nLatest materialization" in page  # the latest shown
    # once a night, and once more when the daemon's automation sensor refreshed it after a night's evaluations
    assert int(events[1]) >= 2, page
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
    failed = "1 of 4 pairs failed their latest check. alpha × good (regression): Regression: top-1 hit rate dropped"
    page_text_once_shown(browser, "every_pair_passes", failed)  # once the UI shows the second night's check


def test_the_leaderboards_ranked_table_is_seen_whole_on_its_overview(dagster_ui, browser):
    """Latency and run ids are a second table (`leaderboard_runs`), so the ranked one is not cut."""
    browser.get(f"{dagster_ui}/assets/leaderboard")
    page_text_once_shown(browser, "leaderboard_runs", "judged")
    edges = once_shown(browser, lambda: browser.execute_script(TABLE_EDGES, "judged"), "the leaderboard table")
    browser.save_screenshot(str(ARTIFACTS / "leaderboard-overview.png"))
    assert edges["table"] <= edges["shown"], edges


def test_the_nights_runs_show_in_the_timeline_and_in_the_evaluation_jobs_runs_tab(dagster_ui, browser):
    browser.get(f"{dagster_ui}/overview/activity/timeline")
    page = page_text_once_shown(browser, LOCATION, f"{EVALUATION_JOB}\n{EVALUATION_JOB}\n")
    browser.save_screenshot(str(ARTIFACTS / "timeline.png"))
    assert "No runs or scheduled ticks" not in page
    for job in (SETS_JOB, RETRIEVERS_JOB, LEADERBOARD_JOB):  # a row a job, its name read twice
        assert f"{job}\n{job}\n" in page, page
    counts = re.search(rf"{EVALUATION_JOB}\n{EVALUATION_JOB}\n((?:\d+\n)+)", page)[1].split()
    assert sum(map(int, counts)) == len(PAIRS) * 2, page  # the runs of both nights, in one or more blocks

    browser.get(f"{dagster_ui}/locations/{LOCATION}/jobs/{EVALUATION_JOB}/runs")  # Jobs -> the job -> Runs
    page_text_once_shown(browser, "Job in", LOCATION)
    runs = runs_once_listed(browser)
    browser.save_screenshot(str(ARTIFACTS / "evaluation-job-runs.png"))
    assert Counter(runs) == EVALUATIONS, runs


def test_the_regressed_pair_re_executed_from_its_run_page_with_the_regression_undone_succeeds_and_turns_green(
    dagster_ui, browser, nights_project
):
    """Last of this module: it adds a run and turns the partition green."""
    browser.get(f"{dagster_ui}/runs?q%5B%5D=status%3AFAILURE&q%5B%5D=status%3ACANCELED")  # Runs -> Failed -> its run
    page_text_once_shown(browser, "Status is")
    click_once_clickable(browser, "//*[@data-index]//a[starts-with(@href, '/runs/')]")
    failed = once_shown(browser, lambda: run_heading(browser), "the run's status")
    assert failed[1] == "Failure"
    assert "partition: good|alpha" in page_text_once_shown(browser, "Re-execute all")

    nights_project.write_run("good", PERFECT)  # the regression undone
    click_once_clickable(browser, "//button[starts-with(normalize-space(), 'Re-execute all')]")

    def rerun_ended():  # the page the button opened: the new run's, once it ended
        heading = run_heading(browser)
        return heading if heading and heading[0] != failed[0] and heading[1] in ENDED else None

    rerun = once_shown(browser, rerun_ended, "the re-executed run, ended")
    page = page_text_once_shown(browser, "Re-executions (1)")
    browser.save_screenshot(str(ARTIFACTS / "re-executed-run.png"))
    assert rerun[1] == "Success" and "partition: good|alpha" in page, page
    assert re.search(rf"Re-executions \(1\)\n{failed[0]}ROOT\n.*?\n{rerun[0]}\n", page, re.DOTALL), page  # under its parent

    browser.get(f"{dagster_ui}/assets/retrieval_evaluation?view=partitions&partition=good%7Calpha")
    page = page_text_once_shown(browser, "Failed (0)", "Materialized (4)", f"Run\n{rerun[0]}")
    dots = browser.execute_script(STATUS_DOTS)
    browser.save_screenshot(str(ARTIFACTS / "re-executed-partitions.png"))
    assert dots == {"good": ["green"], "other": ["green"], "alpha": ["green"], "beta.small": ["green"]}
    assert "good|alpha\nMaterialized\nLatest materialization" in page


def run_heading(browser) -> tuple[str, str] | None:
    """The run page's short id and status, as its heading shows them."""
    found = re.search(r"Runs\n/\n(\w{8})\n(\w[\w ]*)\nRun of", browser.execute_script("return document.body.innerText"))
    return found and found.groups()


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


def page_once_matching(browser, pattern: str) -> re.Match:
    return once_shown(browser, lambda: re.search(pattern, browser.execute_script("return document.body.innerText")), pattern)


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
