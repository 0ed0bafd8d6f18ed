"""The `retrieval-eval` command line: parse, call the core, render. Nothing here imports Dagster.

Commands are loaded lazily, so start-up stays a fraction of a second and a command that needs Dagster
keeps Dagster out of every other command: COMMANDS holds each command's `module:command` target and
its short help, a command's module is imported only when it runs or its own `--help` is asked for, and
each command imports the core inside its function. A command added there gets the built-in commands'
error handling (`errors.py`); the exit codes are listed in the main group's help.
"""

from __future__ import annotations

import _thread
import atexit
import functools
import gc
import importlib
import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import click

from retrieval_pipeline.cli.common import refuse_unshared, shared_options
from retrieval_pipeline.cli.errors import reported_errors

REINTERRUPT_SECONDS = 0.05
COMMANDS: dict[str, tuple[str, str]] = {
    "run": ("retrieval_pipeline.cli.run:run", "Run a question set against a retriever, save it, check for regressions."),
    "compare": ("retrieval_pipeline.cli.compare:compare", "Compare retrievers side by side on one set, with paired tests."),
    "list": ("retrieval_pipeline.cli.commands:list_command", "List the configuration's question sets and retrievers."),
    "accept": ("retrieval_pipeline.cli.accept:accept", "Accept a stored run as the baseline (baseline_policy: accepted)."),
    "history": ("retrieval_pipeline.cli.history:history", "Show the stored runs of a set and retriever, newest first."),
    "report": ("retrieval_pipeline.cli.report:report", "Report the latest run of a set and retriever as HTML or Markdown."),
    "prune": ("retrieval_pipeline.cli.commands:prune", "Remove stored runs older than the retention period."),
    "audit": (
        "retrieval_pipeline.cli.judging.audit:audit",
        "Audit a golden set's labels: missing documents, suspect labels, flips.",
    ),
    "pool": (
        "retrieval_pipeline.cli.judging.pool:pool",
        "Write a judging file of the unjudged documents the latest runs ranked.",
    ),
    "judge": (
        "retrieval_pipeline.cli.judging.judge:judge",
        "Judge a pooled file by hand or by a machine judge, calibrate the machine, merge into a set file.",
    ),
    "coverage": (
        "retrieval_pipeline.cli.coverage:coverage",
        "Measure how much of a query log's traffic a golden set covers, and sample its gaps.",
    ),
    "generate": (
        "retrieval_pipeline.cli.generate:generate",
        "Write candidate questions for a set's gaps (a log's uncovered clusters, or unquestioned documents) to judge.",
    ),
    "validate-generated": (
        "retrieval_pipeline.cli.validate_generated:validate_generated",
        "Check whether a set's generated questions rank the retrievers as its human ones do; --accept to count them.",
    ),
    "import": ("retrieval_pipeline.cli.importing:import_group", "Write a golden set file from another format (BEIR, TREC)."),
    "nightly": (
        "retrieval_pipeline.cli.nightly:nightly",
        "Run the nightly Dagster job now: every partition, then the leaderboard.",
    ),
    "verdicts": (
        "retrieval_pipeline.cli.verdicts:verdicts",
        "Show every pair's latest stored verdict; exit 1 if any failed (CI after a night).",
    ),
}


