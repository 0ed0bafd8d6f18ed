"""Traffic and coverage: how alike a logged query and a golden question are, which traffic a set covers,
the uncovered clusters ranked by traffic, and the traffic that weighs a set's questions."""
