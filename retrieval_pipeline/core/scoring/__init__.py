"""Scoring and verdicts: hit rates and ranking metrics, intervals and paired tests, regression, comparison, leaderboard."""
