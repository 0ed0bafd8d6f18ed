"""The dense kind's `index`: exact search (the default) or an HNSW graph through usearch, never silently.

Exact search scores every document: at a million documents a batch of questions reads 1.5 GB of vectors.
An HNSW graph visits a few thousand instead, and may miss some of the true nearest: so a run through one
states so (`Approximation`), with the top-10 overlap against exact search over the same vectors, measured
at run time on a seeded sample of the run's own questions.

The graph is built once per vectors' key and build parameters (`connectivity`, `expansion_add`, the
metric), saved beside the vectors with usearch's own format and memory-mapped on reuse (`view`), so a
nightly with an unchanged corpus builds nothing; `expansion_search` is a search setting, so changing it
reuses the graph. usearch is imported only when an HNSW index is built or loaded.

A saved graph is used only when it verifies, as the vector cache's vectors are (cache.py): its file's
CRC-32 (a block zeroed in its middle reads as a graph, and usearch then searches wrong links, or
crashes), and the shape and CRC-32 of the vectors it was built from (a graph over other vectors of the
same shape, from an encoder whose model changed under the same name or a copy, ranks other documents).
Both are in `index.json`, written last. One that does not verify is deleted and built again with one
warning, and the build report says why (`index_cache_refused`). The checks read the vectors and the
graph once each (1.5 to 2.4 GB/s on 2 shared cores: about 2 s at 1M x 384) against a build of minutes.
A graph that cannot be saved (a full disk) costs the shortcut only: one warning, nothing left in the
cache, and the graph in memory serves the run.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import random
import shutil
import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from retrieval_pipeline.core.base.durable import publish_folder
from retrieval_pipeline.core.retrieval.approximation import OVERLAP_DEPTH, Approximation
from retrieval_pipeline.retrievers.base.process_cache import ProcessCache
from retrieval_pipeline.retrievers.encoders import checksum_of
from retrieval_pipeline.retrievers.vector.cache import vectors_checksum
from retrieval_pipeline.retrievers.vector.exact_search import top_positions

LOG = logging.getLogger(__name__)
INDEX_FILE = "index.usearch"
CHECK_FILE = "index.json"
"""The saved graph's CRC-32 and the shape and CRC-32 of the vectors it was built from, written last."""
SAMPLE_SEED = 33
"""The overlap sample's seed: the same set measures the same questions on every run."""
ADD_ROWS = 100_000
"""Vectors added to the graph at a time, so a long build reports its progress."""


class ExactIndex(BaseModel):
    """Every document scored (exact_search.py): today's behaviour, and the reference the overlap is measured against."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["exact"] = "exact"


class HnswIndex(BaseModel):
    """usearch's HNSW: `connectivity` (M) edges per node, `expansion_add` (ef_construction) candidates while
    building, `expansion_search` (ef) while searching; `overlap_sample` questions measure it against exact."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["hnsw"]
    connectivity: int = Field(16, ge=2, le=256)
    expansion_add: int = Field(128, ge=1, le=4096)
    expansion_search: int = Field(64, ge=1, le=4096)
    overlap_sample: int = Field(50, ge=1, le=100_000)

    @property
    def description(self) -> str:
        return f"hnsw M={self.connectivity} ef_construction={self.expansion_add} ef={self.expansion_search}"


IndexParams = ExactIndex | HnswIndex


@dataclass(frozen=True)
class HnswSearch:
    """A graph over one matrix of vectors, searched with the parameters' `expansion_search`."""

    graph: Any  # usearch.index.Index, memory-mapped when loaded from the cache
    params: HnswIndex
    cache_hit: bool
    build_seconds: float
    refused: str | None = None  # why a saved graph was not used (and this one built instead)

    def top_positions(self, queries, depth: int) -> list[list[int]]:
        """Each question's nearest positions, best first: at most `depth`, fewer where the graph finds fewer."""
        import numpy as np

        depth = min(depth, len(self.graph))
        if depth <= 0:
            return [[] for _ in queries]
        found = self.graph.search(np.ascontiguousarray(queries, dtype=np.float32), depth)
        # one question gives usearch's Matches (its keys only those found), several its BatchMatches
        keys, counts = np.atleast_2d(found.keys), getattr(found, "counts", [len(found.keys)])
        return [row[:count].tolist() for row, count in zip(keys, counts)]


