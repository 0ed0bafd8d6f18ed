"""Options and helpers the commands share: configuration, store, consoles, progress.

Core modules are imported inside the functions, never at module level, to keep start-up fast.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import click
from click.core import ParameterSource

from retrieval_pipeline.cli.errors import CommandError, warn
from retrieval_pipeline.core.services.configuration.lookup import CONFIG_ENV_VAR, CONFIG_FILE_NAME, STORE_ENV_VAR

if TYPE_CHECKING:
    from rich.console import Console

    from retrieval_pipeline.core.services.configuration.project import ProjectConfig
    from retrieval_pipeline.core.storage.store import ResultStore

NON_TTY_WIDTH = 10_000
"""Off a terminal (CI logs, pipes) nothing wraps lines, so tables take their natural width: an
identifier is never squeezed into `bm25_…`. Rich tables only grow to what their cells need."""


SHARED_OPTIONS = "retrieval_pipeline.shared_options"
"""Where `ctx.meta` (one dict for the group and its command) keeps --config and --store given before the command."""
SHARED_NAMES = {"config_path": "--config", "store_uri": "--store"}


class FiniteFloatRange(click.FloatRange):
    """click's FloatRange lets `nan` through (no comparison with nan is true, so no bound refuses it):
    refused here by the option parser, in one line, as any other value out of range."""

    name = "float range"

    def convert(self, value, param, ctx):
        number = super().convert(value, param, ctx)
        if math.isnan(number):
            self.fail(f"{value!r} is not a number", param, ctx)
        return number


def config_option(function):
    """--config of every command (nightly's too), so each describes and reads it alike."""
    return _config(_shared_value)(function)


def store_option(function):
    """--store of every command (nightly's too), so each describes and reads it alike."""
    return _store(_shared_value)(function)


def shared_options(function):
    """--config and --store before the command as well (`retrieval-eval --config x.yaml list`): the group
    keeps what the command line gave it for the command, whose own option, given too, wins."""
    return _config(_kept_for_the_command, expose_value=False)(_store(_kept_for_the_command, expose_value=False)(function))


def refuse_unshared(ctx: click.Context) -> None:
    """A shared option given before a command that does not take it (`--store` before `list`) is refused,
    as the command would refuse it after its name."""
    given = ctx.meta.get(SHARED_OPTIONS, {})
    if not given:
        return
    taken = {param.name for param in ctx.command.get_command(ctx, ctx.invoked_subcommand).params}
    for name in [name for name in given if name not in taken]:
        raise click.UsageError(f"{ctx.invoked_subcommand} takes no {SHARED_NAMES[name]}", ctx)


def _config(callback, **options):
    return click.option(
        "--config",
        "config_path",
        type=click.Path(dir_okay=False, path_type=Path),
        envvar=CONFIG_ENV_VAR,
        show_envvar=True,
        callback=callback,
        help=f"The project configuration (YAML). Default: {CONFIG_FILE_NAME} in the current folder or a parent, else the embedded demo.",
        **options,
    )


def _store(callback, **options):
    return click.option(
        "--store",
        "store_uri",
        metavar="URI",
        envvar=STORE_ENV_VAR,
        show_envvar=True,
        callback=callback,
        help="The result store (a folder, s3://..., gs://...). Default: the configuration's store.",
        **options,
    )


def _kept_for_the_command(ctx: click.Context, param: click.Parameter, value):
    """The group's option: only a value from its command line is kept (the command reads the environment itself)."""
    if value is not None and ctx.get_parameter_source(param.name) is ParameterSource.COMMANDLINE:
        ctx.meta.setdefault(SHARED_OPTIONS, {})[param.name] = value
    return value


def _shared_value(ctx: click.Context, param: click.Parameter, value):
    """The command's option: its own command line first, then the group's, then the environment."""
    given = ctx.meta.get(SHARED_OPTIONS, {})
    if param.name in given and ctx.get_parameter_source(param.name) is not ParameterSource.COMMANDLINE:
        return given[param.name]
    return value


def labels_option(function):
    """--labels of every command that scores runs: which labels score them (docs/labels.md)."""
    return click.option(
        "--labels",
        type=click.Choice(("human", "human+machine")),
        metavar="LABELS",
        help="human: score with the human labels alone; human+machine: with a calibrated machine judge's too. "
        "Default: the configuration's `labels` (human).",
    )(function)


def json_option(function):
    return click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout instead of tables.")(function)


def traffic_option(function):
    return click.option(
        "--traffic",
        "traffic_log",
        metavar="LOG",
        help="Weigh each question by the traffic this query log (a name under query_logs:, or a log file) "
        "assigns it, and show the traffic-weighted figures beside the plain ones. Default: the set's `traffic:`.",
    )(function)


def load_project(config_path: Path | None, *, announce: bool = True) -> ProjectConfig:
    """A configuration not given with --config is named on stderr, one line, so a run never silently uses
    a file found in a parent folder, or the demo; a command that names it on stdout itself (`announce`
    False) names it once."""
    from retrieval_pipeline.core.services.configuration.lookup import default_config_path
    from retrieval_pipeline.core.services.configuration.project import load_config

    path = config_path or default_config_path()
    if config_path is None and not path.exists():
        raise CommandError(
            f"no configuration given and the embedded demo is missing at {path}; pass --config FILE or set {CONFIG_ENV_VAR}"
        )
    config = load_config(path)
    origin = config_origin(config_path, config)
    if announce and origin is not None:
        click.echo(f"configuration: {config.source} ({origin})", err=True)
    return config


def refuse_output_over_input(out: Path | None, inputs: Mapping[str, Path | None]) -> None:
    """An --out that is one of the files the command reads (`inputs`: what each is, its path; None: not
    read) would replace it, answers and all: refused before any work, whether named alike, by another
    path to it, or by a link to it."""
    if out is None:
        return
    for what, path in inputs.items():
        if path is not None and _same_file(out, path):
            raise CommandError(f"--out {out} is the {what} this command reads ({path}): write to another file")


def _same_file(first: Path, second: Path) -> bool:
    if first.expanduser().resolve() == second.expanduser().resolve():
        return True
    try:
        return os.path.samefile(first.expanduser(), second.expanduser())
    except OSError:  # either does not exist (yet): not the same file
        return False


def config_origin(config_path: Path | None, config: ProjectConfig) -> str | None:
    """Where the configuration came from, when it was not `--config`; None when it was."""
    if config.is_demo:
        return f"the embedded demo: no --config, no ${CONFIG_ENV_VAR}, no {CONFIG_FILE_NAME} here or in a parent folder"
    if os.environ.get(CONFIG_ENV_VAR) and (config_path is None or str(config_path) == os.environ[CONFIG_ENV_VAR]):
        return f"from ${CONFIG_ENV_VAR}"
    if config_path is None:
        return f"found {CONFIG_FILE_NAME} from {Path.cwd()}"
    return None


def store_location(store_uri: str | None, config: ProjectConfig | None) -> str:
    """A URI given on the command line is kept; a plain path resolves against the working folder."""
    if store_uri is None:
        if config is None:
            raise AssertionError("either a store or a configuration is needed")
        return config.store_uri
    if not store_uri.strip():
        raise CommandError("--store must not be empty")
    return store_uri if "://" in store_uri else str(Path(store_uri).expanduser().resolve())


def open_store(store_uri: str | None, config: ProjectConfig | None) -> ResultStore:
    """Files the store skips (unreadable, foreign) are one warning line each on stderr."""
    from retrieval_pipeline.core.storage.store import ResultStore

    return ResultStore(store_location(store_uri, config), on_skip=lambda skipped: warn(str(skipped)))


def identifiers(what: str):
    """A click callback: a set or retriever identifier (or several) is checked with the set files' rule
    before anything, a store path least of all, is built from it."""

    def check(ctx: click.Context, param: click.Parameter, value):
        from retrieval_pipeline.core.golden.questions import check_identifier

        for identifier in (value,) if isinstance(value, str) else value:
            try:
                check_identifier(identifier, what)
            except ValueError as error:
                name = param.opts[0] if isinstance(param, click.Option) else param.human_readable_name
                raise CommandError(f"{name}: {error}") from None
        return value

    return check


def stored_run_id(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A click callback: a run id given on the command line must be in the store's own format."""
    from retrieval_pipeline.core.storage.store_names import check_run_id

    if value is not None:
        try:
            check_run_id(value)
        except ValueError as error:
            name = param.opts[0] if isinstance(param, click.Option) else param.human_readable_name
            raise CommandError(f"{name}: {error}") from None
    return value


def tolerance(ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    """A click callback: a tolerance the configuration would refuse is a usage error, before anything runs."""
    from retrieval_pipeline.core.scoring.checks.tolerances import tolerance_problem

    problem = tolerance_problem(param.name or "", value)
    if problem:
        raise click.BadParameter(problem)
    return value


def stdout_console() -> Console:
    """Tables for people; off a terminal (CI logs, pipes) they keep their natural width (NON_TTY_WIDTH),
    whatever COLUMNS says, so no cell is cut; on a terminal identifier columns fold (`identifier_column`)."""
    from rich.console import Console

    width = None if sys.stdout.isatty() else NON_TTY_WIDTH
    return Console(file=sys.stdout, width=width, highlight=False, soft_wrap=True)


def identifier_column(table, header: str, **options) -> None:
    """A column of identifiers: folded onto a second line in a narrow terminal, never cut to `bm25_…`."""
    table.add_column(header, overflow="fold", **options)


def stderr_console() -> Console:
    from rich.console import Console

    return Console(file=sys.stderr, highlight=False)


@contextmanager
def progress_bar(total: int, description: str) -> Iterator[Callable[[int], None] | None]:
    """A transient bar on stderr when stderr is a terminal; never on stdout, so JSON output stays clean.

    Elsewhere (CI, a pipe) rich is not even imported.
    """
    if not sys.stderr.isatty() or total <= 0:
        yield None
        return
    console = stderr_console()
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=True,
        redirect_stdout=False,
        redirect_stderr=False,
    ) as progress:
        task = progress.add_task(description, total=total)
        yield lambda advance: progress.advance(task, advance)


@contextmanager
def status(message: str) -> Iterator[Callable[[str], None]]:
    """A spinner on stderr for slow preparation (building an index) on a terminal; the callable yielded
    adds how it goes ("encoded 300/1,400 documents") to the spinner's text. Elsewhere (CI, a log file)
    each such detail is a plain line, so a long build is seen moving (the builder paces them)."""
    if not sys.stderr.isatty():
        yield lambda detail: click.echo(f"{message} {detail}", err=True)
        return
    with stderr_console().status(message) as spinner:
        yield lambda detail: spinner.update(f"{message} {detail}")


def no_stored_runs(store: ResultStore, key) -> CommandError:
    """What `history` and `report` say for a pair with no runs: the pairs the store does hold."""
    from retrieval_pipeline.core.base.exit_codes import EXIT_FAILED

    stored = ", ".join(f"{k.set_identifier} × {k.retriever_identifier}" for k in store.keys()) or "none"
    return CommandError(
        f"no stored runs of set '{key.set_identifier}' against retriever '{key.retriever_identifier}' in {store.uri}; "
        f"stored: {stored}",
        EXIT_FAILED,
    )
