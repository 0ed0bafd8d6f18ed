"""The console script as a real process: start-up cost, no Dagster import, clean stdout, exit codes;
and the lazy command group other modules extend with one line."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
import time

import click
import pytest
from cli_helpers import console_script, subprocess_env
from click.testing import CliRunner

from retrieval_pipeline.cli import COMMANDS, LazyGroup, main

HEAVY = ("dagster", "pydantic", "pyarrow", "pandas", "bm25s", "rich", "yaml")


def python(code: str, *paths, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=subprocess_env(*paths),
        cwd=cwd,
        timeout=120,
    )


@pytest.mark.slow
def test_help_lists_every_command_and_imports_nothing_heavy():
    result = python(
        f"""
        import sys
        from retrieval_pipeline.cli import main
        try:
            main(["--help"])
        except SystemExit as exit:
            assert exit.code == 0, exit.code
        loaded = sorted({{m.split(".")[0] for m in sys.modules}} & set({HEAVY!r}))
        print("LOADED", loaded, file=sys.stderr)
        """
    )

    assert result.returncode == 0, result.stderr
    assert "LOADED []" in result.stderr
    for name in ("run", "compare", "list", "history", "prune", "import"):
        assert f"  {name} " in result.stdout


@pytest.mark.slow
def test_help_answers_in_a_fraction_of_a_second():
    [*command] = console_script()
    timings = []
    for _ in range(3):
        started = time.perf_counter()
        result = subprocess.run([*command, "--help"], capture_output=True, text=True, env=subprocess_env(), timeout=60)
        timings.append(time.perf_counter() - started)
        assert result.returncode == 0
    assert min(timings) < 1.0, timings  # typically about 0.1 s; generous for loaded CI machines


@pytest.mark.slow
def test_run_never_imports_dagster(project, plugins):
    result = python(
        f"""
        import sys
        from retrieval_pipeline.cli import main
        main(["run", "cli.small", "good", "--config", {str(project.config)!r}, "--json"], standalone_mode=False)
        assert not [m for m in sys.modules if m.split(".")[0] == "dagster"], "dagster was imported"
        """,
        plugins,
    )

    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["top1_hit_rate"] == 1.0


@pytest.mark.slow
def test_a_run_file_evaluation_with_its_baseline_never_imports_pandas(project):
    """pyarrow imports pandas (0.2 s, ~35 MiB) on its first `pa.array` or `to_numpy`, or reading a time
    zone; a run file read, scored, compared with its baseline, saved and printed as JSON needs none of it."""
    (project.root / "run.trec").write_text("q1 Q0 d1 1 2.0 t\nq1 Q0 x 2 1.0 t\nq2 Q0 y 1 3.0 t\nq2 Q0 d2 2 2.0 t\n")
    project.config.write_text(
        project.config.read_text() + "  replayed:\n    kind: run_file\n    path: run.trec\n    question_set: cli.small\n"
    )
    command = ["run", "cli.small", "replayed", "--config", str(project.config), "--json"]
    code = f"""
        import sys
        from retrieval_pipeline.cli import main
        main({command!r}, standalone_mode=False)
        print("PANDAS", "pandas" in sys.modules, file=sys.stderr)
        """

    first, second = python(code), python(code)

    assert "PANDAS False" in first.stderr and "PANDAS False" in second.stderr, first.stderr + second.stderr
    rates = [
        (document["top1_hit_rate"], document["top3_hit_rate"]) for document in map(json.loads, (first.stdout, second.stdout))
    ]
    assert rates == [(0.5, 1.0), (0.5, 1.0)]
    assert json.loads(second.stdout)["regression"]["has_baseline"] is True


@pytest.mark.slow
def test_console_script_exit_codes_and_clean_json_stdout(project, plugins):
    script = [*console_script()]
    env = subprocess_env(plugins)

    def run(*arguments):
        return subprocess.run([*script, *arguments], capture_output=True, text=True, env=env, timeout=120)

    first = run("run", "cli.small", "good", "--config", str(project.config), "--json")
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["regression"]["summary"] == "No baseline: recorded as the baseline."
    assert first.stderr == ""  # no progress bar off a terminal

    project.rankings("good", {"alpha question": ["d1"], "beta question": ["x"]})
    flagged = run("run", "cli.small", "good", "--config", str(project.config), "--json", "--fail-on-regression")
    assert flagged.returncode == 1
    assert json.loads(flagged.stdout)["regression"]["is_regression"] is True
    assert flagged.stderr.startswith("error: Regression:") and "Traceback" not in flagged.stderr

    unknown = run("run", "cli.small", "nope", "--config", str(project.config))
    assert (unknown.returncode, unknown.stdout) == (1, "")
    assert unknown.stderr == "error: unknown retriever 'nope'; available: flaky, good, half\n"

    usage = run("run", "cli.small")
    assert usage.returncode == 2 and "Missing argument 'RETRIEVER'" in usage.stderr

    incomplete = run("run", "cli.small", "flaky", "--config", str(project.config))
    assert incomplete.returncode == 3 and "Traceback" not in incomplete.stderr


@pytest.mark.slow
def test_run_file_replays_through_the_command_line(project, tmp_path):
    """The built-in run_file kind: a team's exported rankings measured and compared with no live retriever."""
    config = project.config.read_text() + textwrap.indent(
        textwrap.dedent(
            """\
            exported:
              kind: run_file
              path: exported.jsonl
              format: jsonl
              question_set: cli.small
            """
        ),
        "  ",
    )
    project.config.write_text(config)

    def export(rankings: dict[str, list[str]]) -> None:
        lines = [json.dumps({"query_id": qid, "document_ids": ids}) for qid, ids in rankings.items()]
        (project.root / "exported.jsonl").write_text("\n".join(lines) + "\n")

    script, env = console_script(), subprocess_env()
    env.pop("PYTHONPATH", None)

    def run(*arguments):
        return subprocess.run(
            [*script, *arguments, "--config", str(project.config)], capture_output=True, text=True, env=env, timeout=120
        )

    export({"q1": ["d1"], "q2": ["d2"]})
    assert "Top-1 hit rate: 100.0% (2/2)" in run("run", "cli.small", "exported").stdout
    export({"q1": ["d1"], "q2": ["x"]})
    worse = run("run", "cli.small", "exported", "--max-top1-drop", "0.5", "--max-top3-drop", "0.5", "--fail-on-regression")
    assert worse.returncode == 0 and "No regression: top-1 -50.0 pp, top-3 -50.0 pp." in worse.stdout
    history = run("history", "cli.small", "exported")
    assert history.returncode == 0 and len(re.findall(r"\d{8}T\d{12}Z-[0-9a-f]{8}", history.stdout)) == 2
    assert "-50.0 pp" in history.stdout


