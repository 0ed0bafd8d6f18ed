"""`retrieval-eval audit SET [RETRIEVER ...]`: what is wrong with a golden set's labels."""

from __future__ import annotations

import click

from retrieval_pipeline.cli.common import config_option, json_option, load_project, open_store, stdout_console, store_option
from retrieval_pipeline.cli.errors import CommandError
from retrieval_pipeline.core.base.exit_codes import EXIT_FAILED


@click.command("audit")
@click.argument("set_identifier", metavar="SET")
@click.argument("retriever_identifiers", metavar="[RETRIEVER ...]", nargs=-1)
@config_option
@store_option
@click.option(
    "--window",
    type=click.IntRange(min=2),
    help="Complete runs per retriever read for unstable questions. Default: the configuration's audit.unstable_window (5).",
)
@click.option("--strict", is_flag=True, help="Exit 1 when any finding is an error (a label no corpus holds, conflicting labels).")
@json_option
def audit(
    set_identifier: str,
    retriever_identifiers: tuple[str, ...],
    config_path,
    store_uri,
    window: int | None,
    strict: bool,
    as_json: bool,
) -> None:
    """Audit SET's labels: labels no corpus holds, labels every retriever disagrees with (from the latest
    stored runs of the RETRIEVERs, default all configured), repeated or conflicting questions, and
    questions whose hits flip while nothing changed. Findings are printed; the exit code stays 0 unless
    --strict."""
    from retrieval_pipeline.core.services.labels.audit import audit_set

    config = load_project(config_path)
    config.question_set(set_identifier)
    for identifier in retriever_identifiers:
        config.retriever(identifier)
    report = audit_set(config, open_store(store_uri, config), set_identifier, retriever_identifiers or None, window)
    if as_json:
        from retrieval_pipeline.cli.render.payloads import emit

        emit(
            {
                "set": report.set_identifier,
                "findings": [finding.as_dict() for finding in report.findings],
                "corpora": list(report.corpora),
                "retrievers": list(report.retrievers),
                "optimistic_rates": report.optimistic_rates,
                "window": report.window,
                "power": _power(report.power),
                "has_errors": report.has_errors,
            }
        )
    else:
        _render(report)
    if strict and report.has_errors:
        raise CommandError(f"the audit of '{set_identifier}' found errors (--strict)", EXIT_FAILED)


def _render(report) -> None:
    from rich.table import Table

    from retrieval_pipeline.cli.render.fitted_tables import Column, print_fitted
    from retrieval_pipeline.core.base.formatting import percent
    from retrieval_pipeline.core.scoring.measures import TESTED
    from retrieval_pipeline.core.services.labels.label_audit import OPTIMISTIC

    console = stdout_console()
    corpora = ", ".join(report.corpora) or "none (name a corpus with `corpus:` on the set entry to check labels)"
    console.print(
        f"Audit of {report.set_identifier}: corpora {corpora}; runs of {', '.join(report.retrievers) or 'no retriever'}"
    )
    if report.findings:
        table = Table(show_edge=False)
        for header in ("severity", "kind", "question", "what is wrong"):
            table.add_column(header, overflow="fold")
        for finding in report.findings:
            table.add_row(finding.severity, finding.kind, finding.question_id or "-", finding.message)
        console.print(table)
    else:
        console.print("No findings.")
    if report.power is not None:
        console.print(report.power.sentence)
    if any(rates[OPTIMISTIC + TESTED[-1].column] != rates[TESTED[-1].column] for rates in report.optimistic_rates.values()):
        columns = [Column("retriever", "left", identifier=True)]
        columns += [Column(header) for figure in TESTED for header in (figure.short, f"optimistic {figure.short}")]
        rows = [
            [retriever, *(percent(rates[prefix + figure.column]) for figure in TESTED for prefix in ("", OPTIMISTIC))]
            for retriever, rates in report.optimistic_rates.items()
        ]
        print_fitted(console, "If every suspect label's candidate were relevant", columns, rows, show_edge=False)


def _power(power) -> dict | None:
    if power is None:
        return None
    return {
        "power": power.power,
        "significance": power.significance,
        "questions": power.questions,
        "run_pairs": power.run_pairs,
        **{
            f"top{c.k}": {
                "flip_rate": c.flip_rate,
                "detectable_drop": c.detectable_drop,
                "tolerance": c.tolerance,
                "questions_needed": c.questions_needed,
            }
            for c in power.cutoffs
        },
    }
