"""How many token positions a local model has, read from its files when the configuration is checked, so
a `max_length` beyond them is refused then, naming the retriever and the key, rather than failing inside
the runtime on the first long text (onnxruntime's Gather out of bounds, torch's index error).

Two sources, the smaller winning: the ONNX graph's position-embedding table (its rows: 512 on MiniLM,
int8 or float, whose packages ship the .onnx file alone) and `max_position_embeddings` of a
`config.json` beside the model (every Hugging Face export has one). The graph is parsed by protobuf,
which onnxruntime depends on, through a schema of the four fields needed (no `onnx` package, no tensor
decoded), once per version of the file: the whole file is read, so a first check of the 69 MB MiniLM-L3
costs a few tenths of a second. Models that number positions from after the padding index (RoBERTa,
XLM-R, MPNet: 514 rows, 512 usable) are known by their `config.json` only.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

_POSITION_TABLE = re.compile(r"position_embedding|embed_positions")  # BERT/RoBERTa/CLIP, BART/OPT names
_AFTER_PADDING = {"roberta", "xlm-roberta", "camembert", "mpnet"}  # positions start at pad_token_id + 1


def position_limit(runtime: str, model: Path) -> int | None:
    """The most tokens the model has positions for; None when its files do not say."""
    folder = model if model.is_dir() else model.parent
    limits = [_stamped(_config_positions, folder / "config.json")]
    if runtime == "onnx":
        limits.append(_stamped(_graph_positions, model))
    known = [limit for limit in limits if limit]
    return min(known) if known else None


def _stamped(read, path: Path) -> int | None:
    """`read` once per file version (path, size, modification time): checking runs before every build."""
    try:
        stat = path.stat()
    except OSError:
        return None
    return read(str(path), stat.st_size, stat.st_mtime_ns)


@functools.lru_cache(maxsize=16)
def _config_positions(path: str, size: int, modified: int) -> int | None:
    try:
        config = json.loads(Path(path).read_text(encoding="utf-8"))
        rows, padding = config.get("max_position_embeddings"), config.get("pad_token_id")
    except (OSError, ValueError, AttributeError):  # not JSON, or not an object: the runtime says so on load
        return None
    if not isinstance(rows, int) or rows <= 0:
        return None
    shifted = config.get("model_type") in _AFTER_PADDING and isinstance(padding, int)
    return rows - padding - 1 if shifted else rows


@functools.lru_cache(maxsize=16)
def _graph_positions(path: str, size: int, modified: int) -> int | None:
    """The rows of the graph's position-embedding initializers (a quantized table's values and scales
    have as many); None for a file that is no ONNX model, which the runtime refuses on load."""
    from google.protobuf.message import DecodeError

    try:
        model = _model_schema().FromString(Path(path).read_bytes())
    except (DecodeError, OSError):
        return None
    rows = [tensor.dims[0] for tensor in model.graph.initializer if len(tensor.dims) == 2 and _POSITION_TABLE.search(tensor.name)]
    return min(rows) if rows else None


@functools.cache
def _model_schema():
    """ModelProto.graph (7), GraphProto.initializer (5), TensorProto.dims (1) and name (8), as onnx.proto
    numbers them; every other field is kept undecoded."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    field = descriptor_pb2.FieldDescriptorProto
    schema = descriptor_pb2.FileDescriptorProto(name="onnx_positions.proto", package="onnx_positions", syntax="proto2")
    tensor, graph, model = (schema.message_type.add(name=name) for name in ("Tensor", "Graph", "Model"))
    tensor.field.add(name="dims", number=1, type=field.TYPE_INT64, label=field.LABEL_REPEATED)
    tensor.field.add(name="name", number=8, type=field.TYPE_STRING, label=field.LABEL_OPTIONAL)
    graph.field.add(name="initializer", number=5, type=field.TYPE_MESSAGE, label=field.LABEL_REPEATED, type_name="Tensor")
    model.field.add(name="graph", number=7, type=field.TYPE_MESSAGE, label=field.LABEL_OPTIONAL, type_name="Graph")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(schema)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("onnx_positions.Model"))
