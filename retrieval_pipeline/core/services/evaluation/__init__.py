"""Evaluating a retriever on a set and what is kept of it: asking the questions (`asking`, `runner`), the
one operation every caller shares (`record.evaluate_and_record`: baseline, evaluate, compare, save),
baselines, history, the leaderboard and each pair's latest verdict."""
