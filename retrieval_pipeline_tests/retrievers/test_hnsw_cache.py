"""The saved HNSW graph on a real disk, with real usearch graphs over real vectors: it serves only a graph
it verifies (its checksum, the shape and fingerprint of the vectors it was built from) and says when it
built one again; a graph that does not fit the cache folder costs the shortcut, not the run."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from retrieval_pipeline.retrievers.vector import ann_index, dense
from retrieval_pipeline.retrievers.vector.ann_index import INDEX_FILE, HnswIndex, graph_report, hnsw_search
from retrieval_pipeline.retrievers.vector.dense import DenseKind

PARAMS = HnswIndex(kind="hnsw")
CORPUS_DOCUMENTS = 150
QUESTIONS = [
    "what similarity laws must be obeyed when constructing aeroelastic models of heated high speed aircraft",
    "what are the structural and aeroelastic problems associated with flight of high speed aircraft",
    "how can the effect of the boundary layer on wing pressure be calculated",
    "what is the heat transfer to a blunt body in hypersonic flow",
    "what are the effects of nose bluntness on the flow over a flat plate",
]


@pytest.fixture(autouse=True)
def fresh_process():
    dense.VECTORS.clear()
    ann_index.INDEXES.clear()


def unit_vectors(rows: int, width: int, seed: int) -> np.ndarray:
    vectors = np.random.default_rng(seed).standard_normal((rows, width)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


VECTORS = unit_vectors(2_000, 32, seed=1)


def searched(folder: Path, vectors: np.ndarray = VECTORS):
    """The graph over `vectors` under the key every test uses, as a new process finds it."""
    ann_index.INDEXES.clear()
    return hnsw_search(PARAMS, vectors, "key", True, folder, lambda message: None)


def saved_graph(folder: Path) -> Path:
    (saved,) = folder.glob(f"key.hnsw-*/{INDEX_FILE}")
    return saved


def zero_the_middle(folder: Path) -> None:
    """A 4 KiB block in the middle of the file zeroed, as a failing disk or a torn copy leaves it: the
    header still reads, the vectors and links it held do not."""
    saved = saved_graph(folder)
    data = bytearray(saved.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 4096] = bytes(4096)
    saved.write_bytes(bytes(data))


def swap_in_a_graph_of(vectors: np.ndarray):
    def swap(folder: Path) -> None:
        for graph in folder.glob("key.hnsw-*"):
            for file in graph.iterdir():
                file.unlink()
            graph.rmdir()
        searched(folder, vectors)

    return swap


DAMAGES = {
    "damaged in its middle": zero_the_middle,
    "of another width": swap_in_a_graph_of(unit_vectors(2_000, 16, seed=2)),
    "built from other vectors of the same shape": swap_in_a_graph_of(unit_vectors(2_000, 32, seed=3)),
}


@pytest.mark.parametrize("damage", DAMAGES, ids=list(DAMAGES))
def test_a_saved_graph_that_is_not_these_vectors_graph_is_built_again_and_says_so(tmp_path, caplog, damage):
    searched(tmp_path)
    DAMAGES[damage](tmp_path)
    with caplog.at_level(logging.WARNING):
        rebuilt = searched(tmp_path)
    assert not rebuilt.cache_hit  # asked before any search: yesterday's code searched such a graph
    [warning] = caplog.messages
    assert warning.startswith(f"hnsw graph {saved_graph(tmp_path).parent} not used (") and warning.endswith("): built again")
    assert graph_report(rebuilt)["index_cache_refused"] == warning.split(" not used (")[1].removesuffix("): built again")
    # each vector finds itself, up to the graph's approximation (a graph of other vectors finds next to none)
    found = rebuilt.top_positions(VECTORS[:30], 1)
    assert sum(top == [row] for row, top in enumerate(found)) >= 27, found
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        again = searched(tmp_path)  # the graph built again was published whole, and verifies
    assert again.cache_hit and caplog.messages == [] and "index_cache_refused" not in graph_report(again)


def test_a_graph_saved_without_its_checksum_is_built_again(tmp_path, caplog):
    """A half copy, or a graph saved before graphs carried their checksum."""
    searched(tmp_path)
    for file in saved_graph(tmp_path).parent.iterdir():
        if file.name != INDEX_FILE:
            file.unlink()
    with caplog.at_level(logging.WARNING):
        rebuilt = searched(tmp_path)
    assert not rebuilt.cache_hit and graph_report(rebuilt)["index_cache_refused"].startswith("no index.json: ")
    assert len(caplog.messages) == 1


@pytest.mark.slow
def test_a_dense_retriever_whose_saved_graph_was_built_from_other_vectors_ranks_as_exact_search_does(corpus, context, minilm):
    """The MiniLM documents' graph replaced by a graph over the same vectors in another order (the same
    shape, every position another document's): yesterday most questions ranked other documents."""
    model, tokenizer = minilm
    params = {"corpus": str(corpus), "model": str(model), "tokenizer": str(tokenizer), "max_length": 64}
    exact = DenseKind.parse("minilm", params, context).build().retrieve_batch(QUESTIONS, 10)
    first = DenseKind.parse("minilm", {**params, "index": {"kind": "hnsw"}}, context).build()
    assert first.retrieve_batch(QUESTIONS, 10) == exact
    vectors = np.asarray(first._vectors.vectors)
    (folder,) = (context.cache_dir / "dense").glob("*.hnsw-*")
    other = ann_index.usearch_index()(ndim=vectors.shape[1], metric="cos", dtype="f32", connectivity=16, expansion_add=128)
    other.add(np.arange(len(vectors), dtype=np.uint64), vectors[::-1].copy())
    other.save(str(folder / INDEX_FILE))
    dense.VECTORS.clear()
    ann_index.INDEXES.clear()
    again = DenseKind.parse("minilm", {**params, "index": {"kind": "hnsw"}}, context).build()
    report = again.build_report()
    assert report["index_cache_hit"] is False and report["index_cache_refused"]
    assert again.retrieve_batch(QUESTIONS, 10) == exact


