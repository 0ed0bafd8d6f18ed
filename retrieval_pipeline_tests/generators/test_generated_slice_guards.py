"""What keeps generated questions' runs and labels where they belong: no configured set may take the name
a set's generated slice is stored under, and `judge apply` refuses a generated candidate judged yes for a
document no corpus holds, as it refuses a pooled one; either way nothing is stored or written."""

from __future__ import annotations

import pytest
import yaml
from generation_project import EXTRACTIVE
from small_project import small_project

from retrieval_pipeline.core.services.labels.judging_files import read_judging_file, write_judging_file

pytestmark = pytest.mark.slow  # real BM25 for every command


def test_a_configured_set_named_as_another_sets_generated_slice_is_refused_naming_its_file_and_key(cli, tmp_path):
    config_path = small_project(tmp_path, EXTRACTIVE)
    question = {"id": "s1", "question": "what does a slipstream do?", "form": "match", "expected_document_ids": ["1"]}
    taken = {"identifier": "small.set.generated", "name": "f", "description": "a set of its own", "questions": [question]}
    (tmp_path / "taken.yaml").write_text(yaml.safe_dump(taken, sort_keys=False), encoding="utf-8")
    config = yaml.safe_load(config_path.read_text(encoding="utf-8"))
    config["question_sets"].append({"file": "taken.yaml"})
    config_path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")

    result = cli("run", "small.set", "bm25", "--config", str(config_path))

    assert result.exit_code == 2
    assert result.stderr.startswith(
        f"error: {tmp_path / 'taken.yaml'}: field 'identifier': 'small.set.generated' is the name set 'small.set' "
        f"({tmp_path / 'set.yaml'}) stores its generated questions under"
    )
    assert len(result.stderr.strip().splitlines()) == 1 and not (tmp_path / "store").exists()


def test_judge_apply_refuses_a_generated_candidate_judged_yes_for_a_document_no_corpus_holds(cli, tmp_path):
    config = small_project(tmp_path, EXTRACTIVE)
    out, set_file = tmp_path / "candidates.csv", tmp_path / "set.yaml"
    generate = ("--from", "corpus", "--count", "3", "--generator", "extractive", "--out", str(out), "--config", str(config))
    assert cli("generate", "small.set", *generate).exit_code == 0
    rows = read_judging_file(out)
    edited = rows[0]  # the first candidate's source document, edited to an id no corpus holds
    edited.update(document_id="999999", source_document_id="999999", judgement="yes")
    write_judging_file(rows, out)
    before = set_file.read_text(encoding="utf-8")

    result = cli("judge", "apply", str(out), str(set_file), "--config", str(config))

    assert result.exit_code == 2
    assert result.stderr.strip() == (
        f"error: {out}:2: field 'document_id': question '{edited['question_id']}': document '999999' is in no corpus of bm25"
    )
    assert set_file.read_text(encoding="utf-8") == before
