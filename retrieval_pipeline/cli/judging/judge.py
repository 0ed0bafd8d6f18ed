"""`retrieval-eval judge`: judge a pooled file by hand (`judge FILE`), have a machine judge answer it
(`judge machine`, machine.py), calibrate the machine against the people (`judge calibrate`,
calibration.py) and merge the answers into a set file (`judge apply`). Each mode is a command of its
own, with its own options.

By hand, one candidate at a time, one key per answer: y (yes, it answers the question), n (no), s (skip:
leave it empty), b (back to the previous one), q (quit). Every answer is written to FILE at once, so
quitting, a closed terminal or a crash loses nothing, and running `judge FILE` again resumes at the first
candidate without an answer.
"""

from __future__ import annotations

from pathlib import Path

import click

from retrieval_pipeline.cli.common import config_option, load_project, refuse_unshared, shared_options, stdout_console
from retrieval_pipeline.cli.errors import CommandError
from retrieval_pipeline.cli.judging.calibration import calibrate_command
from retrieval_pipeline.cli.judging.machine import machine_command

KEYS = {"y": "yes", "n": "no", "s": "skip", "b": "back", "q": "quit"}
PROMPT = "[y]es  [n]o  [s]kip  [b]ack  [q]uit"
BY_HAND = "by-hand"
GROUP_OPTIONS = ("--config", "--store")  # each takes a value; -h/--help is the group's help

judging_file_argument = click.argument(
    "judging_file", metavar="FILE", type=click.Path(dir_okay=False, exists=True, path_type=Path)
)


class JudgeGroup(click.Group):
    """`judge FILE` judges by hand: a first argument that names no command is the FILE of `judge by-hand`
    (a judging file has a suffix, .csv or .jsonl, so it never reads as a command)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.commands)  # in the order of the work: by hand, machine, calibrate, apply

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        position = _first_argument(args)
        if position > len(args):  # --config or --store without its value: click says so
            return super().parse_args(ctx, args)
        if position == len(args):
            raise click.UsageError(f"Missing argument 'FILE' (or a command: {', '.join(self.commands)}).", ctx)
        first = args[position]
        if first not in self.commands and first not in ctx.help_option_names:
            _refuse_a_mistyped_command(ctx, first, list(self.commands))
            args = [*args[:position], BY_HAND, *args[position:]]
        return super().parse_args(ctx, args)


def _first_argument(args: list[str]) -> int:
    """Where the command (or the FILE) begins: after the group's --config and --store, given before it."""
    position = 0
    while position < len(args):
        name, equals, _ = args[position].partition("=")
        if name not in GROUP_OPTIONS:
            break
        position += 1 if equals else 2
    return position


def _refuse_a_mistyped_command(ctx: click.Context, first: str, commands: list[str]) -> None:
    """`judge calibrat pool.csv` would otherwise say that no file `calibrat` exists. A judging file has a
    suffix (.csv, .jsonl), a command none: a word without one that is no file is a mistyped command."""
    import difflib

    close = difflib.get_close_matches(first, commands, n=1)
    if close and not Path(first).suffix and "/" not in first and not Path(first).exists():
        ctx.fail(f"No such command {first!r}. Did you mean {close[0]!r}?")


@click.group("judge", cls=JudgeGroup, subcommand_metavar="FILE | COMMAND [ARGS]...")
@shared_options
@click.pass_context
def judge(ctx: click.Context) -> None:
    """Judge a pooled file (written by `retrieval-eval pool`) by hand or by a machine judge, calibrate the
    machine against the people, and merge the answers into the set file. `judge FILE` judges by hand (it
    is `judge by-hand FILE`); each command has its own options: `retrieval-eval judge COMMAND --help`."""
    refuse_unshared(ctx)


@judge.command(BY_HAND, short_help="Judge FILE in the terminal, one key per answer: `judge FILE` runs it.")
@judging_file_argument
def by_hand(judging_file: Path) -> None:
    """Judge FILE in the terminal, one candidate at a time: y yes (it answers the question), n no, s skip,
    b back, q quit. Every answer is written to FILE at once; run it again to resume at the first candidate
    without an answer. `judge FILE` runs this command."""
    _session(judging_file)


judge.add_command(machine_command)
judge.add_command(calibrate_command)


@judge.command("apply", short_help="Merge FILE's answers into SET_FILE (--machine: the machine's too, in lists of their own).")
@judging_file_argument
@click.argument("set_file", metavar="SET_FILE", type=click.Path(dir_okay=False, exists=True, path_type=Path))
@click.option(
    "--machine", is_flag=True, help="Also apply the machine judge's answers, into the set's machine lists (behind the gate)."
)
@click.option("--force", is_flag=True, help="With --machine: apply below the judging thresholds; the set records it.")
@config_option
def apply(judging_file: Path, set_file: Path, machine: bool, force: bool, config_path: Path | None) -> None:
    """Merge FILE's answers into SET_FILE: yes into expected_document_ids, no into rejected_document_ids,
    keeping the set file's format and layout, and list what changed. A yes must name a document of the
    corpus of a configured retriever that ranked the pool, when its kind knows it. Judged queries sampled by
    `coverage --sample` become new questions, and generated candidates (`generate`) whose source document
    is judged yes become questions marked generated, kept apart from the set's figures until checked. With --machine, the machine judge's answers on the rows no
    person answered go into the set's machine lists, when its calibration passes the `judging:` thresholds."""
    if force and not machine:
        raise click.UsageError("--force applies machine answers below the thresholds: it goes with --machine")
    _apply(judging_file, set_file, config_path, machine, force)


