"""The Dagster face of the project: assets, checks, partitions, resources, schedules, sensors and the
nightly command, each a thin layer over `retrieval_pipeline.core`."""
