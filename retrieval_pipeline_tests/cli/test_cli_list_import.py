"""`retrieval-eval list` and `retrieval-eval import beir`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from retrieval_pipeline.core.golden.beir import import_beir
from retrieval_pipeline.core.golden.question_files import load_question_set_file


def test_list_shows_sets_with_counts_by_form_and_retrievers_with_kinds(cli, project):
    result = cli("list", "--config", str(project.config))

    assert result.exit_code == 0, result.stderr
    set_row = next(line for line in result.stdout.splitlines() if "cli.small" in line)
    assert [cell.strip() for cell in set_row.split("│")[2:5]] == ["2", "1", "1"]
    assert any("good" in line and "cli_table" in line for line in result.stdout.splitlines())
    assert f"Configuration: {project.config}" in result.stdout


def test_list_json(cli, project):
    document = json.loads(cli("list", "--config", str(project.config), "--json").stdout)

    [question_set] = document["question_sets"]
    assert question_set["identifier"] == "cli.small" and question_set["by_form"] == {"match": 1, "gap": 1}
    assert question_set["source"].endswith("small.yaml") and "left_out" not in question_set  # a set file leaves none out
    assert document["retrievers"][0] == {"identifier": "good", "kind": "cli_table", "status": "ok", "problem": None}


def test_list_with_a_duplicate_set_identifier_exits_2_naming_both_files(cli, project):
    (project.root / "copy.yaml").write_text((project.root / "small.yaml").read_text())
    project.config.write_text(project.config.read_text().replace("- file: small.yaml", "- file: small.yaml\n- file: copy.yaml"))

    result = cli("list", "--config", str(project.config))

    assert result.exit_code == 2
    assert "duplicate question set 'cli.small'" in result.stderr and "copy.yaml" in result.stderr


@pytest.mark.parametrize(
    ("retriever", "named"),
    [
        (
            "{kind: lexcal, corpus: corpus.jsonl}",
            "retrievers.bad: field 'kind': unknown retriever kind 'lexcal' (did you mean 'lexical'?); available:",
        ),
        ("{kind: lexical, corpus: corpus.jsonl, k1: fast}", "retrievers.bad: field 'k1': Input should be a valid number"),
        ("{kind: lexical, corpsu: corpus.jsonl}", "retrievers.bad: field 'corpsu': is not a known key; did you mean 'corpus'?"),
    ],
    ids=["unknown-kind", "bad-parameter", "misspelt-parameter"],
)
def test_list_names_a_bad_retrievers_problem_as_run_would_lists_the_others_and_builds_none(cli, project, retriever, named):
    (project.root / "corpus.jsonl").write_text('{"_id": "d1", "text": "alpha"}\n', encoding="utf-8")
    project.config.write_text(project.config.read_text() + f"  bad: {retriever}\n", encoding="utf-8")

    listed = cli("list", "--config", str(project.config))
    ran = cli("run", "cli.small", "bad", "--config", str(project.config))

    assert listed.exit_code == ran.exit_code == 2
    assert named in ran.stderr and ran.stderr.removeprefix("error: ").strip() in listed.stdout
    rows = {line.split()[1]: line for line in listed.stdout.splitlines() if line.startswith("│")}
    assert all(rows[name].rstrip(" │").endswith("ok") for name in ("good", "half", "flaky"))
    assert listed.stderr == ran.stderr and listed.stderr.count("\n") == 1
    assert not (project.root.parent / "cache").exists() and not project.store.exists()


def test_list_with_a_run_file_not_yet_written_lists_every_retriever_and_exits_2(cli, project):
    later = "  later: {kind: run_file, path: later.run}\n  later_too: {kind: run_file, path: later_too.run}\n"
    project.config.write_text(project.config.read_text() + later, encoding="utf-8")

    listed = cli("list", "--config", str(project.config), "--json")
    ran_another = cli("run", "cli.small", "good", "--config", str(project.config))

    assert listed.exit_code == 2 and ran_another.exit_code == 0
    statuses = {r["identifier"]: (r["status"], r["problem"]) for r in json.loads(listed.stdout)["retrievers"]}
    assert statuses["good"] == statuses["half"] == statuses["flaky"] == ("ok", None)
    assert statuses["later"][0] == "problem"
    assert (
        "later.run" in statuses["later"][1]
        and "retrievers.later" in statuses["later"][1]
        and "no such file" in statuses["later"][1]
    )
    [line] = listed.stderr.splitlines()
    assert line == f"error: 2 of 5 retrievers cannot be run: {statuses['later'][1]}; {statuses['later_too'][1]}"


def test_list_names_a_misspelt_configuration_key_with_the_key_it_stands_for(cli, project):
    project.config.write_text(project.config.read_text().replace("retrievers:", "retrievrs:"), encoding="utf-8")

    result = cli("list", "--config", str(project.config))

    assert result.exit_code == 2
    assert result.stderr == f"error: {project.config}: field 'retrievrs': is not a known key; did you mean 'retrievers'?\n"


@pytest.fixture
def beir_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "tiny-beir"
    (folder / "qrels").mkdir(parents=True)
    corpus = [
        {"_id": "d1", "title": "Wing flutter", "text": "Flutter of swept wings at high speed."},
        {"_id": "d2", "title": "Boundary layers", "text": "Laminar boundary layer transition on plates."},
        {"_id": "d3", "title": "Heat transfer", "text": "Heat conduction in composite slabs."},
    ]
    queries = [
        {"_id": "1", "text": "flutter of swept wings"},
        {"_id": "2", "text": "when does smooth airflow turn chaotic"},
        {"_id": "3", "text": "an unjudged query"},
    ]
    (folder / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in corpus))
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n1\td1\t2\n2\td2\t1\n2\td3\t0\n")
    return folder


def test_list_names_the_queries_a_configured_beir_folder_left_out(cli, beir_folder, tmp_path):
    entry = {"beir": str(beir_folder), "identifier": "tiny.set", "min_relevance": 2}
    config = tmp_path / "retrieval-eval.yaml"
    config.write_text(json.dumps({"question_sets": [entry]}), encoding="utf-8")

    listed = cli("list", "--config", str(config))
    document = json.loads(cli("list", "--config", str(config), "--json").stdout)

    assert listed.exit_code == 0, listed.stderr
    assert "tiny.set: left out 1 query judged only not relevant (nothing to score them on): 2" in listed.stdout.splitlines()
    [question_set] = document["question_sets"]
    assert (question_set["question_count"], question_set["left_out"]) == (1, ["2"])


@pytest.mark.parametrize("suffix", [".yaml", ".yml", ".json", ".jsonl"])
def test_import_beir_writes_a_file_that_loads_back_as_the_same_set(cli, beir_folder, tmp_path, suffix):
    out = tmp_path / "sets" / f"tiny{suffix}"

    result = cli("import", "beir", str(beir_folder), "--identifier", "tiny.set", "--out", str(out))

    assert result.exit_code == 0, result.stderr
    assert "Wrote 2 questions (match 1, gap 1) of set tiny.set" in result.stdout
    loaded = load_question_set_file(out)
    assert loaded == import_beir(beir_folder, identifier="tiny.set")
    assert [q.expected_document_ids for q in loaded.questions] == [("d1",), ("d2",)]
    if suffix == ".jsonl":
        lines = out.read_text().splitlines()
        assert set(json.loads(lines[0])) == {"identifier", "name", "description"} and len(lines) == 3
    assert [p.name for p in out.parent.iterdir()] == [out.name]  # no temporary file left


def test_import_beir_names_the_queries_it_leaves_out_on_stderr_and_in_json(cli, beir_folder, tmp_path):
    out = tmp_path / "tiny.yaml"

    result = cli(
        "import", "beir", str(beir_folder), "--identifier", "tiny.set", "--out", str(out), "--min-relevance", "2", "--json"
    )

    assert result.exit_code == 0, result.stderr
    assert result.stderr == "warning: left out 1 query judged only not relevant (nothing to score them on): 2\n"
    document = json.loads(result.stdout)
    assert (document["questions"], document["left_out"], document["file"]) == (1, ["2"], str(out))


def test_import_beir_refuses_to_overwrite_without_force(cli, beir_folder, tmp_path):
    out = tmp_path / "tiny.yaml"
    out.write_text("precious")

    refused = cli("import", "beir", str(beir_folder), "--identifier", "tiny.set", "--out", str(out))

    assert refused.exit_code == 2 and "already exists; pass --force" in refused.stderr
    assert out.read_text() == "precious"
    forced = cli("import", "beir", str(beir_folder), "--identifier", "tiny.set", "--out", str(out), "--force", "--name", "Tiny")
    assert forced.exit_code == 0 and load_question_set_file(out).name == "Tiny"


def test_import_beir_from_a_broken_folder_writes_nothing(cli, beir_folder, tmp_path):
    (beir_folder / "qrels" / "test.tsv").write_text("1\td1\n")
    out = tmp_path / "out" / "tiny.jsonl"

    result = cli("import", "beir", str(beir_folder), "--identifier", "tiny.set", "--out", str(out))

    assert result.exit_code == 2
    assert "test.tsv:1" in result.stderr and "expected query-id, corpus-id and score" in result.stderr
    assert not out.exists() and not out.parent.exists()


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--identifier", "Bad Name", "--out", "x.yaml"], "--identifier"),
        (["--identifier", "tiny.set", "--out", "x.csv"], "use one of .yaml, .yml, .json, .jsonl"),
        (["--identifier", "tiny.set", "--out", "x.yaml", "--split", "dev"], "no split 'dev'"),
    ],
)
def test_import_beir_bad_input_exits_2(cli, beir_folder, tmp_path, monkeypatch, arguments, message):
    monkeypatch.chdir(tmp_path)

    result = cli("import", "beir", str(beir_folder), *arguments)

    assert result.exit_code == 2 and message in result.stderr
    assert not list(tmp_path.glob("x.*"))


def test_import_beir_of_a_missing_split_lists_the_splits_there(cli, beir_folder, tmp_path):
    result = cli("import", "beir", str(beir_folder), "--split", "dev", "--identifier", "t.x", "--out", str(tmp_path / "x.yaml"))

    assert result.exit_code == 2 and result.stderr.count("\n") == 1
    assert "no split 'dev'" in result.stderr and result.stderr.endswith("splits here: test\n")


def test_import_beir_of_a_missing_folder_exits_2(cli, tmp_path):
    result = cli("import", "beir", str(tmp_path / "nowhere"), "--identifier", "tiny.set", "--out", str(tmp_path / "x.yaml"))

    assert result.exit_code == 2 and "does not exist" in result.stderr


def test_import_of_the_public_cranfield_collection_round_trips(cli, shared_data, tmp_path):
    out = tmp_path / "cranfield.jsonl"

    result = cli("import", "beir", str(shared_data / "cranfield"), "--identifier", "cranfield.test", "--out", str(out))

    assert result.exit_code == 0, result.stderr
    assert "Wrote 225 questions" in result.stdout
    assert load_question_set_file(out) == import_beir(shared_data / "cranfield", identifier="cranfield.test")


def test_list_shows_configured_judges_and_query_logs_but_never_their_secrets_or_queries(cli, project, monkeypatch):
    monkeypatch.setenv("POLISH_JUDGE_KEY", "sk-never-shown")
    (project.root / "asked.jsonl").write_text('{"query": "private question of alice"}\n', encoding="utf-8")
    project.config.write_text(
        project.config.read_text()
        + "judges:\n"
        + "  gpt:\n    kind: openai\n    url: https://user:pw-never-shown@llm.example.org:8443/v1/chat/completions?key=q-never-shown\n"
        + "    model: gpt-4o-mini\n    headers: {Authorization: {env: POLISH_JUDGE_KEY, prefix: 'Bearer '}}\n"
        + "  mine:\n    kind: callable\n    function: mypackage.judging:grade\n"
        + "query_logs:\n  asked: {path: asked.jsonl, examples: true}\n  raw: {path: raw.log}\n",
        encoding="utf-8",
    )

    listed = cli("list", "--config", str(project.config))
    document = json.loads(cli("list", "--config", str(project.config), "--json").stdout)

    assert listed.exit_code == 0, listed.stderr
    rows = {
        line.split("│")[1].strip(): [cell.strip() for cell in line.split("│")[2:-1]]
        for line in listed.stdout.splitlines()
        if "│" in line
    }
    assert rows["gpt"] == ["openai", "gpt-4o-mini", "llm.example.org:8443"] and rows["mine"] == ["callable", "—", "—"]
    assert rows["asked"][1:] == ["jsonl", "on"] and rows["raw"][1:] == ["unknown", "off"]
    assert document["judges"][0] == {
        "identifier": "gpt",
        "kind": "openai",
        "model": "gpt-4o-mini",
        "host": "llm.example.org:8443",
    }
    assert document["query_logs"][0] == {
        "identifier": "asked",
        "path": str(project.root / "asked.jsonl"),
        "format": "jsonl",
        "examples": True,
    }
    for shown in (listed.stdout + listed.stderr, json.dumps(document)):
        assert "never-shown" not in shown and "alice" not in shown


def test_list_without_judges_or_query_logs_has_no_such_sections(cli, project):
    listed = cli("list", "--config", str(project.config))
    document = json.loads(cli("list", "--config", str(project.config), "--json").stdout)

    assert "Judges" not in listed.stdout and "Query logs" not in listed.stdout
    assert "judges" not in document and "query_logs" not in document


def test_list_shows_a_sets_conversations_how_each_retriever_asks_turns_and_the_rewriters(cli, tmp_path):
    (tmp_path / "corpus.jsonl").write_text('{"_id": "d1", "title": "Wings", "text": "Swept wings at speed."}\n', encoding="utf-8")
    (tmp_path / "talks.yaml").write_text(
        "identifier: talks\nname: Talks\nconversations:\n  - id: wings\n    turns:\n"
        "      - {turn: 1, utterance: what do swept wings do?, form: match, expected_document_ids: [d1]}\n"
        "      - {turn: 2, utterance: and at speed?, form: gap, expected_document_ids: [d1]}\n",
        encoding="utf-8",
    )
    (tmp_path / "config.yaml").write_text(
        "store: results\nquestion_sets: [{file: talks.yaml}]\nretrievers:\n"
        "  asked: {kind: lexical, corpus: corpus.jsonl}\n"
        "  rewritten: {kind: lexical, corpus: corpus.jsonl, conversation: {rewriter: chat}}\n"
        "rewriters:\n  chat: {kind: openai, url: 'http://127.0.0.1:9/v1/chat/completions?key=k-123', model: small}\n",
        encoding="utf-8",
    )

    result = cli("list", "--config", str(tmp_path / "config.yaml"))
    document = json.loads(cli("list", "--config", str(tmp_path / "config.yaml"), "--json").stdout)

    assert result.exit_code == 0, result.stderr
    [set_row] = [line for line in result.stdout.splitlines() if "talks" in line]
    assert [cell.strip() for cell in set_row.split("│")[2:6]] == ["2", "1", "1", "1"]  # questions, match, gap, conversations
    assert any("rewritten" in line and "rewriter:chat" in line for line in result.stdout.splitlines())
    assert any("chat" in line and "openai" in line and "127.0.0.1:9" in line for line in result.stdout.splitlines())
    assert "k-123" not in result.stdout + json.dumps(document)
    assert document["question_sets"][0]["conversations"] == 1
    assert [r.get("query_mode") for r in document["retrievers"]] == [None, "rewriter:chat"]
    assert document["rewriters"] == [{"identifier": "chat", "kind": "openai", "model": "small", "host": "127.0.0.1:9"}]
