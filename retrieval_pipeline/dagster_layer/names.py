"""Every name the Dagster layer gives Dagster, declared once: the assets' and groups' names here, and per
instance of the component the asset keys, job, schedule, sensor, group and resource names made from them.

A team's project may already hold a `leaderboard`, a `traffic` group, resources of its own, or a second
instance of the component (two products, two configurations). An instance's `prefix` puts its asset keys
under `prefix/` and `prefix_` before every other name it gives, so nothing it defines meets a name it did
not define; a check is named within its asset, so its key is kept apart with the asset's. Without a
prefix the names are the standalone code location's.
"""

from __future__ import annotations

from dataclasses import dataclass

from dagster import AssetKey

from retrieval_pipeline.dagster_layer.resources import RetrievalProject

SET_ASSET = "golden_question_set"
RETRIEVER_ASSET = "retriever_config"
EVALUATION_ASSET = "retrieval_evaluation"
LEADERBOARD_ASSET = "leaderboard"
LABEL_AUDIT_ASSET = "label_audit"
VECTORS_ASSET = "document_vectors"
JUDGING_ASSET = "machine_judgements"
GENERATION_ASSET = "generated_questions"
AGREEMENT_ASSET = "generated_set_agreement"
QUERY_LOG_ASSET = "query_log"
COVERAGE_ASSET = "coverage"

GROUP = "retrieval_quality"
JUDGING_GROUP = "judging"
TRAFFIC_GROUP = "traffic"

PROJECT_RESOURCE = "retrieval_project"
IO_MANAGER = "result_store_io_manager"


@dataclass(frozen=True)
class Names:
    """What one instance calls the things it defines; `prefix` None gives the standalone names."""

    prefix: str | None = None

    def key(self, asset: str) -> AssetKey:
        return AssetKey([self.prefix, asset] if self.prefix else [asset])

    def name(self, name: str) -> str:
        """A job's, schedule's, sensor's, group's or resource's name."""
        return f"{self.prefix}_{name}" if self.prefix else name

    @property
    def resource(self) -> str:
        return self.name(PROJECT_RESOURCE)

    @property
    def io_manager(self) -> str:
        return self.name(IO_MANAGER)

    def project(self, context) -> RetrievalProject:
        """The instance's own project, in a body whose decorator asks for `required_resource_keys={resource}`:
        a typed parameter would fix the resource's key to the parameter's name, the same in every instance."""
        return getattr(context.resources, self.resource)