def _apply(judging_file: Path, set_file: Path, config_path: Path | None, machine: bool, force: bool) -> None:
    from retrieval_pipeline.core.golden.question_files import load_question_set_file
    from retrieval_pipeline.core.services.generated.questions import judged_candidates
    from retrieval_pipeline.core.services.labels.judging_files import apply_judgements
    from retrieval_pipeline.core.services.labels.machine_apply import apply_with_machine
    from retrieval_pipeline.core.services.labels.new_questions import judged_new_questions

    config = load_project(config_path)
    added = judged_new_questions(judging_file, set_file, config)  # checked before anything is written
    question_set = load_question_set_file(set_file)
    generated = judged_candidates(judging_file, {question.id for question in question_set.questions}, machine, config)
    applied = apply_with_machine(judging_file, set_file, config, force, generated.machine_labelled) if machine else None
    changes = applied.human if applied else apply_judgements(judging_file, set_file, config)
    console = stdout_console()
    if added or generated.questions:
        _add_questions(console, set_file, question_set, added, generated)
    elif not changes and not (applied and applied.machine):
        console.print(f"Nothing to merge: {judging_file} holds no yes or no that {set_file} lacks.", markup=False)
        _not_added(console, generated, machine)
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
    _not_added(console, generated, machine)


def _add_questions(console, set_file: Path, question_set, added, generated) -> None:
    """Sampled queries (`coverage --sample`) judged in the file, and generated candidates confirmed there,
    appended to the set as new questions."""
    from retrieval_pipeline.core.services.generated.questions import add_to_set_file

    identifier = question_set.identifier
    lapsed = add_to_set_file(set_file, question_set.generated_questions is not None, [*added, *generated.questions])
    if added:
        console.print(f"Added to {set_file}, {len(added)} new question(s) from sampled queries:", markup=False)
    for question in added:
        console.print(
            f"  {question.id}: {question.form.value}, {len(question.expected_document_ids)} expected, "
            f"asked {question.source_traffic} time(s) in {question.source_log}",
            highlight=False,
            markup=False,
        )
    if generated.questions:
        console.print(
            f"Added to {set_file}, {len(generated.questions)} generated question(s) ({generated.by_machine} confirmed by the "
            f"machine judge), kept apart from the set's figures until checked: retrieval-eval validate-generated {identifier}",
            highlight=False,
            markup=False,
        )
    if lapsed:
        console.print(
            f"{identifier} counted its generated questions; the ones added now were not measured, so all of them are "
            f"kept apart again until checked: retrieval-eval validate-generated {identifier}",
            highlight=False,
            markup=False,
        )
    for question in generated.questions:
        human, robot = len(question.expected_document_ids), len(question.machine_expected_document_ids)
        console.print(
            f"  {question.id}: {question.form.value}, {human} expected"
            + (f" + {robot} machine expected" if robot else "")
            + f", from {question.generated.source} {question.generated.document_id} by {question.generated.generated_by}",
            highlight=False,
            markup=False,
        )


def _not_added(console, generated, machine: bool) -> None:
    if generated.refused or generated.unjudged:
        waiting = "" if machine else " (or a calibrated machine judge's, with --machine)"
        console.print(
            f"Not added: {generated.refused} generated candidate(s) whose source document was judged no; "
            f"{generated.unjudged} whose source document awaits an answer{waiting}.",
            highlight=False,
            markup=False,
        )


def _session(path: Path) -> None:
    from retrieval_pipeline.core.services.labels.judging_files import read_judging_file, write_judging_file

    rows = read_judging_file(path)
    console = stdout_console()
    position = next((index for index, row in enumerate(rows) if not row["judgement"]), len(rows))
    if position == len(rows):
        console.print(
            f"All {len(rows)} candidate(s) in {path} are judged; merge them into a set file with retrieval-eval judge apply {path} SET_FILE.",
            markup=False,
        )
        return
    while position < len(rows):
        _show(console, rows, position)
        key = KEYS.get(_key(path).lower())
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


def _key(path: Path) -> str:
    """One keystroke, read from the terminal even when standard input is piped; with no terminal at all
    (CI, a script, a service) there is none to read."""
    try:
        return click.getchar()
    except OSError:  # "No such device or address: '/dev/tty'"
        raise CommandError(
            f"judge FILE judges in a terminal, one key per answer, and there is none here; have a machine judge "
            f"answer it (retrieval-eval judge machine {path} --judge NAME), or fill its judgement column (yes or "
            "no) in an editor, then run retrieval-eval judge apply"
        ) from None


def _show(console, rows: list[dict], position: int) -> None:
    """Without markup: a question or a document may hold brackets that rich would read as styles."""
    from rich.text import Text

    row = rows[position]
    labelled = row["expected_title"] or ", ".join(row["expected_document_ids"]) or "nothing (no document answers it)"
    answer = f" (now: {row['judgement']})" if row["judgement"] else ""
    console.rule(Text(f"{position + 1} of {len(rows)}{answer}"))
    if row.get("conversation"):
        console.print(f"Conversation so far:\n{row['conversation']}", highlight=False, markup=False)
    console.print(f"Question {row['question_id']}: {row['question']}", highlight=False, markup=False)
    console.print(f"Labelled answer: {labelled}", highlight=False, markup=False)
    ranked = ", ".join(row["ranked_by"]) if isinstance(row["ranked_by"], list) else row["ranked_by"]
    console.print(f"Candidate {row['document_id']} (ranked by {ranked}): {row['title']}", highlight=False, markup=False)
    if row["text"]:
        console.print(row["text"], highlight=False, markup=False)
    console.print(PROMPT, highlight=False, markup=False)
