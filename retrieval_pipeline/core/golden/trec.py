"""Import TREC judgements (a qrels file and a topics file) as a golden set.

TREC collections come as `qid iteration docid relevance` qrels plus topics: in the classic SGML-like
form (`<top> <num> Number: 301 <title> ... <desc> Description: ... </top>`), in the XML of the Web
tracks (`<topic number="1"><query>...</query><description>...</description></topic>`) or, as many
newer collections ship them, as `qid<TAB>text` lines. The documents are read from a BEIR-style
`corpus.jsonl`, because the forms (`match`/`gap`) are tagged by the documented vocabulary-overlap rule
(`core.forms`) against the judged documents' texts, exactly as the BEIR importer tags them; without
the documents a form would be a guess, so the corpus is required.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path

from retrieval_pipeline.core.base.errors import InvalidInputError, quoted
from retrieval_pipeline.core.base.text_files import read_text
from retrieval_pipeline.core.golden.beir import ImportedSet, Judgements, judged_documents, question_set_from_judgements
from retrieval_pipeline.core.golden.questions import GoldenQuestionSet

TOPIC_FIELDS = ("title", "description")
_TAG = re.compile(r"<(/?)([a-zA-Z]+)>")
_TOPIC = re.compile(r"<top>(.*?)(?:</top>|(?=<top>)|\Z)", re.DOTALL | re.IGNORECASE)
# the labels older topic sets put after the tag; `Topic:` is TREC 1-3's title label
_LABELS = {"num": "number:", "title": "topic:", "desc": "description:"}


def read_trec_qrels(path: str | Path) -> Mapping[str, list[str]]:
    """Relevant document ids per query, queries and documents in order of first appearance.

    Relevance > 0 counts as relevant; 0 and the negative grades some tracks use (spam, junk) do not.
    A query judged only non-relevant is left out, as BEIR's importer leaves it out: it asks nothing
    the set could score.
    """
    return read_judged_trec_qrels(path).relevant


def read_judged_trec_qrels(path: str | Path, min_relevance: float | None = None) -> Judgements:
    """Relevant and rejected document ids per query, as `read_trec_qrels` orders them (see `judged_documents`)."""
    path = Path(path)
    return judged_documents(_trec_judgements(read_text(path), path), min_relevance)


def _trec_judgements(text: str, path: Path) -> Iterator[tuple[str, str, str, str]]:
    for number, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 4:
            raise InvalidInputError("expected query-id, iteration, document-id and relevance", source=f"{path}:{number}")
        query_id, _, document_id, relevance = fields
        yield f"{path}:{number}", query_id, document_id, relevance


def read_trec_topics(path: str | Path, field: str = "title") -> dict[str, str]:
    """Question text per topic id, in file order.

    A file whose first non-blank line starts with `<top>` is read as SGML topics, one starting with
    any other tag (`<?xml`, `<webtrack2009>`, `<topics>`) as XML topics, and `field` picks the title
    (short, keyword-like, the usual ad-hoc query; XML's `<query>`) or the description (a full
    sentence); any other file is read as `qid<TAB>text` lines, where `field` does not apply. A topic
    without an id or without the chosen text is an error naming the file and line (the topic's
    position for XML): a blank question cannot be scored.
    """
    if field not in TOPIC_FIELDS:
        raise InvalidInputError(f"unknown topic field {quoted(field)}; use one of {', '.join(TOPIC_FIELDS)}")
    path = Path(path)
    text = read_text(path)
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    if first.lower().startswith("<top>"):
        entries = _sgml_topics(text, path, field)
    elif first.startswith("<"):
        entries = _xml_topics(text, path, field)
    else:
        entries = _tsv_topics(text, path)
    topics: dict[str, str] = {}
    for where, topic_id, question in entries:
        if topic_id in topics:
            raise InvalidInputError(f"topic {quoted(topic_id)} appears twice", source=where)
        topics[topic_id] = question
    return topics


def _tsv_topics(text: str, path: Path):
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        topic_id, tab, question = line.partition("\t")
        if not tab or not topic_id.strip() or not question.strip():
            raise InvalidInputError("expected query-id<TAB>text", source=f"{path}:{number}")
        yield f"{path}:{number}", topic_id.strip(), question.strip()


def _sgml_topics(text: str, path: Path, field: str):
    tag = "desc" if field == "description" else "title"
    for match in _TOPIC.finditer(text):
        number = text.count("\n", 0, match.start()) + 1
        values = _tag_values(match.group(1))
        topic_id = values.get("num", "")
        if not topic_id:
            raise InvalidInputError("topic without a <num>", source=f"{path}:{number}")
        question = values.get(tag, "")
        if not question:
            raise InvalidInputError(f"topic {quoted(topic_id)} has no <{tag}> text", source=f"{path}:{number}", field=field)
        yield f"{path}:{number}", topic_id, question


def _xml_topics(text: str, path: Path, field: str):
    """`number` is an attribute and the title is called `query`; subtopics are not questions of their own."""
    from xml.etree import ElementTree

    try:
        root = ElementTree.fromstring(text)
    except ElementTree.ParseError as error:
        raise InvalidInputError(f"not well-formed XML ({error})", source=f"{path}:{error.position[0]}") from None
    tags = ("description", "desc") if field == "description" else ("query", "title")
    for position, topic in enumerate(root.iter("topic"), start=1):
        where = f"{path} (topic #{position})"
        topic_id = (topic.get("number") or topic.findtext("number") or "").strip()
        if not topic_id:
            raise InvalidInputError('topic without a number="..." attribute', source=where)
        question = next((" ".join(value.split()) for tag in tags if (value := topic.findtext(tag))), "")
        if not question:
            raise InvalidInputError(f"topic {quoted(topic_id)} has no <{tags[0]}> text", source=where, field=field)
        yield where, topic_id, question


def _tag_values(block: str) -> dict[str, str]:
    """The text after each opening tag up to the next tag, labels dropped and whitespace collapsed.

    The classic topics never close their fields, some later ones do; closing tags only end a field.
    """
    values: dict[str, str] = {}
    tags = list(_TAG.finditer(block))
    for index, tag in enumerate(tags):
        if tag.group(1):
            continue
        name = tag.group(2).lower()
        end = tags[index + 1].start() if index + 1 < len(tags) else len(block)
        value = " ".join(block[tag.end() : end].split())
        label = _LABELS.get(name)
        if label and value.lower().startswith(label):
            value = value[len(label) :].strip()
        values.setdefault(name, value)
    return values


def _canonical(query_id: str) -> str:
    """TREC 1-3 topics number `051` where their qrels say `51`; numeric ids match by value."""
    return str(int(query_id)) if query_id.isascii() and query_id.isdigit() else query_id


def import_trec(qrels_path: str | Path, topics_path: str | Path, **options) -> GoldenQuestionSet:
    """The set alone, for callers that report nothing of the import (see `imported_trec`)."""
    return imported_trec(qrels_path, topics_path, **options).question_set


def imported_trec(
    qrels_path: str | Path,
    topics_path: str | Path,
    *,
    identifier: str,
    name: str | None = None,
    field: str = "title",
    corpus: str | Path | None = None,
    min_relevance: float | None = None,
) -> ImportedSet:
    """The judged topics as questions, in topics-file order, each expecting all its relevant documents.

    Unjudged topics are skipped (as in the BEIR import: no judgement is not a claim that nothing
    answers), and topics judged only not relevant are left out and named. A judged query without a topic is an error: its question text is unknown.
    """
    qrels_path, topics_path = Path(qrels_path), Path(topics_path)
    if corpus is None:
        raise InvalidInputError(
            "a corpus (BEIR-style corpus.jsonl) is needed to tag the questions' forms (match or gap) "
            "against their judged documents",
            field="corpus",
        )
    judgements = read_judged_trec_qrels(qrels_path, min_relevance)
    qrels = judgements.relevant
    topics = read_trec_topics(topics_path, field)
    by_value = {_canonical(topic_id): question for topic_id, question in topics.items()}
    queries = []
    for query_id in qrels:
        question = topics.get(query_id, by_value.get(_canonical(query_id)))
        if question is None:
            raise InvalidInputError(
                f"query {quoted(query_id)} is judged but has no topic in {topics_path}", source=str(qrels_path)
            )
        queries.append((query_id, question))
    order = {_canonical(topic_id): index for index, topic_id in enumerate(topics)}
    queries.sort(key=lambda pair: order[_canonical(pair[0])])
    return question_set_from_judgements(
        queries,
        judgements,
        Path(corpus),
        qrels_source=str(qrels_path),
        identifier=identifier,
        name=name or topics_path.name,
        description=(
            f"Imported from the TREC qrels {qrels_path.name} and topics {topics_path.name} ({field}); "
            "forms tagged by vocabulary overlap."
        ),
        source=str(topics_path),
    )