class LazyGroup(click.Group):
    """A group whose subcommands are `module:attribute` strings, imported on first use."""

    def __init__(self, *args, lazy_commands: dict[str, tuple[str, str]] | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.lazy_commands = dict(lazy_commands or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy_commands})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.commands or name not in self.lazy_commands:
            return super().get_command(ctx, name)
        module_name, _, attribute = self.lazy_commands[name][0].partition(":")
        command = getattr(importlib.import_module(module_name), attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{self.lazy_commands[name][0]} is not a click command")
        self.commands[name] = command
        return command

    def resolve_command(self, ctx: click.Context, args: list[str]):
        """click suggests a command only among those already imported; here every command is a candidate."""
        name = args[0] if args else ""
        if name and not name.startswith("-") and name not in self.list_commands(ctx):
            import difflib

            close = difflib.get_close_matches(name, self.list_commands(ctx), n=1)
            ctx.fail(f"No such command {name!r}." + (f" Did you mean {close[0]!r}?" if close else ""))
        return super().resolve_command(ctx, args)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The listing uses the stored short help, so `--help` imports no command module."""
        rows = []
        for name in self.list_commands(ctx):
            if name in self.lazy_commands and name not in self.commands:
                rows.append((name, self.lazy_commands[name][1]))
            else:
                command = self.commands[name]
                if not command.hidden:
                    rows.append((name, command.get_short_help_str(formatter.width - 6 - len(name))))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def make_context(self, info_name, args, parent=None, **extra) -> click.Context:
        """The group's own arguments (an unknown command, a bad global option) fail on one line too."""
        with reported_errors():
            return super().make_context(info_name, args, parent, **extra)

    def invoke(self, ctx: click.Context):
        with command_process(), reported_errors():
            return super().invoke(ctx)


@contextmanager
def command_process() -> Iterator[None]:
    """The process settings every command runs under (benchmarks give the core's side the same)."""
    # Arrow's default allocator (mimalloc) keeps freed pages for reuse, which a one-shot command never
    # makes: the system allocator hands them back, so a large run file peaks markedly lower.
    # Read once, when pyarrow is first imported; a user's own choice is kept.
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
    # A command builds its long-lived objects in large batches (a set's 20,000 questions, a run's rows),
    # and at the default threshold (700) the cycle collector walks all of them again every 70,000
    # allocations, for cycles they do not form: a large share of a run-file evaluation's CPU. Reference
    # counting still frees everything else at once; cycles are collected every 50,000 allocations
    # while the command runs. At exit everything is frozen first: the interpreter's last collections
    # would otherwise walk every object once more (noticeable after a large run) only to free it.
    threshold = gc.get_threshold()
    gc.set_threshold(50_000, 10, 10)
    atexit.unregister(gc.freeze)
    atexit.register(gc.freeze)
    unraisable = sys.unraisablehook
    sys.unraisablehook = functools.partial(_interrupt_again, unraisable)
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
        sys.unraisablehook = unraisable


def _interrupt_again(hook, unraisable) -> None:
    """A Ctrl-C that lands in a finalizer or a garbage-collection callback is printed as "Exception ignored"
    and lost, so the command would go on: it is raised again in the main thread, where it stops the command."""
    if unraisable.exc_type is not None and issubclass(unraisable.exc_type, KeyboardInterrupt):
        # From another thread, a moment later: raised in this hook, it would be ignored once more.
        timer = threading.Timer(REINTERRUPT_SECONDS, _thread.interrupt_main)
        timer.daemon = True
        timer.start()
        return
    hook(unraisable)


@click.group(
    cls=LazyGroup,
    lazy_commands=COMMANDS,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(package_name="retrieval-pipeline", prog_name="retrieval-eval")
@shared_options
@click.pass_context
def main(ctx: click.Context) -> None:
    """Measure retrieval quality: golden question sets, top-1/top-3 document hit rates, history, regressions.

    The configuration comes from --config, else the RETRIEVAL_EVAL_CONFIG environment variable, else a
    retrieval-eval.yaml in the current folder or the nearest parent, else the embedded demo (set
    demo.cranfield over the public Cranfield abstracts); any but --config is named on stderr. --config
    and --store go before the command or after it; given in both places, the one after it is used.

    Exit codes: 0 success (a regression without --fail-on-regression only warns); 1 unknown set,
    retriever or run (accept refuses an incomplete run too), or a regression with --fail-on-regression; 2 usage error or invalid input (files,
    configuration, tolerances, unreachable or unwritable store; list: a retriever with a problem); 3 incomplete
    run (retriever errors); 4 internal error; 130 interrupted (Ctrl-C): nothing half-written, one line says what
    was finished.
    """
    refuse_unshared(ctx)
