"""Shared fixtures for the whole test suite."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from hypothesis import settings

SHARED_DATA_ENV_VAR = "RETRIEVAL_EVAL_SHARED_DATA"

pytest.register_assert_rewrite("printed_tables")  # its assertions explain a failure as a test's do

# Property tests check behaviour, not speed: a per-example deadline would fail them on a busy machine.
settings.register_profile("behaviour", deadline=None)
settings.load_profile("behaviour")


@pytest.fixture(autouse=True, scope="session")
def ctrl_c_reaches_the_commands_under_test():
    """Under a parent that ignores SIGINT (nohup, some CI runners), Python starts with Ctrl-C ignored, and so
    does every process a test starts: the interrupt tests would wait for a command that never stops. Ignored
    signals are inherited across exec, handled ones are reset to the default, so handling SIGINT here gives
    every command under test Ctrl-C as a terminal delivers it."""
    previous = signal.getsignal(signal.SIGINT)
    if previous == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.fixture(autouse=True, scope="session")
def isolated_index_cache(tmp_path_factory):
    """Built indexes go to a per-session folder, never into the user's home."""
    cache = tmp_path_factory.mktemp("index-cache")
    previous = os.environ.get("RETRIEVAL_EVAL_CACHE")
    os.environ["RETRIEVAL_EVAL_CACHE"] = str(cache)
    yield cache
    if previous is None:
        os.environ.pop("RETRIEVAL_EVAL_CACHE", None)
    else:
        os.environ["RETRIEVAL_EVAL_CACHE"] = previous


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The public BEIR collections (SciFact, Cranfield, CISI) kept beside the checkout, not inside it.

    SciFact's licence forbids shipping it with the package, so a checkout without the `shared` folder
    skips the tests that need it rather than failing them.
    """
    explicit = os.environ.get(SHARED_DATA_ENV_VAR)
    folder = Path(explicit) if explicit else Path(__file__).resolve().parents[2] / "shared" / "data"
    if not folder.is_dir():
        pytest.skip(f"shared test collections not found at {folder} (set {SHARED_DATA_ENV_VAR} to their folder)")
    return folder
