"""Judging as it is shown: a calibration and the estimates it allows, as JSON and as terminal lines."""
