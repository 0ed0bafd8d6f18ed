"""Golden conversations in set files: read as turns, refused in one line naming the turn, written back as
read, relabelled in place."""

from __future__ import annotations

import copy
import difflib
import hashlib
import json

import pytest
import yaml

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.golden.conversations import ConversationTurn
from retrieval_pipeline.core.golden.fingerprints import question_fingerprint
from retrieval_pipeline.core.golden.question_file_writer import dump_question_set, write_question_set_file
from retrieval_pipeline.core.golden.question_files import load_question_set_file
from retrieval_pipeline.core.golden.questions import GoldenQuestion, GoldenQuestionSet
from retrieval_pipeline.core.golden.set_file_additions import add_questions_to_set_file
from retrieval_pipeline.core.golden.set_file_edits import relabel_set_file

WINGS = {
    "id": "wings",
    "turns": [
        {
            "turn": 1,
            "utterance": "what is the effect of wing sweep on lift?",
            "reply": "Sweep lowers the lift slope.",
            "form": "match",
            "expected_document_ids": ["12", "51"],
        },
        {
            "turn": 2,
            "utterance": "and at supersonic speeds?",
            "rewrite": "what is the effect of wing sweep on lift at supersonic speeds?",
            "form": "gap",
            "hard_class": "normal",
            "nothing_to_retrieve": True,
            "rejected_document_ids": ["7"],
        },
    ],
}
SET = {
    "identifier": "demo.conversations",
    "name": "Conversations",
    "questions": [{"id": "q1", "question": "what is lift?", "form": "match", "expected_document_ids": ["1"]}],
    "conversations": [
        WINGS,
        {
            "id": "heat",
            "turns": [{"turn": 1, "utterance": "heat transfer at the nose", "form": "match", "expected_document_ids": ["3"]}],
        },
    ],
}
FORMATS = [".yaml", ".json", ".jsonl"]


def write_set(folder, data, suffix, name="set"):
    """As a person writes it: YAML and JSON in sections, JSONL with a line per question or turn."""
    path = folder / f"{name}{suffix}"
    if suffix == ".yaml":
        path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    elif suffix == ".json":
        path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    else:
        header = {key: value for key, value in data.items() if key not in ("questions", "conversations")}
        turns = [{"conversation": c["id"], **turn} for c in data.get("conversations", []) for turn in c["turns"]]
        lines = [header, *data.get("questions", []), *turns]
        path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.mark.parametrize("suffix", FORMATS)
def test_each_turn_is_a_question_of_the_set_with_its_place_and_texts(tmp_path, suffix):
    loaded = load_question_set_file(write_set(tmp_path, SET, suffix))

    assert [q.id for q in loaded.questions] == ["q1", "wings/1", "wings/2", "heat/1"]
    second = loaded.question("wings/2")
    assert second.question == "and at supersonic speeds?"
    assert second.turn == ConversationTurn(
        conversation="wings", number=2, rewrite="what is the effect of wing sweep on lift at supersonic speeds?"
    )
    assert (second.expected_document_ids, second.rejected_document_ids, second.hard_class) == ((), ("7",), "normal")
    assert loaded.question("wings/1").turn.reply == "Sweep lowers the lift slope."
    assert [q.id for q in loaded.history(second)] == ["wings/1"]
    assert list(loaded.conversations) == ["wings", "heat"] and loaded.question("q1").turn is None


def test_yaml_json_and_jsonl_read_the_identical_set_and_jsonl_turn_lines_may_come_in_any_place(tmp_path):
    loaded = [load_question_set_file(write_set(tmp_path, SET, suffix)) for suffix in FORMATS]
    assert loaded[1] == loaded[0] and loaded[2] == loaded[0]
    path = write_set(tmp_path, SET, ".jsonl", name="shuffled")
    header, question, wings_1, wings_2, heat_1 = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join([header, wings_1, heat_1, question, wings_2]) + "\n", encoding="utf-8")
    assert load_question_set_file(path) == loaded[0]


