"""Labels in Dagster: the label audit per set, the judging pass over a judging file (on demand), and the
job that accepts a run as the baseline."""