INDEXES: ProcessCache[HnswSearch] = ProcessCache()


def hnsw_search(
    params: HnswIndex, vectors, vectors_key: str, normalized: bool, folder: Path, report: Callable[[str], None]
) -> HnswSearch:
    """The graph for these vectors and build parameters: from this process, from `folder`'s cache
    (`<vectors key>.hnsw-<build key>` beside the vectors' folder), or built and saved there."""
    metric = "cos" if normalized else "ip"  # unit vectors: cosine is their inner product, as exact search ranks
    build = {"metric": metric, "connectivity": params.connectivity, "expansion_add": params.expansion_add}
    path = folder / f"{vectors_key}.hnsw-{checksum_of((), vectors=vectors_key, **build)}"
    return INDEXES.get((path, params.expansion_search), lambda: _loaded_or_built(params, vectors, path, build, report))


def _loaded_or_built(params: HnswIndex, vectors, path: Path, build: dict, report: Callable[[str], None]) -> HnswSearch:
    Index = usearch_index()
    built_from = {"vectors": list(vectors.shape), "vectors_crc32": vectors_checksum(vectors)}
    graph, refused = _verified(path, built_from)
    if refused is not None:
        LOG.warning("hnsw graph %s not used (%s): built again", path, refused)
    cache_hit, started = graph is not None, time.perf_counter()
    if graph is None:
        graph = Index(ndim=vectors.shape[1], dtype="f32", **build)
        for start in range(0, vectors.shape[0], ADD_ROWS):
            stop = min(start + ADD_ROWS, vectors.shape[0])
            graph.add(_keys(start, stop), vectors[start:stop], threads=0, log=False)
            report(f"indexed {stop}/{vectors.shape[0]} vectors (hnsw)")
        publish_folder(path, partial(_save, graph, built_from))
    graph.expansion_search = params.expansion_search
    return HnswSearch(graph, params, cache_hit, 0.0 if cache_hit else time.perf_counter() - started, refused)


def usearch_index():
    """usearch's Index, with onnxruntime imported first where it is installed: imported after usearch,
    onnxruntime crashes the process (a segfault in libstdc++ while importing, usearch 2.26 with
    onnxruntime 1.32), and a process that searched a graph may open an ONNX encoder next."""
    from importlib.util import find_spec

    if find_spec("onnxruntime") is not None:
        import onnxruntime  # noqa: F401

    from usearch.index import Index

    return Index


def _keys(start: int, stop: int):
    import numpy as np

    return np.arange(start, stop, dtype=np.uint64)


class _Refused(ValueError):
    """A saved graph that reads but is not these vectors' graph."""


def _verified(folder: Path, built_from: dict) -> tuple[Any, str | None]:
    """The saved graph, memory-mapped, when it verifies against `built_from` (the vectors' shape and
    CRC-32); else None, with why when one was saved (then its folder is deleted)."""
    if not folder.is_dir():
        return None, None
    try:
        return _restored(folder, built_from), None
    except Exception as error:  # noqa: BLE001 - any damage at all means: build again
        shutil.rmtree(folder, ignore_errors=True)
        return None, str(error) if isinstance(error, _Refused) else f"it cannot be read: {type(error).__name__}"


