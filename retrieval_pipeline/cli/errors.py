"""Every failure becomes one readable line on stderr and an exit code, never a traceback."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

import click

from retrieval_pipeline.core.base.exit_codes import (
    EXIT_FAILED,
    EXIT_INCOMPLETE,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_INVALID,
)

INTERRUPTED = "interrupted (Ctrl-C)"
DEBUG_ENV_VAR = "RETRIEVAL_EVAL_DEBUG"


class CommandError(click.ClickException):
    """A failure the user can act on, shown as `error: <message>`."""

    def __init__(self, message: str, exit_code: int = EXIT_INVALID):
        from retrieval_pipeline.core.base.secrets import scrub

        super().__init__(scrub(message))  # whatever error it quotes, no secret reaches stderr
        self.exit_code = exit_code

    def show(self, file=None) -> None:
        message = " ".join(line.strip() for line in self.format_message().splitlines())
        click.echo(f"error: {message}", err=True)


def usage_error(error: click.UsageError) -> CommandError:
    """click shows a usage error over four lines (usage, hint, blank, error); one line says the same."""
    from retrieval_pipeline.core.base.errors import MESSAGE_LIMIT, clip

    command = error.ctx.command_path if error.ctx else "retrieval-eval"
    return CommandError(f"{command}: {clip(error.format_message(), MESSAGE_LIMIT)} (see '{command} --help')", error.exit_code)


def warn(message: str) -> None:
    click.secho(f"warning: {message}", fg="yellow", err=True)


@contextmanager
def reported_errors() -> Iterator[None]:
    """Translate the core's errors into exit codes; click's own exceptions pass through unchanged."""
    from retrieval_pipeline.core.base.errors import (
        NotAcceptableError,
        RetrievalEvalError,
        ServiceFailedError,
        UnknownIdentifierError,
    )

    try:
        yield
    except click.UsageError as error:
        raise usage_error(error) from None
    except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
        raise
    except KeyboardInterrupt:  # a command that writes in steps says itself what it finished (run, nightly)
        raise CommandError(
            f"{INTERRUPTED}: stopped before it finished; nothing was half-written (every file is written whole or not at all)",
            EXIT_INTERRUPTED,
        ) from None
    except (UnknownIdentifierError, NotAcceptableError) as error:
        raise CommandError(str(error), EXIT_FAILED) from None
    except ServiceFailedError as error:
        raise CommandError(str(error), EXIT_INCOMPLETE) from None
    except RetrievalEvalError as error:  # invalid input, duplicate identifiers, an unreachable store
        raise CommandError(str(error), EXIT_INVALID) from None
    except Exception as error:
        if os.environ.get(DEBUG_ENV_VAR):
            raise
        raise CommandError(
            f"internal error: {type(error).__name__}: {error} (set {DEBUG_ENV_VAR}=1 to see the traceback)", EXIT_INTERNAL
        ) from None
