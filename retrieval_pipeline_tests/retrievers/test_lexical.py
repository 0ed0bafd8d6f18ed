"""The BM25 retriever on small real-text corpora, through its kind and through a configuration."""

from __future__ import annotations

import gzip
import json
import math
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.golden.beir import import_beir
from retrieval_pipeline.core.retrieval.retriever import BatchRetriever, BuildContext, VersionedIndex
from retrieval_pipeline.core.services.configuration.project import load_config
from retrieval_pipeline.core.services.evaluation.runner import run_question_set
from retrieval_pipeline.retrievers.lexical import retriever as lexical
from retrieval_pipeline.retrievers.lexical.retriever import LexicalKind, LexicalRetriever

DOCUMENTS = [
    {"_id": "d1", "title": "Jet propulsion upkeep", "text": "Turbofan engines need inspection of fan blades after bird strikes."},
    {"_id": "d2", "title": "Sourdough bread", "text": "A starter of flour and water ferments for days before baking."},
    {
        "_id": "d3",
        "title": "Glacier retreat",
        "text": "Alpine glaciers have lost much of their ice since the nineteenth century.",
    },
    {"_id": "d4", "title": "Honey bees", "text": "Bees tell the hive where flowers are through a waggle dance."},
    {"_id": "d5", "title": "Tidal power", "text": "Tidal turbines convert the motion of sea water into electricity."},
]


