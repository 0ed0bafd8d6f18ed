"""The statistics behind a verdict: Wilson intervals, exact McNemar and paired slice tests, power, a
judge's agreement with people, prediction-powered estimates and rank agreement (Kendall's tau)."""
