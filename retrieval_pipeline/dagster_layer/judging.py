"""Machine judging in Dagster: the `machine_judgements` asset fills a judging file's machine columns with a
configured judge, on demand only.

A judge costs money (tokens), so no job, schedule or sensor selects the asset: it runs when someone
materializes it (the UI's launchpad, `dagster asset materialize`), naming the judge and the judging file,
or a folder of them, whose newest `.csv`/`.jsonl` is the latest pool. The work is the core's
`machine_judge_file`, as `retrieval-eval judge FILE --judge NAME` does it; the metadata says what it
did and cost. Nothing secret reaches it: the judge is named by its configured name and fingerprint.
No `from __future__ import annotations`: Dagster reads the asset's annotations (its config class) at
definition time.
"""

from pathlib import Path

from dagster import AssetExecutionContext, Config, Failure, MaterializeResult, MetadataValue, asset
from pydantic import Field

from retrieval_pipeline.core.services.judging_files import SUFFIXES
from retrieval_pipeline.core.services.machine_judging import JudgingSummary, machine_judge_file
from retrieval_pipeline.dagster_layer.resources import RetrievalProject

JUDGING_ASSET = "machine_judgements"
JUDGING_GROUP = "judging"


class MachineJudgingConfig(Config):
    judge: str = Field(description="A judge of the configuration's `judges:` section.")
    file: str = Field(
        description="A judging file written by `retrieval-eval pool`, or a folder of them: its newest .csv or .jsonl."
    )


def latest_judging_file(file: str, project: RetrievalProject) -> Path:
    """The file named, or the newest judging file of the folder named (relative to the configuration)."""
    path = project.config.resolve(file)
    if path.is_dir():
        files = [candidate for candidate in path.iterdir() if candidate.suffix in SUFFIXES and candidate.is_file()]
        if not files:
            raise Failure(f"no judging file ({' or '.join(SUFFIXES)}) in {path}")
        return max(files, key=lambda candidate: (candidate.stat().st_mtime, candidate.name))
    if not path.is_file():
        raise Failure(f"no judging file at {path}")
    return path


def judging_metadata(summary: JudgingSummary, path: Path, judge_name: str) -> dict:
    document = summary.to_dict()
    yes_share = summary.yes / summary.judged if summary.judged else None
    return {
        "file": MetadataValue.path(str(path)),
        "judge": judge_name,
        "judged_by": summary.judged_by,
        "rows": summary.rows,
        "rows_judged": summary.judged,
        "asked": document["asked"],
        "from_cache": document["from_cache"],
        "errors": document["errors"],
        "yes_share": MetadataValue.float(yes_share) if yes_share is not None else MetadataValue.null(),
        "tokens_per_1000_rows": (
            MetadataValue.float(document["tokens_per_1000_rows"])
            if document["tokens_per_1000_rows"] is not None
            else MetadataValue.null()
        ),
        "rows_per_second": MetadataValue.float(document["rows_per_second"])
        if document["rows_per_second"]
        else MetadataValue.null(),
    }


@asset(
    name=JUDGING_ASSET,
    group_name=JUDGING_GROUP,
    description="A judging file's machine columns filled by a configured judge (on demand: a judge costs money).",
)
def machine_judgements(
    context: AssetExecutionContext, config: MachineJudgingConfig, project: RetrievalProject
) -> MaterializeResult:
    path = latest_judging_file(config.file, project)
    summary = machine_judge_file(path, project.config.judge(config.judge), project.config.judgement_cache)
    for cause, count in summary.tally.errors.most_common():
        context.log.warning(f"{count} row(s) not judged: {cause}")
    return MaterializeResult(metadata=judging_metadata(summary, path, config.judge))