def write_corpus(path: Path, documents=DOCUMENTS) -> Path:
    lines = "".join(json.dumps(document) + "\n" for document in documents)
    if path.name.endswith(".gz"):
        path.write_bytes(gzip.compress(lines.encode()))
    else:
        path.write_text(lines, encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def fresh_process_cache():
    """Every test starts as a new process would: nothing built in memory yet."""
    lexical.INDEXES.clear()


@pytest.fixture
def corpus(tmp_path) -> Path:
    return write_corpus(tmp_path / "corpus.jsonl")


@pytest.fixture
def context(tmp_path) -> BuildContext:
    return BuildContext(base_dir=tmp_path, source="test.yaml", cache_dir=tmp_path / "cache")


def build(context: BuildContext, identifier: str = "bm25", **params) -> LexicalRetriever:
    return LexicalKind.parse(identifier, {"corpus": "corpus.jsonl", **params}, context).build()


def test_the_document_sharing_the_rare_term_ranks_first_and_unmatched_ones_are_left_out(corpus, context):
    # "water" is in d2 and d5, "turbines" only in d5; nothing else matches, so nothing else is returned.
    assert build(context).retrieve("water turbines", 10) == ["d5", "d2"]


def test_scores_follow_lucene_bm25_and_min_score_is_a_strict_floor(corpus, context):
    # With k1 = 0 a matched term scores its idf, ln(1 + (N - df + 0.5) / (df + 0.5)), whatever its frequency.
    water, turbines = math.log(1 + 3.5 / 2.5), math.log(1 + 4.5 / 1.5)
    assert build(context, k1=0.0, min_score=water - 1e-4).retrieve("water turbines", 10) == ["d5", "d2"]
    assert build(context, k1=0.0, min_score=water + 1e-4).retrieve("water turbines", 10) == ["d5"]
    assert build(context, k1=0.0, min_score=water + turbines + 1e-4).retrieve("water turbines", 10) == []


def test_zero_scores_are_never_returned_even_when_more_results_are_asked_for(corpus, context):
    retriever = build(context)
    assert retriever.retrieve("glaciers", 100) == ["d3"]
    assert retriever.retrieve("volcanic eruptions", 12) == []
    assert retriever.retrieve("glaciers", 0) == []


def test_stemming_matches_inflections_and_none_means_exact_words(corpus, context):
    assert build(context).retrieve("engine", 10) == ["d1"]
    assert build(context, stemmer=None).retrieve("engine", 10) == []
    assert build(context, stemmer=None).retrieve("engines", 10) == ["d1"]


def test_a_question_made_of_stopwords_finds_nothing_unless_stopwords_are_kept(corpus, context):
    assert build(context).retrieve("the of and", 10) == []
    assert build(context, stopwords=None).retrieve("the of and", 10) != []
    assert build(context, stopwords=["Tidal"]).retrieve("tidal", 10) == []


def test_fields_choose_what_is_indexed(corpus, context):
    assert build(context).retrieve("sourdough", 10) == ["d2"]
    assert build(context, fields=["text"]).retrieve("sourdough", 10) == []


def test_batch_results_equal_single_results(corpus, context):
    retriever = build(context)
    questions = ["water turbines", "bees dance", "the of", "fan blade inspection", "ice age"]
    assert isinstance(retriever, BatchRetriever)
    assert retriever.retrieve_batch(questions, 3) == [retriever.retrieve(question, 3) for question in questions]
    assert retriever.retrieve_batch([], 3) == []


def marked_as_cached(folder: Path) -> None:
    """The cached index's document ids renamed `cached-<id>`: an index loaded from `folder` answers with
    them, one built anew from the corpus with the plain ids."""
    ids = folder / "document_ids.json"
    ids.write_text(json.dumps([f"cached-{i}" for i in json.loads(ids.read_text(encoding="utf-8"))]), encoding="utf-8")


def test_the_index_is_built_once_per_process_and_loaded_by_the_next(corpus, context):
    first = build(context)
    folder = context.cache_dir / "lexical" / first.index_version()
    marked_as_cached(folder)
    second = build(context, identifier="again", min_score=0.5)  # query-time parameter: same index
    assert second.index_version() == first.index_version()
    assert second.retrieve("water turbines", 10) == ["d5"]  # the index in memory, not reread; min_score cuts d2

    lexical.INDEXES.clear()  # as a new process
    assert build(context).retrieve("water turbines", 10) == ["cached-d5", "cached-d2"]  # loaded, not rebuilt


@pytest.mark.slow
def test_a_new_process_loads_the_persisted_index(corpus, context):
    first = build(context)
    marked_as_cached(context.cache_dir / "lexical" / first.index_version())
    script = textwrap.dedent(
        f"""
        from pathlib import Path
        from retrieval_pipeline.core.retrieval.retriever import BuildContext
        from retrieval_pipeline.retrievers.lexical import retriever as lexical
        context = BuildContext(base_dir=Path({str(corpus.parent)!r}), source="t", cache_dir=Path({str(context.cache_dir)!r}))
        retriever = lexical.LexicalKind.parse("bm25", {{"corpus": "corpus.jsonl"}}, context).build()
        print(retriever.index_version(), *retriever.retrieve("water turbines", 10))
        """
    )
    completed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.split() == [first.index_version(), "cached-d5", "cached-d2"]


INDEX_FILES = (
    "data.csc.index.npy",
    "indices.csc.index.npy",
    "indptr.csc.index.npy",
    "params.index.json",
    "vocab.index.json",
    "document_ids.json",
)


def damage(path: Path, how: str) -> None:
    if how == "emptied":
        path.write_bytes(b"")
    elif how == "truncated":
        path.write_bytes(path.read_bytes()[: max(1, path.stat().st_size // 2)])
    else:
        path.unlink()


@pytest.mark.parametrize("how", ["emptied", "truncated", "deleted"])
@pytest.mark.parametrize("name", INDEX_FILES)
def test_a_damaged_cached_index_is_rebuilt_whatever_the_loader_raises(corpus, context, name, how):
    folder = context.cache_dir / "lexical" / build(context).index_version()
    damage(folder / name, how)
    lexical.INDEXES.clear()  # as a new process

    assert build(context).retrieve("water turbines", 10) == ["d5", "d2"]
    assert sorted(path.name for path in folder.iterdir()) == sorted(INDEX_FILES)
    lexical.INDEXES.clear()
    marked_as_cached(folder)
    assert build(context).retrieve("water turbines", 10) == ["cached-d5", "cached-d2"]  # the rebuilt cache loads


def test_document_ids_that_do_not_match_the_cached_index_make_it_rebuilt(corpus, context):
    folder = context.cache_dir / "lexical" / build(context).index_version()
    (folder / "document_ids.json").write_text(json.dumps(["d1", "d2"]), encoding="utf-8")
    lexical.INDEXES.clear()
    assert build(context).retrieve("water turbines", 10) == ["d5", "d2"]
    assert len(json.loads((folder / "document_ids.json").read_text())) == len(DOCUMENTS)


def test_no_staging_folder_is_left_beside_the_cached_index(corpus, context):
    build(context)
    assert [path.name for path in (context.cache_dir / "lexical").iterdir()] == [build(context).index_version()]


def test_the_index_version_follows_the_corpus_content_and_the_index_parameters(tmp_path, corpus, context):
    original = build(context).index_version()
    assert isinstance(build(context), VersionedIndex) and len(original) == 16
    assert build(context, k1=1.2).index_version() != original
    write_corpus(tmp_path / "elsewhere.jsonl")
    assert build(context, corpus="elsewhere.jsonl").index_version() == original

    write_corpus(corpus, [*DOCUMENTS, {"_id": "d6", "title": "Volcanoes", "text": "Lava flows after eruptions."}])
    changed = build(context)
    assert changed.index_version() != original
    assert changed.retrieve("volcanic eruptions", 10) == ["d6"]


def test_gzip_corpora_and_plain_id_fields_are_read(tmp_path, context):
    plain = [{"id": d["_id"], "text": d["text"], **({"title": d["title"]} if d["_id"] != "d3" else {})} for d in DOCUMENTS]
    write_corpus(tmp_path / "corpus.jsonl.gz", plain)
    retriever = build(context, corpus="corpus.jsonl.gz")
    assert retriever.retrieve("water turbines", 10) == ["d5", "d2"]
    assert retriever.retrieve("glacier", 10) == ["d3"]  # its title is missing; its text still counts


def test_numeric_ids_become_strings(tmp_path, context):
    write_corpus(tmp_path / "corpus.jsonl", [{**d, "_id": number} for number, d in enumerate(DOCUMENTS, start=1)])
    assert build(context).retrieve("water turbines", 10) == ["5", "2"]


def test_a_malformed_line_is_named(tmp_path, context):
    lines = [json.dumps(d) for d in DOCUMENTS]
    lines[2] = '{"_id": "d3", "text": "unterminated'
    (tmp_path / "corpus.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InvalidInputError, match=r"corpus\.jsonl:3: retrievers\.bm25: invalid JSON"):
        build(context)


def test_a_document_without_an_id_is_named(tmp_path, context):
    write_corpus(tmp_path / "corpus.jsonl", [*DOCUMENTS[:3], {"title": "Orphan", "text": "No identifier."}])
    with pytest.raises(InvalidInputError, match=r"corpus\.jsonl:4: retrievers\.bm25: the document has no id"):
        build(context)


def test_an_empty_corpus_is_refused(tmp_path, context):
    (tmp_path / "corpus.jsonl").write_text("\n", encoding="utf-8")
    with pytest.raises(InvalidInputError, match="no documents"):
        build(context)


def test_a_missing_corpus_names_the_retriever_and_the_file(context, tmp_path):
    with pytest.raises(InvalidInputError) as raised:
        build(context, corpus="absent.jsonl")
    message = str(raised.value)
    assert "test.yaml" in message and "retrievers.bm25" in message and "field 'corpus'" in message
    assert str(tmp_path / "absent.jsonl") in message


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"k1": "high"}, "k1"),
        ({"b": 2}, "b"),
        ({"stemmer": "klingon"}, "stemmer"),
        ({"stopwords": "fr"}, "stopwords"),
        ({"fields": ["body"]}, "fields"),
        ({"fields": []}, "fields"),
        ({"method": "tfidf"}, "method"),
        ({"k_1": 1.2}, "k_1"),
    ],
)
def test_a_bad_parameter_names_its_key(corpus, context, params, field):
    with pytest.raises(InvalidInputError, match=rf"test\.yaml: retrievers\.bm25: field '{field}"):
        build(context, **params)


def test_configured_retrievers_are_scored_and_min_score_lets_silence_pass(tmp_path, corpus):
    set_file = tmp_path / "set.yaml"
    set_file.write_text(
        textwrap.dedent(
            """
            identifier: tiny
            name: Tiny real-text set
            questions:
              - {id: q1, question: 'Which turbines run on sea water?', form: match, expected_document_ids: [d5]}
              - {id: q2, question: 'How do bees say where flowers are?', form: match, expected_document_ids: [d4]}
              - {id: q3, question: 'What do turbofan engines need?', form: match, expected_document_ids: [d1]}
              - {id: q4, question: 'Who won the 1966 world cup?', form: gap, expected_document_ids: []}
            """
        ),
        encoding="utf-8",
    )
    config_file = tmp_path / "config.yaml"
    config_file.write_text(
        textwrap.dedent(
            """
            cache_dir: cache
            question_sets: [{file: set.yaml}]
            retrievers:
              bm25: {kind: lexical, corpus: corpus.jsonl}
              strict: {kind: lexical, corpus: corpus.jsonl, min_score: 1000.0}
            """
        ),
        encoding="utf-8",
    )
    config = load_config(config_file)
    question_set = config.question_set("tiny")
    result = run_question_set(question_set, config.retriever("bm25"))
    assert (result.hit_rate(1), result.hit_rate(3)) == (1.0, 1.0)  # q4 matches nothing, so it passes too
    assert result.index_version == config.retriever("bm25").index_version()
    strict = run_question_set(question_set, config.retriever("strict"))
    assert (strict.hit_rate(1), strict.hit_rate(3)) == (0.25, 0.25)  # only the empty-label question
    assert (tmp_path / "cache" / "lexical" / result.index_version).is_dir()


@pytest.mark.slow
def test_scifact_meets_the_reference_quality(shared_data, tmp_path):
    folder = shared_data / "scifact"
    if not (folder / "corpus.jsonl").is_file():
        pytest.skip(f"SciFact not found in {shared_data}")
    question_set = import_beir(folder, identifier="scifact", split="test")
    context = BuildContext(base_dir=folder, source="scifact", cache_dir=tmp_path)
    retriever = LexicalKind.parse("bm25", {"corpus": "corpus.jsonl"}, context).build()
    result = run_question_set(question_set, retriever)
    assert result.question_count == 300 and result.complete
    # Reference (bm25s lucene, k1 1.5, b 0.75, English stemmer and stopwords): 0.550 / 0.727.
    assert result.hit_rate(1) >= 0.53 and result.hit_rate(3) >= 0.70
