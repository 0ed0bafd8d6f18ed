"""What an evaluating command (`run`, `compare`) finished when Ctrl-C stopped it, counted in one place
and told in one line: a save is whole or absent, so the line says exactly what the store now holds."""

from __future__ import annotations

from retrieval_pipeline.cli.errors import INTERRUPTED, CommandError
from retrieval_pipeline.core.base.exit_codes import EXIT_INTERRUPTED


class Tally:
    """How far the command got: retrievers built, questions answered, runs finished and runs saved."""

    def __init__(self) -> None:
        self.started, self.answered = False, 0
        self.finished: list[str] = []
        self.saved: dict[str, tuple[str, str]] = {}
        """Each saved retriever's run id and verdict sentence."""

    def counting(self, advance):
        """The runner's progress callback: counts each answered question, then advances the bar."""

        def progress(count: int) -> None:
            self.answered += count
            if advance is not None:
                advance(count)

        return progress

    def run_stopped(self, store, key, started_at, question_count: int) -> CommandError:
        """The run, if its save completed (found in the store by its time), else how far it got."""
        saved = store.saved_since(key, started_at)
        pair = f"{key.set_identifier} × {key.retriever_identifier}"
        if saved:
            kind = "complete" if saved[0].complete else "incomplete"
            done = f"after {pair} was saved as {kind} run {saved[0].run_id} in {store.uri}; its report was not printed"
        elif not self.started:
            done = f"while preparing retriever {key.retriever_identifier}: no question was asked, nothing was saved"
        else:
            done = (
                f"after {self.answered} of {question_count} questions of {pair} were answered: "
                f"not saved, {store.uri} is as it was"
            )
        return CommandError(f"{INTERRUPTED} {done}", EXIT_INTERRUPTED)

    def compare_stopped(self, identifiers: tuple[str, ...], saving: bool) -> CommandError:
        """The retrievers evaluated, those not, and (with --save) the runs saved whole."""
        done = ", ".join(f"{identifier} (run {run_id})" for identifier, (run_id, _) in self.saved.items()) or "none"
        unfinished = ", ".join(identifiers[len(self.finished) :])
        saved_note = f"; saved whole: {done}" if saving else "; nothing is saved without --save"
        return CommandError(
            f"{INTERRUPTED}: {len(self.finished)} of {len(identifiers)} retrievers evaluated, not {unfinished}{saved_note}",
            EXIT_INTERRUPTED,
        )