def test_a_set_of_conversations_alone_needs_no_questions_section(tmp_path):
    data = {key: value for key, value in SET.items() if key != "questions"}
    for suffix in FORMATS:
        loaded = load_question_set_file(write_set(tmp_path, data, suffix))
        assert [q.id for q in loaded.questions] == ["wings/1", "wings/2", "heat/1"]


def turn_edit(index, change):
    def mutate(data):
        change(data["conversations"][0]["turns"][index])

    return mutate


def conversation_edit(change):
    return lambda data: change(data["conversations"][0])


# (case, mutation, the turn named (key), the field named, text the message holds)
TURN_ERRORS = [
    (
        "out-of-order",
        turn_edit(1, lambda t: t.update(turn=3)),
        "conversation 'wings' turn 3",
        "turn",
        "turn 3 comes after turn 1",
    ),
    ("duplicate-turn", turn_edit(1, lambda t: t.update(turn=1)), "conversation 'wings' turn 1", "turn", "turn 1 is a duplicate"),
    ("not-first", turn_edit(0, lambda t: t.update(turn=2)), "conversation 'wings' turn 2", "turn", "turn 2 comes first"),
    ("no-number", turn_edit(1, lambda t: t.pop("turn")), "conversation 'wings' turn #2", "turn", "is required"),
    (
        "number-as-text",
        turn_edit(1, lambda t: t.update(turn="2")),
        "conversation 'wings' turn #2",
        "turn",
        "'2' is not a turn number",
    ),
    (
        "rewrite-without-utterance",
        turn_edit(1, lambda t: t.pop("utterance")),
        "conversation 'wings' turn 2",
        "utterance",
        "a rewrite without an utterance",
    ),
    ("no-utterance", turn_edit(0, lambda t: t.pop("utterance")), "conversation 'wings' turn 1", "utterance", "is required"),
    ("blank-utterance", turn_edit(0, lambda t: t.update(utterance="  ")), "conversation 'wings' turn 1", "utterance", "blank"),
    ("empty-rewrite", turn_edit(1, lambda t: t.update(rewrite="")), "conversation 'wings' turn 2", "rewrite", "at least 1"),
    (
        "no-expected-ids",
        turn_edit(1, lambda t: t.pop("nothing_to_retrieve")),
        "conversation 'wings' turn 2",
        "expected_document_ids",
        "or say `nothing_to_retrieve: true`",
    ),
    (
        "empty-expected-ids",
        turn_edit(0, lambda t: t.update(expected_document_ids=[])),
        "conversation 'wings' turn 1",
        "expected_document_ids",
        "lists no document",
    ),
    (
        "nothing-yet-expected-ids",
        turn_edit(0, lambda t: t.update(nothing_to_retrieve=True)),
        "conversation 'wings' turn 1",
        "nothing_to_retrieve",
        "yet the turn lists expected document ids",
    ),
    (
        "nothing-not-a-flag",
        turn_edit(1, lambda t: t.update(nothing_to_retrieve="yes please")),
        "conversation 'wings' turn 2",
        "nothing_to_retrieve",
        "is not true or false",
    ),
    (
        "unknown-field",
        turn_edit(1, lambda t: t.update(rewrtie="x")),
        "conversation 'wings' turn 2",
        "rewrtie",
        "did you mean 'rewrite'?",
    ),
    (
        "unknown-form",
        turn_edit(1, lambda t: t.update(form="fuzzy")),
        "conversation 'wings' turn 2",
        "form",
        "'fuzzy' is not a known form",
    ),
    (
        "rejected-also-expected",
        turn_edit(0, lambda t: t.update(rejected_document_ids=["12"])),
        "conversation 'wings' turn 1",
        "rejected_document_ids",
        "also an expected document id",
    ),
    ("slash-in-id", conversation_edit(lambda c: c.update(id="wings/a")), "conversation 'wings/a'", "id", "without '/'"),
    (
        "no-turns",
        conversation_edit(lambda c: c.update(turns=[])),
        "conversation 'wings'",
        "turns",
        "must list the conversation's turns",
    ),
    ("unknown-key", conversation_edit(lambda c: c.update(turn=[])), "conversation 'wings'", "turn", "did you mean 'turns'?"),
    ("duplicate-id", lambda data: data["conversations"][1].update(id="wings"), "conversation 'wings'", "id", "is a duplicate"),
]
JSONL_CANNOT = {"no-turns", "unknown-key", "duplicate-id"}  # a JSONL conversation is its turn lines, nothing apart from them
CASES = [(suffix, *case) for suffix in FORMATS for case in TURN_ERRORS if suffix != ".jsonl" or case[0] not in JSONL_CANNOT]


