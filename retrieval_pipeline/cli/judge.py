"""`retrieval-eval judge FILE [--apply SET_FILE]`: judge a pooled file in the terminal, or merge it.

One candidate at a time, one key per answer: y (yes, it answers the question), n (no), s (skip: leave it
empty), b (back to the previous one), q (quit). Every answer is written to FILE at once, so quitting, a
closed terminal or a crash loses nothing, and running `judge FILE` again resumes at the first candidate
without an answer.
"""

from __future__ import annotations

from pathlib import Path

import click

from retrieval_pipeline.cli.common import config_option, load_project, stdout_console

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
@config_option
def judge(judging_file: Path, set_file: Path | None, config_path: Path | None) -> None:
    """Judge FILE (written by `retrieval-eval pool`) one candidate at a time, or with --apply merge its
    judgements into SET_FILE, keeping the file's format and layout, and list what changed. A yes must
    name a document of the corpus of a configured retriever that ranked the pool, when its kind knows it."""
    if set_file is not None:
        _apply(judging_file, set_file, config_path)
    else:
        _session(judging_file)


def _apply(judging_file: Path, set_file: Path, config_path: Path | None) -> None:
    from retrieval_pipeline.core.services.judging_files import apply_judgements
    from retrieval_pipeline.core.services.new_questions import judged_new_questions

    config = load_project(config_path)
    added = judged_new_questions(judging_file, set_file, config)  # checked before anything is written
    changes = apply_judgements(judging_file, set_file, config)
    console = stdout_console()
    if added:
        _add_questions(console, set_file, added)
    elif not changes:
        console.print(f"Nothing to merge: {judging_file} holds no yes or no that {set_file} lacks.", markup=False)
    if changes:
        console.print(f"Merged into {set_file}, {len(changes)} question(s) changed:", markup=False)
    for change in changes:
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
