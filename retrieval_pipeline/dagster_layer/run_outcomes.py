"""Each partition's outcome for `retrieval-eval nightly`, the same whether its run executed in this process
or on a worker (`--launch`), and whether it held one partition or a range (partition_steps.py).

Whether a partition failed, and why, is its run's failure: the step's error, or the failed partitions a
range's step names (`FAILED_PARTITIONS`). What an evaluation found is what the core saved: its run in the
result store, with the rates, the verdict and the check's sentence, and the check's pass and severity
from the same `regression_check` the Dagster check uses. Nothing is read back from event metadata.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from retrieval_pipeline.core.services.views.evaluation_view import RegressionCheck, regression_check
from retrieval_pipeline.core.storage.run_summary import RunSummary
from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore
from retrieval_pipeline.dagster_layer.partition_steps import FAILED_PARTITIONS

INPUT_ERRORS = frozenset(
    {"RetrievalEvalError", "InvalidInputError", "UnknownIdentifierError", "DuplicateIdentifierError", "StoreError"}
)
SERVICE_ERRORS = frozenset({"ServiceFailedError"})  # a service a retriever needs failed: exit 3, not a bug
INTERRUPTED_ERROR = "DagsterExecutionInterruptedError"


@dataclass(frozen=True)
class PartitionOutcome:
    job: str
    partition: str
    error: str | None = None
    error_classes: frozenset[str] = frozenset()
    set_identifier: str | None = None
    retriever_identifier: str | None = None
    run: RunSummary | None = None
    """An evaluation's run, as the core saved it in the result store."""
    check: RegressionCheck | None = None

    @property
    def success(self) -> bool:
        return self.error is None

    @property
    def service_error(self) -> bool:
        """A service the retriever needs failed while it was built."""
        return bool(self.error_classes & SERVICE_ERRORS)

    @property
    def input_error(self) -> bool:
        return bool(self.error_classes & INPUT_ERRORS) and not self.service_error

    @property
    def check_passed(self) -> bool | None:
        return self.check.passed if self.check is not None else None


@dataclass(frozen=True)
class RunFailure:
    """What a finished run's failure events say: the error, the partitions a range's step named, and
    whether Dagster interrupted it (Ctrl-C)."""

    message: str = "the run failed"
    classes: frozenset[str] = frozenset()
    failed_partitions: dict | None = None
    interrupted: bool = False

    @classmethod
    def of(cls, events: Iterable) -> RunFailure:
        """`events`: DagsterEvents, a result's `all_events` or the instance's event log of a launched run."""
        step_errors, run_errors, failed_partitions = [], [], None
        for event in events:
            if event.is_step_failure:
                step_errors.append(event.step_failure_data.error)
                user = event.step_failure_data.user_failure_data
                if user is not None and FAILED_PARTITIONS in user.metadata:
                    failed_partitions = user.metadata[FAILED_PARTITIONS].value
            elif event.is_run_failure and event.event_specific_data is not None:
                run_errors.append(event.event_specific_data.error)
        chains = [_chain(error) for error in step_errors + run_errors if error is not None]
        interrupted = any(INTERRUPTED_ERROR in (e.cls_name for e in chain) for chain in chains)
        if not chains:
            return cls(failed_partitions=failed_partitions, interrupted=interrupted)
        messages = [e.message.strip().split(f"{e.cls_name}: ", 1)[-1].strip() for e in chains[0] if e.message.strip()]
        # the innermost message is the user's error: "package.module.ClassName: what happened" -> "what happened"
        message = messages[-1] if messages else cls.message
        return cls(message, frozenset(e.cls_name for e in chains[0]), failed_partitions, interrupted)

    def outcomes(self, job: str, partition_keys: Sequence[str | None], success: bool) -> list[PartitionOutcome]:
        """`partition_keys`: the partitions the run held, or `[None]` for an unpartitioned job."""
        outcomes = []
        for key in (str(key or "") for key in partition_keys):
            if success or (self.failed_partitions is not None and key not in self.failed_partitions):
                outcomes.append(PartitionOutcome(job, key))  # recorded, though another partition of its range failed
            elif self.failed_partitions is None:  # the run failed as a whole: every partition it held failed
                outcomes.append(PartitionOutcome(job, key, self.message, self.classes))
            else:
                failed = self.failed_partitions[key]
                outcomes.append(PartitionOutcome(job, key, failed["error"], frozenset(failed["error_classes"])))
        return outcomes


def _chain(error) -> list:
    """A serialized error and its causes, outermost first."""
    chain = []
    while error is not None:
        chain.append(error)
        error = error.cause
    return chain


def evaluated(
    outcome: PartitionOutcome, pair: tuple[str, str], store: ResultStore, since: datetime, severity: str
) -> PartitionOutcome:
    """An evaluation's outcome with the run the core saved for `pair` since `since` (nightly's start)."""
    outcome = replace(outcome, set_identifier=pair[0], retriever_identifier=pair[1])
    if not outcome.success:
        return outcome
    key = HistoryKey(*pair)
    saved = next(iter(store.saved_since(key, since)), None)
    if saved is None:
        return outcome
    run = RunSummary.of(key, store.read_summary(saved))
    return replace(outcome, run=run, check=regression_check(run.verdict, severity) if run.verdict else None)