@pytest.mark.parametrize(("suffix", "case", "mutate", "key", "field", "problem"), CASES, ids=[f"{c[1]}{c[0]}" for c in CASES])
def test_a_bad_turn_is_refused_in_one_line_naming_the_file_conversation_turn_and_field(
    tmp_path, suffix, case, mutate, key, field, problem
):
    data = copy.deepcopy(SET)
    mutate(data)
    path = write_set(tmp_path, data, suffix)

    with pytest.raises(InvalidInputError) as caught:
        load_question_set_file(path)

    assert (caught.value.source, caught.value.key, caught.value.field) == (str(path), key, field)
    assert problem in caught.value.problem and "\n" not in str(caught.value)


def test_a_turn_written_among_the_questions_is_refused_pointing_to_the_conversations(tmp_path):
    data = copy.deepcopy(SET)
    data["questions"].append(
        {
            "id": "wings/3",
            "question": "and below?",
            "form": "gap",
            "expected_document_ids": ["4"],
            "turn": {"conversation": "wings", "number": 3},
        }
    )
    with pytest.raises(InvalidInputError) as caught:
        load_question_set_file(write_set(tmp_path, data, ".yaml"))
    assert (caught.value.key, caught.value.field) == ("question 'wings/3'", "turn")
    assert "written under `conversations:`" in str(caught.value)


def test_a_jsonl_turn_line_naming_no_conversation_id_is_refused_naming_the_line(tmp_path):
    path = write_set(tmp_path, SET, ".jsonl")
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[3] = lines[3].replace('"conversation": "wings"', '"conversation": ["wings"]')
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InvalidInputError) as caught:
        load_question_set_file(path)
    assert (caught.value.source, caught.value.field) == (f"{path}:4", "conversation")


@pytest.mark.parametrize("suffix", FORMATS)
def test_a_set_with_turns_reads_back_as_written_with_nothing_to_retrieve_said_explicitly(tmp_path, suffix):
    golden = load_question_set_file(write_set(tmp_path, SET, ".yaml", name="source"))

    path = write_question_set_file(golden, tmp_path / f"written{suffix}")

    assert load_question_set_file(path) == golden
    text = path.read_text(encoding="utf-8")
    assert text.count('"nothing_to_retrieve": true' if suffix != ".yaml" else "nothing_to_retrieve: true") == 1
    if suffix == ".yaml":
        assert yaml.safe_load(text)["conversations"] == SET["conversations"]
        assert list(yaml.safe_load(text)) == ["identifier", "name", "description", "questions", "conversations"]


def test_a_set_of_conversations_alone_is_written_without_a_questions_section(tmp_path):
    data = {key: value for key, value in SET.items() if key != "questions"}
    golden = load_question_set_file(write_set(tmp_path, data, ".yaml"))
    assert "questions" not in yaml.safe_load(dump_question_set(golden, ".yaml"))
    assert [json.loads(line).get("conversation") for line in dump_question_set(golden, ".jsonl").splitlines()] == [
        None,
        "wings",
        "wings",
        "heat",
    ]


