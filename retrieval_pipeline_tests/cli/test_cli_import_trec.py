"""`retrieval-eval import trec`: TREC qrels and topics plus a corpus.jsonl to a golden set file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from retrieval_pipeline.core.golden.question_files import load_question_set_file
from retrieval_pipeline.core.golden.trec import import_trec

TOPICS = """<top>
<num> Number: 1
<title> flutter of swept wings
<desc> Description: At what speed do swept wings start to flutter?
</top>

<top>
<num> Number: 2
<title> when does smooth airflow turn chaotic
<desc> Description: Laminar boundary layer transition.
</top>

<top>
<num> Number: 3
<title> an unjudged topic
<desc> Description: Nobody judged it.
</top>
"""


@pytest.fixture
def trec_files(tmp_path: Path) -> dict[str, Path]:
    corpus = [
        {"_id": "d1", "title": "Wing flutter", "text": "Flutter of swept wings at high speed."},
        {"_id": "d2", "title": "Boundary layers", "text": "Laminar boundary layer transition on plates."},
        {"_id": "d3", "title": "Heat transfer", "text": "Heat conduction in composite slabs."},
    ]
    folder = tmp_path / "trec"
    folder.mkdir()
    files = {"qrels": folder / "qrels.txt", "topics": folder / "topics.txt", "corpus": folder / "corpus.jsonl"}
    files["qrels"].write_text("1 0 d1 2\n2 0 d2 1\n2 0 d3 0\n")
    files["topics"].write_text(TOPICS)
    files["corpus"].write_text("".join(json.dumps(d) + "\n" for d in corpus))
    return files


def arguments(files: dict[str, Path], out: Path, *extra: str) -> list[str]:
    return [
        "import",
        "trec",
        "--qrels",
        str(files["qrels"]),
        "--topics",
        str(files["topics"]),
        "--corpus",
        str(files["corpus"]),
        "--identifier",
        "tiny.trec",
        "--out",
        str(out),
        *extra,
    ]


@pytest.mark.parametrize("suffix", [".yaml", ".json", ".jsonl"])
def test_import_trec_writes_a_file_that_loads_back_as_the_same_set(cli, trec_files, tmp_path, suffix):
    out = tmp_path / "sets" / f"tiny{suffix}"

    result = cli(*arguments(trec_files, out))

    assert result.exit_code == 0, result.stderr
    assert "Wrote 2 questions (match 1, gap 1) of set tiny.trec" in result.stdout
    loaded = load_question_set_file(out)
    assert loaded == import_trec(trec_files["qrels"], trec_files["topics"], identifier="tiny.trec", corpus=trec_files["corpus"])
    assert [(q.id, q.question, q.expected_document_ids) for q in loaded.questions] == [
        ("1", "flutter of swept wings", ("d1",)),
        ("2", "when does smooth airflow turn chaotic", ("d2",)),
    ]
    assert [p.name for p in out.parent.iterdir()] == [out.name]  # no temporary file left


def test_import_trec_names_the_topics_it_leaves_out_clipped_on_stderr_in_full_in_json(cli, trec_files, tmp_path):
    unjudged = "".join(f"{topic} 0 d3 0\n" for topic in range(3, 15))
    trec_files["qrels"].write_text(trec_files["qrels"].read_text() + unjudged)
    trec_files["topics"].write_text(
        TOPICS + "".join(f"<top><num> Number: {t}\n<title> topic {t}\n</top>\n" for t in range(4, 15))
    )

    result = cli(*arguments(trec_files, tmp_path / "tiny.yaml", "--json"))

    assert result.exit_code == 0, result.stderr
    assert result.stderr == (
        "warning: left out 12 queries judged only not relevant (nothing to score them on): 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 +2\n"
    )
    assert json.loads(result.stdout)["left_out"] == [str(topic) for topic in range(3, 15)]


def test_import_trec_uses_the_description_and_refuses_to_overwrite_without_force(cli, trec_files, tmp_path):
    out = tmp_path / "tiny.yaml"
    out.write_text("precious")

    refused = cli(*arguments(trec_files, out, "--field", "description"))

    assert refused.exit_code == 2 and "already exists; pass --force" in refused.stderr
    assert out.read_text() == "precious"
    forced = cli(*arguments(trec_files, out, "--field", "description", "--force", "--name", "Tiny"))
    assert forced.exit_code == 0, forced.stderr
    loaded = load_question_set_file(out)
    assert loaded.name == "Tiny" and loaded.question("2").question == "Laminar boundary layer transition."


def test_import_trec_with_a_malformed_qrels_line_exits_2_naming_file_and_line(cli, trec_files, tmp_path):
    trec_files["qrels"].write_text("1 0 d1 2\n2 0 d2\n")
    out = tmp_path / "out" / "tiny.jsonl"

    result = cli(*arguments(trec_files, out))

    assert result.exit_code == 2
    assert (
        f"{trec_files['qrels']}:2" in result.stderr and "expected query-id, iteration, document-id and relevance" in result.stderr
    )
    assert not out.exists() and not out.parent.exists()


@pytest.mark.parametrize(
    ("drop", "extra", "message"),
    [
        ("corpus", [], "--corpus"),
        (None, ["--field", "narrative"], "--field"),
        (None, ["--identifier", "Bad Name"], "--identifier"),
    ],
)
def test_import_trec_bad_arguments_exit_2(cli, trec_files, tmp_path, drop, extra, message):
    args = arguments(trec_files, tmp_path / "x.yaml", *extra)
    if drop:
        index = args.index(f"--{drop}")
        del args[index : index + 2]

    result = cli(*args)

    assert result.exit_code == 2 and message in result.stderr
    assert not (tmp_path / "x.yaml").exists()


def test_import_trec_never_writes_the_set_over_one_of_its_inputs(cli, trec_files):
    before = trec_files["corpus"].read_bytes()

    result = cli(*arguments(trec_files, trec_files["corpus"], "--force"))

    assert result.exit_code == 2
    corpus = trec_files["corpus"]
    assert result.stderr.splitlines() == [
        f"error: --out {corpus} is the corpus this command reads ({corpus}): write to another file"
    ]
    assert trec_files["corpus"].read_bytes() == before