def _restored(folder: Path, built_from: dict):
    """Checked before usearch reads a byte of it: a damaged graph can crash usearch, not only mislead it."""
    if not (folder / CHECK_FILE).is_file():
        raise _Refused(f"no {CHECK_FILE}: saved incompletely, or before graphs carried their checksum")
    check = json.loads((folder / CHECK_FILE).read_text(encoding="utf-8"))
    if check["vectors"] != built_from["vectors"]:
        (rows, width), (now_rows, now_width) = check["vectors"], built_from["vectors"]
        raise _Refused(f"built over {rows} x {width} vectors, these are {now_rows} x {now_width}")
    if check["vectors_crc32"] != built_from["vectors_crc32"]:
        raise _Refused("built from other vectors of the same shape")
    if _file_checksum(folder / INDEX_FILE) != check["crc32"]:
        raise _Refused(f"{INDEX_FILE} does not match its checksum")
    graph = usearch_index().restore(str(folder / INDEX_FILE), view=True)
    rows, width = built_from["vectors"]
    if graph is None or len(graph) != rows or graph.ndim != width:
        raise _Refused(f"{INDEX_FILE} does not index these vectors")
    return graph


def _save(graph, built_from: dict, staging: Path) -> None:
    """The graph, then what it is checked against (publish_folder's `fill`: an OSError costs the shortcut)."""
    file = staging / INDEX_FILE
    try:
        graph.save(str(file))
    except RuntimeError as error:  # usearch's, naming no cause ("Failed to serialize into stream")
        raise _write_failure(file, error) from None
    check = {**built_from, "crc32": _file_checksum(file)}
    (staging / CHECK_FILE).write_text(json.dumps(check), encoding="utf-8")


def _write_failure(file: Path, error: RuntimeError) -> OSError:
    """Why usearch could not write `file`, asked of the file system with more bytes where it stopped:
    a full disk (ENOSPC) or a file size limit (EFBIG) says so; else usearch's own words."""
    try:
        with open(file, "ab", buffering=0) as handle:
            probe = memoryview(bytes(1 << 20))  # more than a block, so a partly filled last block cannot take it all
            while probe:
                probe = probe[handle.write(probe) :]
            os.fsync(handle.fileno())  # where the file system tells a full disk only then (NFS)
    except OSError as cause:
        return cause
    return OSError(errno.EIO, f"usearch: {error}")


def _file_checksum(file: Path) -> int:
    checksum = 0
    with file.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 24), b""):
            checksum = zlib.crc32(block, checksum)
    return checksum


def sampled(questions: Sequence[str], size: int) -> list[str]:
    """`size` of the questions (all when fewer), drawn with a fixed seed and kept in the set's order."""
    chosen = sorted(random.Random(SAMPLE_SEED).sample(range(len(questions)), min(size, len(questions))))
    return [questions[i] for i in chosen]


def measured_overlap(search: HnswSearch, queries, vectors) -> float:
    """The mean share of exact search's top 10 (by position, over the same vectors) in the graph's top 10."""
    depth = min(OVERLAP_DEPTH, vectors.shape[0])
    exact = top_positions(queries, vectors, depth).tolist()
    approximate = search.top_positions(queries, depth)
    return sum(len(set(a) & set(e)) / depth for a, e in zip(approximate, exact)) / len(exact)


def stated_approximation(
    search: HnswSearch, questions: Sequence[str], encode: Callable[[list[str]], Any], vectors
) -> Approximation:
    """The statement of a run through the graph: its overlap with exact search on the sampled questions,
    or "not measured" where there are none, no documents, or the encoder failed (the run's answers stand)."""
    sample = sampled(questions, search.params.overlap_sample)
    if not sample or vectors.shape[0] == 0:
        return Approximation(search.params.description, None, 0)
    try:
        queries = encode(sample)
    except Exception:  # noqa: BLE001 - an endpoint down after the run: the run stays, stated approximate, unmeasured
        return Approximation(search.params.description, None, 0)
    return Approximation(search.params.description, measured_overlap(search, queries, vectors), len(sample))


def graph_report(search: HnswSearch | None) -> dict[str, str | bool | float]:
    """The build report's index entries: none for exact search, so its report keeps the keys it had."""
    if search is None:
        return {}
    return {
        "index": search.params.description,
        "index_cache_hit": search.cache_hit,
        "index_build_seconds": round(search.build_seconds, 3),
        **({"index_cache_refused": search.refused} if search.refused else {}),
    }
