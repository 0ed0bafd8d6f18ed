"""A generated candidate's provenance: validated on construction, naming the problem, written as the
judging-file columns that never pass for a sampled query's, and read back from them."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from retrieval_pipeline.core.golden.generated import COLUMNS, GeneratedProvenance

CLUSTER = {"generated_by": "chat@abc", "source": "cluster", "document_id": "184", "asked_form": "gap"}


def test_a_clusters_provenance_fills_every_column_and_a_documents_leaves_the_clusters_empty():
    cluster = GeneratedProvenance(**CLUSTER, log="site", cluster=2, traffic=300)
    document = GeneratedProvenance(generated_by="extractive@def", source="document", document_id="6", asked_form="match")

    assert cluster.columns() == dict(zip(COLUMNS, ("chat@abc", "cluster", "184", "gap", "site", 2, 300)))
    assert document.columns() == dict(zip(COLUMNS, ("extractive@def", "document", "6", "match", "", "", "")))
    assert "source_log" not in COLUMNS  # the column that marks `coverage --sample`'s rows


def test_a_provenance_reads_back_from_its_csv_cells():
    cluster = GeneratedProvenance(**CLUSTER, log="site", cluster=2, traffic=300)
    cells = {name: str(value) for name, value in cluster.columns().items()}

    assert GeneratedProvenance.from_columns(cells) == cluster


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"generated_by": "chat"}, "generated_by is NAME@FINGERPRINT"),
        ({"source": "query"}, "the source is one of cluster, document"),
        ({"asked_form": "paraphrase"}, "the asked form is match or gap"),
        ({"traffic": 0}, "a cluster source names its log, its rank and its traffic"),
        ({"source": "document"}, "a document source has no log, cluster or traffic"),
    ],
)
def test_a_bad_provenance_is_refused_naming_the_problem(fields, problem):
    with pytest.raises(ValidationError, match=problem):
        GeneratedProvenance(**{**CLUSTER, "log": "site", "cluster": 1, "traffic": 5, **fields})