FULL_DISK = """
import json, logging, resource, signal, sys
from pathlib import Path
import numpy as np
from retrieval_pipeline.retrievers.vector.ann_index import HnswIndex, hnsw_search, usearch_index

logging.basicConfig(format="%(levelname)s %(message)s", stream=sys.stderr)
usearch_index()
vectors = np.random.default_rng(1).standard_normal((2000, 32)).astype(np.float32)
vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write fails (EFBIG) as on a full disk, the process lives
resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, 100_000))  # the graph is about 550 KB
search = hnsw_search(HnswIndex(kind="hnsw"), vectors, "key", True, Path(sys.argv[1]), lambda message: None)
print(json.dumps({"hit": search.cache_hit, "top": search.top_positions(vectors[:30], 1)}))
"""


@pytest.mark.slow
def test_a_graph_that_does_not_fit_the_cache_folder_costs_the_shortcut_not_the_run(tmp_path):
    """A file size limit (RLIMIT_FSIZE) stands for a full disk: the same failed write at the same place."""
    pytest.importorskip("resource", reason="POSIX only")
    cache = tmp_path / "cache"
    done = subprocess.run(
        [sys.executable, "-c", FULL_DISK, str(cache)], capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr[-3000:]
    searched_in_memory = json.loads(done.stdout)
    assert searched_in_memory["hit"] is False
    assert sum(top == [row] for row, top in enumerate(searched_in_memory["top"])) >= 27  # the graph serves the run
    [warning] = done.stderr.splitlines()
    assert warning.startswith(f"WARNING cache {cache}/key.hnsw-") and "(File too large)" in warning
    assert list(cache.iterdir()) == []  # nothing half written: no staging folder, no graph
