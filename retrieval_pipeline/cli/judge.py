"""`retrieval-eval judge FILE [--apply SET_FILE | --judge NAME [--probe]]`: judge a pooled file in the
terminal, merge it, or have a configured machine judge fill its machine columns (`machine_judge.py`).

One candidate at a time, one key per answer: y (yes, it answers the question), n (no), s (skip: leave it
empty), b (back to the previous one), q (quit). Every answer is written to FILE at once, so quitting, a
closed terminal or a crash loses nothing, and running `judge FILE` again resumes at the first candidate
without an answer.
"""

from __future__ import annotations

from pathlib import Path

import click

from retrieval_pipeline.cli.common import config_option, json_option, load_project, stdout_console, store_option
from retrieval_pipeline.cli.judge_calibration import calibrate as run_calibration
from retrieval_pipeline.cli.judge_calibration import calibration_options

KEYS = {"y": "yes", "n": "no", "s": "skip", "b": "back", "q": "quit"}
PROMPT = "[y]es  [n]o  [s]kip  [b]ack  [q]uit"


@click.command("judge")
@click.argument("judging_file", metavar="FILE", type=click.Path(dir_okay=False, exists=True, path_type=Path))
@click.option(
    "--apply",
    "set_file",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="Merge FILE's answers into this set file (yes into expected_document_ids, no into rejected_document_ids); "
    "judged queries sampled by `coverage --sample` become new questions.",
)
@click.option(
    "--machine", is_flag=True, help="With --apply: also apply the machine judge's answers, into the set's machine lists."
)
@click.option("--force", is_flag=True, help="With --machine: apply below the judging thresholds; the set records it.")
@click.option(
    "--judge",
    "judge_name",
    metavar="NAME",
    help="Have the configured machine judge NAME (the `judges:` section) fill machine_judgement, machine_grade and judged_by.",
)
@click.option(
    "--probe",
    is_flag=True,
    help="With --judge: insert the question's words into rows people answered no and count how often the judge flips to yes.",
)
@click.option("--sample", type=click.IntRange(min=1), default=50, show_default=True, help="With --probe: rows to sample.")
@calibration_options
@json_option
@config_option
@store_option
def judge(
    judging_file: Path,
    set_file: Path | None,
    machine: bool,
    force: bool,
    judge_name: str | None,
    probe: bool,
    sample: int,
    calibrate: bool,
    as_json: bool,
    config_path: Path | None,
    store_uri: str | None,
    **calibration,
) -> None:
    """Judge FILE (written by `retrieval-eval pool`) one candidate at a time, or with --apply merge its
    judgements into SET_FILE, keeping the file's format and layout, and list what changed. A yes must
    name a document of the corpus of a configured retriever that ranked the pool, when its kind knows it.
    With --judge NAME a machine judge answers every row in columns of its own (the person's `judgement`
    is never touched), resumably, its answers cached; with --probe too, it is tested for query-word stuffing.
    With --calibrate, say how far the machine's answers (`machine_judgement`) agree with the human ones."""
    if probe and judge_name is None:
        raise click.UsageError("--probe needs --judge NAME")
    if judge_name is not None and (set_file is not None or calibrate):
        raise click.UsageError("--judge is a step of its own: judge first, then --calibrate or --apply")
    if judge_name is not None:
        from retrieval_pipeline.cli import machine_judge

        if probe:
            machine_judge.probe(judging_file, judge_name, config_path, sample, calibration["seed"], as_json)
        else:
            machine_judge.machine_judge(judging_file, judge_name, config_path, as_json)
    elif calibrate:
        run_calibration(judging_file, as_json=as_json, config_path=config_path, store_uri=store_uri, **calibration)
    elif set_file is not None:
        _apply(judging_file, set_file, config_path, machine, force)
    else:
        _session(judging_file)


