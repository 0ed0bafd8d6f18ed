"""The `judge` commands (by hand, machine, calibrate, apply) and the two that feed them: `pool`, which
gathers unjudged documents into a judging file, and `audit`, which finds labels worth a second look."""
