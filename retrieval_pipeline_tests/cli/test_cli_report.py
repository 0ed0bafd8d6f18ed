"""`retrieval-eval report` (HTML page, Markdown summary) and `run --markdown`."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import yaml
from chart_helpers import png_size
from cli_helpers import HALF


def run(cli, project, retriever="good", *extra):
    return cli("run", "cli.small", retriever, "--config", str(project.config), "--show", "none", *extra)


class Page(HTMLParser):
    """What a browser would fetch to show the page: every src and stylesheet link."""

    def __init__(self):
        super().__init__()
        self.sources: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        self.sources += [attributes[name] for name in ("src", "href") if name in attributes and tag != "a"]

    def handle_data(self, data):
        self.text.append(data)


def test_run_writes_a_markdown_summary_with_the_verdict_and_a_rates_table(cli, project, tmp_path):
    run(cli, project)
    project.rankings("good", HALF)
    summary = tmp_path / "summary.md"

    result = run(cli, project, "good", "--markdown", str(summary))

    assert result.exit_code == 0, result.stderr
    text = summary.read_text(encoding="utf-8")
    assert "**REGRESSION**: Regression: top-1 hit rate dropped 50.0 pp (tolerance 10.0 pp)" in text
    assert "| top-1 hit rate | 50.0% (1/2), 95% CI 9.5–90.5% | 100.0% | -50.0 pp |" in text
    assert "Flipped hit → miss (1, 1 with unjudged documents in their place): q2" in text
    assert "| near-duplicate | 1 | 0.0% | -100.0 pp | 0.0% | -100.0 pp |" in text


def test_report_writes_an_offline_html_page_and_the_same_markdown_as_run(cli, project, tmp_path):
    run(cli, project)
    project.rankings("good", HALF)
    run(cli, project, "good", "--markdown", str(tmp_path / "from-run.md"))
    page, summary = tmp_path / "report.html", tmp_path / "report.md"

    result = cli("report", "cli.small", "good", "--config", str(project.config), "--html", str(page), "--markdown", str(summary))

    assert result.exit_code == 0, result.stderr
    assert summary.read_text(encoding="utf-8") == (tmp_path / "from-run.md").read_text(encoding="utf-8")
    parser = Page()
    parser.feed(page.read_text(encoding="utf-8"))
    assert parser.sources and all(source.startswith("data:image/png;base64,") for source in parser.sources)
    assert png_size(parser.sources[0])[0] > 0
    text = re.sub(r"\s+", " ", " ".join(parser.text))
    assert "REGRESSION Regression: top-1 hit rate dropped 50.0 pp" in text
    assert "Hit → miss (1, 1 with unjudged documents in their place): q2" in text
    assert "q2 miss gap near-duplicate d2, d3 x, y, z" in text  # misses first, every id


def test_report_escapes_ids_and_errors_from_users_files(cli, project, tmp_path):
    project.rankings("good", {"alpha question": ["<script>alert(1)</script>"], "beta question": ["d3"]})
    run(cli, project)
    page = tmp_path / "report.html"
    assert cli("report", "cli.small", "good", "--config", str(project.config), "--html", str(page)).exit_code == 0
    html = page.read_text(encoding="utf-8")
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_report_without_files_prints_the_markdown_summary(cli, project):
    run(cli, project)
    result = cli("report", "cli.small", "good", "--config", str(project.config))
    assert result.exit_code == 0
    assert result.stdout.startswith("### Retrieval quality: `cli.small` × `good`")
    assert "**BASELINE**: No baseline: recorded as the baseline." in result.stdout


def test_report_of_a_pair_never_run_exits_1_listing_the_stored_pairs(cli, project, tmp_path):
    run(cli, project)
    result = cli("report", "cli.small", "half", "--config", str(project.config), "--html", str(tmp_path / "r.html"))
    assert result.exit_code == 1
    assert "no stored runs of set 'cli.small' against retriever 'half'" in result.stderr
    assert "stored: cli.small × good" in result.stderr
    assert not (tmp_path / "r.html").exists()


def test_an_incomplete_latest_run_is_reported_as_incomplete_not_compared(cli, project, tmp_path):
    run(cli, project)
    run(cli, project, "flaky")
    project.rankings("good", {"alpha question": ["d1"], "beta question": None})
    run(cli, project)
    summary = tmp_path / "s.md"
    assert cli("report", "cli.small", "good", "--config", str(project.config), "--markdown", str(summary)).exit_code == 0
    text = summary.read_text(encoding="utf-8")
    assert "**INCOMPLETE**: Incomplete run: 1 of 2 questions failed (q2)" in text
    assert "| top-1 hit rate | 50.0% (1/2), 95% CI 9.5–90.5% | 100.0% | — |" in text and "Flipped" not in text


def test_after_a_relabel_the_summary_says_the_baseline_was_rescored_under_the_current_labels(cli, project, tmp_path):
    run(cli, project)
    small = yaml.safe_load((project.root / "small.yaml").read_text(encoding="utf-8"))
    small["questions"][1]["expected_document_ids"] = ["d2"]  # relabelled: q2 stays compared, the baseline rescored
    (project.root / "small.yaml").write_text(yaml.safe_dump(small, sort_keys=False), encoding="utf-8")
    summary = tmp_path / "s.md"

    assert run(cli, project, "good", "--markdown", str(summary)).exit_code == 0

    text = summary.read_text(encoding="utf-8")
    assert "**PASS**" in text
    assert (
        "**PASS**: No regression on the 2 compared questions: top-1 +0.0 pp, top-3 +0.0 pp. "
        "Baseline rescored under the current labels: 1 relabelled question kept."
    ) in text
    assert "Set changed since the baseline: 1 relabelled; compared on 2 questions." in text


def test_report_shows_the_verdict_recorded_with_the_run_not_todays(cli, project):
    run(cli, project)
    project.rankings("good", HALF)
    gate = run(cli, project, "good", "--fail-on-regression")  # the CI gate: failed with the configuration's 10 pp
    config = yaml.safe_load(project.config.read_text(encoding="utf-8"))
    config["tolerances"] = {"max_top1_drop": 0.6, "max_top3_drop": 0.6}  # relaxed afterwards
    project.config.write_text(yaml.safe_dump(config), encoding="utf-8")

    result = cli("report", "cli.small", "good", "--config", str(project.config))

    assert gate.exit_code == 1
    assert result.exit_code == 0, result.stderr
    assert "**REGRESSION**: Regression: top-1 hit rate dropped 50.0 pp (tolerance 10.0 pp)" in result.stdout
    assert "PASS" not in result.stdout and "Re-judged" not in result.stdout


def test_rejudge_judges_with_todays_tolerances_and_says_so(cli, project):
    run(cli, project)
    project.rankings("good", HALF)
    run(cli, project, "good", "--max-top1-drop", "0.6", "--max-top3-drop", "0.6")  # passed its own check

    recorded = cli("report", "cli.small", "good", "--config", str(project.config))
    rejudged = cli("report", "cli.small", "good", "--config", str(project.config), "--rejudge")

    assert "**PASS**: No regression: top-1 -50.0 pp, top-3 -50.0 pp." in recorded.stdout
    assert "**REGRESSION**" in rejudged.stdout  # with the configuration's 10 pp
    assert (
        "_Re-judged (--rejudge) with the configuration's tolerances of today; the verdict recorded with the run was pass._"
        in rejudged.stdout
    )