def _apply(judging_file: Path, set_file: Path, config_path: Path | None, machine: bool, force: bool) -> None:
    from retrieval_pipeline.core.services.judging_files import apply_judgements
    from retrieval_pipeline.core.services.machine_apply import apply_with_machine
    from retrieval_pipeline.core.services.new_questions import judged_new_questions

    config = load_project(config_path)
    added = judged_new_questions(judging_file, set_file, config)  # checked before anything is written
    applied = apply_with_machine(judging_file, set_file, config, force) if machine else None
    changes = applied.human if applied else apply_judgements(judging_file, set_file, config)
    console = stdout_console()
    if added:
        _add_questions(console, set_file, added)
    elif not changes and not (applied and applied.machine):
        console.print(f"Nothing to merge: {judging_file} holds no yes or no that {set_file} lacks.", markup=False)
        return
    if changes:
        console.print(f"Merged into {set_file}, {len(changes)} question(s) changed:", markup=False)
    for change in changes:
        console.print(f"  {change.line()}", highlight=False, markup=False)
    if applied and applied.machine:
        calibration = applied.calibration
        kappa = "undefined" if calibration.kappa is None else f"{calibration.kappa:.3f}"
        forced = ", FORCED below the judging thresholds" if calibration.forced else ""
        console.print(
            f"Machine labels of {applied.judged_by} (kappa {kappa} on {calibration.n} rows{forced}) into {set_file}, "
            f"{len(applied.machine)} question(s) changed:",
            highlight=False,
            markup=False,
        )
        for change in applied.machine:
            console.print(f"  {change.line()}", highlight=False, markup=False)


def _add_questions(console, set_file: Path, added) -> None:
    """Sampled queries (`coverage --sample`) judged in the file, appended to the set as new questions."""
    from retrieval_pipeline.core.golden.set_file_additions import add_questions_to_set_file

    add_questions_to_set_file(set_file, added)
    console.print(f"Added to {set_file}, {len(added)} new question(s) from sampled queries:", markup=False)
    for question in added:
        console.print(
            f"  {question.id}: {question.form.value}, {len(question.expected_document_ids)} expected, "
            f"asked {question.source_traffic} time(s) in {question.source_log}",
            highlight=False,
            markup=False,
        )


def _session(path: Path) -> None:
    from retrieval_pipeline.core.services.judging_files import read_judging_file, write_judging_file

    rows = read_judging_file(path)
    console = stdout_console()
    position = next((index for index, row in enumerate(rows) if not row["judgement"]), len(rows))
    if position == len(rows):
        console.print(f"All {len(rows)} candidate(s) in {path} are judged; merge them with --apply SET_FILE.", markup=False)
        return
    while position < len(rows):
        _show(console, rows, position)
        key = KEYS.get(click.getchar().lower())
        if key == "quit":
            break
        if key == "back":
            position = max(position - 1, 0)
            continue
        if key in ("yes", "no"):
            rows[position]["judgement"] = key
            write_judging_file(rows, path)
        if key is not None:
            position += 1
    judged = sum(1 for row in rows if row["judgement"])
    console.print(f"{judged} of {len(rows)} judged, saved in {path}.", highlight=False, markup=False)


def _show(console, rows: list[dict], position: int) -> None:
    """Without markup: a question or a document may hold brackets that rich would read as styles."""
    from rich.text import Text

    row = rows[position]
    labelled = row["expected_title"] or ", ".join(row["expected_document_ids"]) or "nothing (no document answers it)"
    answer = f" (now: {row['judgement']})" if row["judgement"] else ""
    console.rule(Text(f"{position + 1} of {len(rows)}{answer}"))
    console.print(f"Question {row['question_id']}: {row['question']}", highlight=False, markup=False)
    console.print(f"Labelled answer: {labelled}", highlight=False, markup=False)
    ranked = ", ".join(row["ranked_by"]) if isinstance(row["ranked_by"], list) else row["ranked_by"]
    console.print(f"Candidate {row['document_id']} (ranked by {ranked}): {row['title']}", highlight=False, markup=False)
    if row["text"]:
        console.print(row["text"], highlight=False, markup=False)
    console.print(PROMPT, highlight=False, markup=False)