def test_a_turns_fingerprint_covers_the_turns_before_it_its_reply_and_rewrite_and_a_single_question_keeps_its_own():
    def fingerprints(**edits) -> dict[str, str]:
        turns = {
            "wings/1": ("what is the lift of a swept wing?", None, None),
            "wings/2": ("and at supersonic speeds?", None, "x"),
        }
        turns |= edits
        golden = GoldenQuestionSet(
            identifier="talks",
            name="talks",
            questions=(
                GoldenQuestion(id="alone", question="and at supersonic speeds?", form="gap", expected_document_ids=("a",)),
                *(
                    GoldenQuestion(
                        id=turn_id,
                        question=text,
                        form="gap",
                        expected_document_ids=("a",),
                        turn=ConversationTurn(conversation="wings", number=int(turn_id[-1]), reply=reply, rewrite=rewrite),
                    )
                    for turn_id, (text, reply, rewrite) in turns.items()
                ),
            ),
        )
        return {
            q.id: question_fingerprint(q.question, q.expected_document_ids, "gap", None, context=golden.turn_context(q))
            for q in golden.questions
        }

    before = fingerprints()
    assert before["alone"] == question_fingerprint("and at supersonic speeds?", ["a"], "gap", None)
    assert before["wings/2"] != before["alone"]
    for edit in (
        {"wings/1": ("what is the drag of a swept wing?", None, None)},
        {"wings/1": ("what is the lift of a swept wing?", "Sweep lowers it.", None)},
        {"wings/2": ("and at supersonic speeds?", None, "sweep at supersonic speeds")},
        {"wings/2": ("and at supersonic speeds?", "It drops.", "x")},
    ):
        assert fingerprints(**edit)["wings/2"] != before["wings/2"], edit
    assert fingerprints(**{"wings/2": ("and at supersonic speeds?", "It drops.", "x")})["wings/1"] == before["wings/1"]
    context = json.dumps([["what is the lift of a swept wing?", None], [None, "x"]], separators=(",", ":"))
    labels = {
        "context": hashlib.sha256(context.encode()).hexdigest()[:16],
        "question": "and at supersonic speeds?",
        "expected_document_ids": ["a"],
        "form": "gap",
    }
    canonical = json.dumps(labels | {"hard_class": None}, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    assert before["wings/2"] == hashlib.sha256(canonical.encode()).hexdigest()[:16]


TALKS = """\
# Conversations, labelled by hand.
identifier: demo.talks
name: Talks
conversations:
  - id: wings
    turns:
      - turn: 1
        utterance: what is the effect of wing sweep on lift?  # as typed
        form: match
        expected_document_ids: ["12"]
      - turn: 2
        utterance: and at supersonic speeds?
        rewrite: what is the effect of wing sweep on lift at supersonic speeds?
        form: gap
        nothing_to_retrieve: true  # nobody found one yet
      - {turn: 3, utterance: "and below?", form: gap, nothing_to_retrieve: true}
  - id: heat
    turns:
      - turn: 1
        utterance: heat transfer at the nose
        form: match
        expected_document_ids:
          - "3"
"""


def diff_lines(before: str, after: str) -> list[str]:
    diff = difflib.unified_diff(before.splitlines(), after.splitlines(), n=0, lineterm="")
    return [line for line in diff if line[:1] in "+-" and not line.startswith(("+++", "---"))]


def test_relabelling_turns_in_yaml_changes_their_id_lines_and_nothing_else(tmp_path):
    path = tmp_path / "talks.yaml"
    path.write_text(TALKS, encoding="utf-8")
    labels = {
        "wings/1": (("12", "51"), ("9",)),
        "wings/2": (("40",), ("41",)),  # its first expected ids, in the place of `nothing_to_retrieve: true`
        "wings/3": ((), ("8",)),  # still nothing to retrieve, one document judged no
        "heat/1": (("3", "4"), ()),
    }

    relabel_set_file(path, labels)

    after = path.read_text(encoding="utf-8")
    assert diff_lines(TALKS, after) == [
        '-        expected_document_ids: ["12"]',
        '+        expected_document_ids: ["12", "51"]',
        '+        rejected_document_ids: ["9"]',
        "-        nothing_to_retrieve: true  # nobody found one yet",
        '-      - {turn: 3, utterance: "and below?", form: gap, nothing_to_retrieve: true}',
        '+        expected_document_ids: ["40"]  # nobody found one yet',
        '+        rejected_document_ids: ["41"]',
        '+      - {turn: 3, utterance: "and below?", form: gap, nothing_to_retrieve: true, rejected_document_ids: ["8"]}',
        '+          - "4"',
    ]
    relabelled = load_question_set_file(path)
    assert {q.id: (q.expected_document_ids, q.rejected_document_ids) for q in relabelled.questions} == labels
    assert relabelled.question("wings/2").turn.rewrite == "what is the effect of wing sweep on lift at supersonic speeds?"


@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
def test_relabelling_turns_in_json_and_jsonl_keeps_each_turns_keys_in_place(tmp_path, suffix):
    golden = load_question_set_file(write_set(tmp_path, SET, ".yaml", name="source"))
    path = write_question_set_file(golden, tmp_path / f"set{suffix}")
    before = path.read_text(encoding="utf-8").splitlines()

    relabel_set_file(path, {"wings/2": (("40",), ("7",))}, {"heat/1": (("5",), ())}, {"machine_judged_by": "judge@1"})

    relabelled = load_question_set_file(path)
    assert relabelled.question("wings/2").expected_document_ids == ("40",)
    assert relabelled.question("heat/1").machine_expected_document_ids == ("5",)
    written = dump_question_set(relabelled, suffix)
    if suffix == ".jsonl":  # the header and the two changed turns' lines, no other, each as the writer has it
        assert path.read_text(encoding="utf-8") == written
        assert [i for i, (a, b) in enumerate(zip(before, written.splitlines())) if a != b] == [0, 3, 4]
    else:
        turns = [list(turn.items()) for c in json.loads(path.read_text(encoding="utf-8"))["conversations"] for turn in c["turns"]]
        assert turns == [list(turn.items()) for c in json.loads(written)["conversations"] for turn in c["turns"]]


def test_a_new_question_is_added_to_a_set_of_conversations_alone_and_a_turn_is_left_to_a_person(tmp_path):
    path = tmp_path / "talks.yaml"
    path.write_text(TALKS, encoding="utf-8")
    new = GoldenQuestion(id="q9", question="what is a shock wave?", form="gap", expected_document_ids=("77",))

    add_questions_to_set_file(path, [new])

    assert path.read_text(encoding="utf-8").startswith(TALKS)
    grown = load_question_set_file(path)
    assert [q.id for q in grown.questions] == ["q9", "wings/1", "wings/2", "wings/3", "heat/1"]
    turn = new.model_copy(update={"id": "heat/2", "turn": ConversationTurn(conversation="heat", number=2)})
    with pytest.raises(InvalidInputError, match="'heat/2' is a turn: add it to its conversation by hand"):
        add_questions_to_set_file(path, [turn])


def test_a_machine_judges_labels_on_turns_and_its_name_are_written_into_a_set_of_conversations_alone(tmp_path):
    path = tmp_path / "talks.yaml"
    path.write_text(TALKS, encoding="utf-8")

    relabel_set_file(path, {}, {"wings/2": (("40",), ()), "heat/1": ((), ("6",))}, {"machine_judged_by": "judge@f1"})

    assert diff_lines(TALKS, path.read_text(encoding="utf-8")) == [
        '+machine_judged_by: "judge@f1"',
        '+        machine_expected_document_ids: ["40"]',
        '+        machine_rejected_document_ids: ["6"]',
    ]
    relabelled = load_question_set_file(path)
    assert relabelled.machine_judged_by == "judge@f1" and relabelled.question("wings/2").expected_document_ids == ()
    assert relabelled.question("wings/2").machine_expected_document_ids == ("40",)
