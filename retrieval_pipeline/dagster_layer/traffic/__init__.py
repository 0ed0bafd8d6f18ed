"""Traffic in Dagster: query logs and coverage per set, the sensor that notices a new log, and the
generated questions and their agreement with the human ones."""
