"""Generated questions kept apart until checked, end to end on real BM25 over the demo's Cranfield corpus:
`judge apply` adds the confirmed candidates marked generated, a run's figures and verdict stay the human
questions' (the generated slice stored as a run of its own), `validate-generated` compares the three BM25
retrievers' rankings on the two, and `--accept` records when the generated questions count."""

from __future__ import annotations

import json

import pytest
import yaml
from generated_apart_project import RETRIEVERS, apart_project, judged_candidates, run_all
from generation_project import by_question

from retrieval_pipeline.core.golden.question_files import load_question_set_file
from retrieval_pipeline.core.services.labels.judging_files import read_judging_file
from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore

pytestmark = pytest.mark.slow  # real BM25 over the demo's corpus for every command


def test_judge_apply_adds_the_candidates_whose_source_a_person_confirmed_marked_generated(cli, tmp_path):
    config = apart_project(tmp_path)
    judged = judged_candidates(cli, config)
    candidates = by_question(read_judging_file(judged))

    result = cli("judge", "apply", str(judged), str(tmp_path / "set.yaml"), "--config", str(config))

    assert result.exit_code == 0, result.stderr
    added = [q for q in load_question_set_file(tmp_path / "set.yaml").questions if q.generated is not None]
    assert len(added) == len(candidates) - 2
    for question in added:
        source = candidates[question.id][0]
        assert question.expected_document_ids == (source["source_document_id"],)
        assert question.generated.generated_by == source["generated_by"] and question.generated.source == "document"
        assert question.question == source["question"] and question.form.value == source["form"]
    assert "Not added: 1 generated candidate(s) whose source document was judged no; 1 whose" in result.stdout


def test_a_machine_judges_yes_confirms_a_candidate_only_behind_its_gate_and_into_the_machine_lists(cli, tmp_path):
    config = apart_project(tmp_path)
    judged = judged_candidates(cli, config)
    rows = read_judging_file(judged)
    for row in rows:
        source = row["document_id"] == row["source_document_id"]
        row.update(machine_judgement="yes" if source else "no", machine_grade="", judged_by="llm@abc")
    judged.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    apply = ("judge", "apply", str(judged), str(tmp_path / "set.yaml"), "--config", str(config), "--machine")

    gated = cli(*apply)
    forced = cli(*apply, "--force")

    assert gated.exit_code == 2 and "not calibrated well enough" in gated.stderr
    assert forced.exit_code == 0, forced.stderr
    grown = load_question_set_file(tmp_path / "set.yaml")
    by_machine = [q for q in grown.questions if q.generated is not None and not q.expected_document_ids]
    assert len(by_machine) == 1  # the source nobody judged; the one judged no stays out
    assert by_machine[0].machine_expected_document_ids == (by_machine[0].generated.document_id,)
    assert grown.machine_judged_by == "llm@abc" and grown.machine_calibration.forced