def test_a_command_from_another_module_is_one_mapping_entry_imported_only_when_used(tmp_path, monkeypatch):
    (tmp_path / "cli_extension_probe.py").write_text(
        textwrap.dedent(
            """
            import click

            @click.command()
            def hello():
                click.echo("hello from the extension")
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("cli_extension_probe", None)
    group = LazyGroup(name="probe", lazy_commands={**COMMANDS, "hello": ("cli_extension_probe:hello", "Say hello.")})

    listing = CliRunner().invoke(group, ["--help"])
    assert re.search(r"^  hello +Say hello\.$", listing.stdout, re.MULTILINE) and "cli_extension_probe" not in sys.modules

    result = CliRunner().invoke(group, ["hello"])
    assert result.exit_code == 0 and result.stdout == "hello from the extension\n"


def test_a_broken_extension_is_one_line_too(monkeypatch):
    group = LazyGroup(name="probe", lazy_commands={"broken": ("no_such_module_anywhere:command", "Broken.")})

    result = CliRunner().invoke(group, ["broken"])

    assert result.exit_code == 4
    assert result.stderr.startswith("error: internal error: ModuleNotFoundError")


def test_every_registered_command_resolves_to_a_click_command():
    group = LazyGroup(name="probe", lazy_commands=COMMANDS)
    with click.Context(group) as context:
        for name in COMMANDS:
            assert isinstance(group.get_command(context, name), click.Command)


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (["rnu"], "error: retrieval-eval: No such command 'rnu'. Did you mean 'run'? (see 'retrieval-eval --help')"),
        (["run"], "error: retrieval-eval run: Missing argument 'SET'. (see 'retrieval-eval run --help')"),
        (["run", "s", "r", "--show", "most"], "error: retrieval-eval run: Invalid value for '--show': 'most' is not one of"),
        (["history", "s", "r", "--limt", "3"], "error: retrieval-eval history: No such option '--limt'. Did you mean '--limit'?"),
    ],
    ids=["unknown-command", "missing-argument", "bad-choice", "misspelt-option"],
)
def test_a_usage_error_is_one_line_naming_the_command_and_exits_2(arguments, expected):
    result = CliRunner().invoke(main, arguments, prog_name="retrieval-eval")

    assert result.exit_code == 2
    assert result.stderr.startswith(expected) and result.stderr.count("\n") == 1
    assert result.stdout == ""
