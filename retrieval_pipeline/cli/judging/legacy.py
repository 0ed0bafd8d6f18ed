"""The spellings `judge` took before its modes became commands (`judge FILE --apply SET_FILE`, `--judge NAME`,
`--probe`, `--calibrate`, `--estimate`, `--next`): answered with one line naming the command that does it
now, the user's own arguments in place, before anything is read or written (exit 2)."""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

from retrieval_pipeline.cli.errors import CommandError

TAKES_A_VALUE = {"--apply", "--judge", "--sample", "--width", "--next", "--out", "--seed", "--set", "--config", "--store"}
FLAGS = {"--machine", "--force", "--probe", "--calibrate", "--estimate", "--json"}

# Each mode: the old options that chose it, then every option its command takes, in the command's order.
MODES = {
    "machine": ({"--judge", "--probe", "--sample"}, ("--judge", "--probe", "--sample", "--seed", "--json", "--config")),
    "calibrate": (
        {"--calibrate", "--estimate", "--width", "--next", "--out", "--set"},
        ("--estimate", "--width", "--next", "--out", "--seed", "--set", "--json", "--config", "--store"),
    ),
    "apply": ({"--apply", "--machine", "--force"}, ("--machine", "--force", "--config")),
}
# Options an old command line could carry that did nothing in its mode: dropped from the new spelling,
# which would refuse them.
IGNORED_WITHOUT = {
    ("machine", "--sample"): "--probe",
    ("machine", "--seed"): "--probe",
    ("calibrate", "--seed"): "--next",
    ("apply", "--force"): "--machine",
}
SAFE = re.compile(r"[\w@%+=:,./-]+")


def refuse_old_spelling(args: Sequence[str]) -> None:
    """`args`: what followed `judge`. Nothing happens unless they use an option of the old spellings."""
    positional, options = _parse(args)
    modes = [mode for mode, (markers, _) in MODES.items() if any(name in markers for name, _ in options)]
    if not modes:
        return
    spellings = ", then ".join(f"'{_join(['retrieval-eval', 'judge', *_spelling(mode, positional, options)])}'" for mode in modes)
    raise CommandError(f"judge's modes are commands now: use {spellings}")


def _parse(args: Sequence[str]) -> tuple[list[str], list[tuple[str, str | None]]]:
    positional: list[str] = []
    options: list[tuple[str, str | None]] = []
    tokens = iter(args)
    for token in tokens:
        if token == "--":
            positional.extend(tokens)
            break
        name, equals, value = token.partition("=")
        if name in TAKES_A_VALUE:
            options.append((name, value if equals else next(tokens, None)))
        elif token in FLAGS:
            options.append((token, None))
        elif token.startswith("-") and token != "-":
            options.append((token, None))  # unknown then, unknown now: kept, the command will say so
        else:
            positional.append(token)
    return positional, options


def _spelling(mode: str, positional: list[str], options: list[tuple[str, str | None]]) -> list[str]:
    options = [(name, value) for name, value in options if value is not None or name not in TAKES_A_VALUE]
    given = {name for name, _ in options}
    taken = MODES[mode][1]
    words = [mode, *(positional or ["FILE"])]
    if mode == "apply":
        words.insert(2, next((value for name, value in options if name == "--apply" and value), "SET_FILE"))
    if mode == "machine" and "--judge" not in given:
        words += ["--judge", "NAME"]
    for name, value in options:
        needed = IGNORED_WITHOUT.get((mode, name))
        if name in taken and (needed is None or needed in given):
            words += [name] if value is None else [name, value]
    return words


def _join(words: list[str]) -> str:
    return " ".join(map(_quoted, words))


def _quoted(word: str) -> str:
    """Double quotes where a path needs quoting, as the line naming the command is in single ones."""
    if SAFE.fullmatch(word):
        return word
    return shlex.quote(word) if set('"$`\\!') & set(word) else f'"{word}"'