def test_a_run_keeps_the_human_questions_figures_and_reports_the_generated_slice_apart(cli, tmp_path):
    config = apart_project(tmp_path)
    human_only = tmp_path / "human.yaml"
    human_only.write_text((tmp_path / "set.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    cli("judge", "apply", str(judged_candidates(cli, config)), str(tmp_path / "set.yaml"), "--config", str(config))
    generated = sum(q.generated is not None for q in load_question_set_file(tmp_path / "set.yaml").questions)

    with_generated = cli("run", "demo.cranfield", "bm25_stemmed", "--config", str(config), "--json")
    shown = cli("run", "demo.cranfield", "bm25_stemmed", "--config", str(config)).stdout
    (tmp_path / "set.yaml").write_text(human_only.read_text(encoding="utf-8"), encoding="utf-8")
    alone = cli("run", "demo.cranfield", "bm25_stemmed", "--config", str(config), "--json", "--store", str(tmp_path / "alone"))

    apart, human = json.loads(with_generated.stdout), json.loads(alone.stdout)
    figures = ("question_count", "hit_rates", "metrics", "by_form", "set_fingerprint")
    assert {name: apart[name] for name in figures} == {name: human[name] for name in figures}
    note = f"{generated} generated question(s) kept apart (not counted): see demo.cranfield.generated."
    assert apart["regression"]["summary"].endswith(note) and note not in human["regression"]["summary"]
    store = ResultStore(str(tmp_path / "store"))
    stored = store.history(HistoryKey("demo.cranfield.generated", "bm25_stemmed"))[-1]  # the first of the two
    assert store.load(stored).question_count == generated and "generated" not in human
    assert (apart["generated"]["run_id"], apart["generated"]["question_count"]) == (stored.run_id, generated)
    assert apart["generated"]["counted"] is False
    assert f"Generated questions, demo.cranfield.generated ({generated} questions, not counted in the verdict above)" in shown


def test_validation_compares_the_three_bm25_retrievers_rankings_and_accepts_only_above_the_threshold(cli, tmp_path):
    config = apart_project(tmp_path)
    cli("judge", "apply", str(judged_candidates(cli, config)), str(tmp_path / "set.yaml"), "--config", str(config))
    run_all(cli, config)

    shown = cli("validate-generated", "demo.cranfield", "--config", str(config), "--json")

    assert shown.exit_code == 0, shown.stderr
    validation = json.loads(shown.stdout)
    assert [m["measure"] for m in validation["measures"]] == ["top1", "top3", "ndcg@10"]
    for measure in validation["measures"]:
        low, high = measure["interval"]
        assert -1 <= low <= high <= 1 and set(measure["difference"]) == set(RETRIEVERS)
        for name in RETRIEVERS:
            assert measure["difference"][name] == pytest.approx(measure["generated"][name] - measure["human"][name])
    lowest = min(m["interval"][0] for m in validation["measures"])
    assert lowest < 1  # 10 generated questions cannot rank three retrievers alike in every resample
    assert validation["reached"] is (lowest >= 0.8) and validation["recorded"] is None
    set_file = tmp_path / "set.yaml"
    before = set_file.read_text(encoding="utf-8")

    over = _with_threshold(config, lowest)  # the lowest bound reaches a threshold set at it...
    accepted = cli("validate-generated", "demo.cranfield", "--config", str(over), "--accept")
    recorded = load_question_set_file(set_file).generated_questions
    set_file.write_text(before, encoding="utf-8")
    under = _with_threshold(config, lowest + 0.01)  # ...and not one above it
    refused = cli("validate-generated", "demo.cranfield", "--config", str(under), "--accept")

    assert accepted.exit_code == 0, accepted.stderr
    assert recorded.because == "validated" and recorded.tau_low == pytest.approx(
        {m["measure"]: m["interval"][0] for m in validation["measures"]}
    )
    assert refused.exit_code == 1 and "not accepted: the tau interval of" in refused.stderr
    assert set_file.read_text(encoding="utf-8") == before
    printed = cli("validate-generated", "demo.cranfield", "--config", str(under)).stdout
    for measure in validation["measures"]:  # which bound gates is said, never "tau +1.00 [+0.00, +1.00] below"
        low = measure["interval"][0]
        verdict = "reaches" if low >= lowest + 0.01 else "is below"
        assert f"the interval's lower bound {low:+.2f} {verdict} {lowest + 0.01:g}" in printed


def test_a_person_may_count_the_generated_questions_below_the_threshold_and_then_runs_count_them(cli, tmp_path):
    config = apart_project(tmp_path)
    cli("judge", "apply", str(judged_candidates(cli, config)), str(tmp_path / "set.yaml"), "--config", str(config))
    run_all(cli, config)
    strict = _with_threshold(config, 1.0)

    accepted = cli("validate-generated", "demo.cranfield", "--config", str(strict), "--accept", "--by", "Ada")
    counted = cli("run", "demo.cranfield", "bm25_stemmed", "--config", str(config), "--json")

    assert accepted.exit_code == 0, accepted.stderr
    recorded = load_question_set_file(tmp_path / "set.yaml").generated_questions
    assert (recorded.because, recorded.by, recorded.threshold) == ("person", "Ada", 1.0)
    run = json.loads(counted.stdout)
    questions = load_question_set_file(tmp_path / "set.yaml").questions
    assert run["question_count"] == len(questions)
    assert "generated question(s) counted (accepted by Ada:" in run["regression"]["summary"]


def test_generated_questions_added_after_the_set_counts_them_are_kept_apart_again_until_checked(cli, tmp_path):
    config = apart_project(tmp_path)
    first = judged_candidates(cli, config)
    cli("judge", "apply", str(first), str(tmp_path / "set.yaml"), "--config", str(config))
    run_all(cli, config)
    cli("validate-generated", "demo.cranfield", "--config", str(_with_threshold(config, 1.0)), "--accept", "--by", "Ada")
    first = first.rename(tmp_path / "first-candidates.jsonl")
    more = judged_candidates(cli, config, count=6)

    added = cli("judge", "apply", str(more), str(tmp_path / "set.yaml"), "--config", str(config))
    run = cli("run", "demo.cranfield", "bm25_stemmed", "--config", str(config), "--json")

    assert first.exists() and added.exit_code == 0, added.stderr
    assert "demo.cranfield counted its generated questions; the ones added now were not measured" in added.stdout
    grown = load_question_set_file(tmp_path / "set.yaml")
    assert grown.generated_questions is None
    human = [question for question in grown.questions if question.generated is None]
    summary = json.loads(run.stdout)
    assert summary["question_count"] == len(human)
    assert "generated question(s) kept apart (not counted)" in summary["regression"]["summary"]


@pytest.mark.parametrize(
    ("prepare", "message"),
    [
        ("nothing generated", "has no generated questions"),
        ("one retriever", "needs the latest complete runs of at least two retrievers"),
        ("no human questions", "has no human questions to validate its generated ones against"),
    ],
)
def test_a_set_validation_cannot_measure_is_one_error_line_and_exit_2(cli, tmp_path, prepare, message):
    config = apart_project(tmp_path)
    if prepare != "nothing generated":
        cli("judge", "apply", str(judged_candidates(cli, config)), str(tmp_path / "set.yaml"), "--config", str(config))
    if prepare == "one retriever":
        run_all(cli, config, RETRIEVERS[:1])
    if prepare == "no human questions":
        document = yaml.safe_load((tmp_path / "set.yaml").read_text(encoding="utf-8"))
        document["questions"] = [q for q in document["questions"] if "generated" in q]
        (tmp_path / "set.yaml").write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")

    result = cli("validate-generated", "demo.cranfield", "--config", str(config))

    assert result.exit_code == 2 and message in result.stderr
    assert result.stderr.startswith("error:") and len(result.stderr.strip().splitlines()) == 1


def test_by_without_accept_is_refused(cli, tmp_path):
    result = cli("validate-generated", "demo.cranfield", "--by", "Ada", "--config", str(apart_project(tmp_path)))

    assert result.exit_code == 2 and "--by names who decides" in result.stderr


@pytest.mark.parametrize("name", ["", "  "], ids=["empty", "blank"])
def test_accept_by_an_empty_name_is_one_error_line_and_exit_2_with_the_set_file_unchanged(cli, tmp_path, name):
    config = apart_project(tmp_path)
    before = (tmp_path / "set.yaml").read_bytes()

    result = cli("validate-generated", "demo.cranfield", "--accept", "--by", name, "--config", str(config))

    assert result.exit_code == 2 and "--by names who decides to count the generated questions: give a name" in result.stderr
    assert result.stderr.startswith("error:") and len(result.stderr.strip().splitlines()) == 1
    assert (tmp_path / "set.yaml").read_bytes() == before


def _with_threshold(config, min_tau: float):
    data = yaml.safe_load(config.read_text(encoding="utf-8"))
    data["generation"] = {"min_tau": min_tau}
    path = config.parent / f"config-{min_tau:.4f}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path
