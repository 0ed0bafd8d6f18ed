"""A Ctrl-C that Python could only report as "Exception ignored" (it landed in a finalizer or a
garbage-collection callback) still stops the command."""

from __future__ import annotations

import time

import pytest

from retrieval_pipeline.cli import command_process


class InterruptedWhileFinalized:
    def __del__(self):
        raise KeyboardInterrupt


def test_a_ctrl_c_lost_in_a_finalizer_is_raised_again_in_the_main_thread(capsys):
    with pytest.raises(KeyboardInterrupt), command_process():
        InterruptedWhileFinalized()  # finalized at once: its KeyboardInterrupt cannot propagate from there
        waited_until = time.monotonic() + 5
        while time.monotonic() < waited_until:  # the main thread meets the interrupt again within a moment,
            time.sleep(0.01)  # between two short sleeps: one long sleep would only end after its whole length

    assert "Exception ignored" not in capsys.readouterr().err
