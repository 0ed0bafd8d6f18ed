"""A search engine's own request body with the question put in: `{question}`, `{limit}`, `{vector}` and
`{history}` anywhere in nested JSON (an Elasticsearch or OpenSearch `_search` query, a Vespa YQL request, a Weaviate
GraphQL query), so an engine is measured by its real request shape with no service in front of it.

Placeholders are recognised only in string values, never in keys, and only as these exact tokens
(other braces, like YQL's `{targetHits: 10}`, stay as written):

- a string that is exactly `"{question}"` becomes the question, `"{limit}"` the number of hits wanted
  (a JSON number), `"{vector}"` the question's embedding (a JSON array of numbers), `"{history}"` the
  conversation before a turn as chat messages (a JSON list of `{"role": "user" | "assistant",
  "content": ...}`, oldest first; `[]` for a single question or an opening turn);
- inside a longer string, `{question}` is inserted escaped as the content of a JSON string (`"` as `\\"`,
  `\\` as `\\\\`, control characters as `\\n`, `\\u0001`), so a question stays one string literal of a
  query embedded in the string (GraphQL and YQL share JSON's escapes); `{limit}` is inserted as digits;
  `{vector}` and `{history}` are refused there.

The body is then sent as JSON, so every value is escaped once more as JSON requires; a value YAML
reads as something JSON cannot hold (an unquoted date, `.nan`, `.inf`, a `!!set`, `!!binary`) is
refused when the configuration is checked, naming its key path, rather than failing every request.
"""

from __future__ import annotations

import datetime
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from retrieval_pipeline.core.base.errors import InvalidInputError, clip, quoted
from retrieval_pipeline.core.retrieval.kinds import KindContext
from retrieval_pipeline.retrievers.encoders import EncoderSettings
from retrieval_pipeline.retrievers.encoders.query_encoder import QueryEncoderParams, checked_encoder
from retrieval_pipeline.retrievers.http.params import HttpParams

PLACEHOLDERS = ("{question}", "{limit}", "{vector}", "{history}")
WHOLE_ONLY = ("{vector}", "{history}")
_EMBEDDED = re.compile(r"\{question\}|\{limit\}")
_YAML_TAGS = {set: "!!set", bytes: "!!binary"}


def placeholders_in(template: Any) -> set[str]:
    """Every placeholder the template holds, whole or inside a string."""
    if isinstance(template, dict):
        return set().union(*(placeholders_in(value) for value in template.values()))
    if isinstance(template, list):
        return set().union(*(placeholders_in(value) for value in template))
    if isinstance(template, str):
        return {token for token in PLACEHOLDERS if token in template}
    return set()


def embedded_whole_path(template: Any) -> tuple[str, str] | None:
    """(where, which) of the first `{vector}` or `{history}` inside a longer string (where it cannot be
    filled), if any."""
    return _first_problem(template, "", _embedded_whole)


def not_json(template: Any, where: str) -> tuple[str, str] | None:
    """(key path from `where`, what is wrong) of the first value the template holds that JSON cannot."""
    return _first_problem(template, where, _not_json)


def _first_problem(template: Any, path: str, problem: Callable[[Any], str | None]) -> tuple[str, str] | None:
    """Depth first, in the template's order: the first value (a mapping or list too) `problem` finds
    something wrong with, and where."""
    found = problem(template)
    if found is not None:
        return path, found
    if isinstance(template, dict):
        items: Sequence[tuple[str, Any]] = [(f"{path}.{key}" if path else str(key), value) for key, value in template.items()]
    elif isinstance(template, list):
        items = [(f"{path}[{index}]", value) for index, value in enumerate(template)]
    else:
        return None
    return next((found for key, value in items if (found := _first_problem(value, key, problem)) is not None), None)


def _embedded_whole(value: Any) -> str | None:
    if not isinstance(value, str) or value in WHOLE_ONLY:
        return None
    return next((token for token in WHOLE_ONLY if token in value), None)


def _not_json(value: Any) -> str | None:
    if value is None or isinstance(value, (str, int, list)):
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{value} (YAML's .nan or .inf): JSON has no such number"
    if isinstance(value, dict):
        key = next((key for key in value if not isinstance(key, str)), "")
        return None if key == "" else f"the key {clip(str(key))} is not text; quote it"
    if isinstance(value, datetime.date):
        return f"YAML reads the unquoted {value.isoformat()} as a date, which JSON has no type for; quote it"
    tag = _YAML_TAGS.get(type(value), type(value).__name__)
    return f"a YAML {tag} ({quoted(value)}): JSON has no such type"


def filled(
    template: Any,
    question: str,
    limit: int,
    vector: Sequence[float] | None = None,
    history: Sequence[Mapping[str, str]] = (),
) -> Any:
    """A new body: the template with its placeholders replaced, the template itself untouched."""
    if isinstance(template, dict):
        return {key: filled(value, question, limit, vector, history) for key, value in template.items()}
    if isinstance(template, list):
        return [filled(value, question, limit, vector, history) for value in template]
    if not isinstance(template, str):
        return template
    whole = {"{question}": question, "{limit}": limit, "{vector}": vector, "{history}": [dict(m) for m in history]}
    if template in whole:
        return whole[template]
    escaped = json.dumps(question, ensure_ascii=False)[1:-1]
    # One pass, so a question that itself says "{limit}" is left as the user typed it.
    return _EMBEDDED.sub(lambda match: escaped if match.group() == "{question}" else str(limit), template)


class HttpSearchParams(HttpParams):
    """The http kind's parameters: `body_template` replaces the body built from `question_field` and
    `limit_field`; `query_encoder` (the `dense` kind's encoder settings) embeds the question for `{vector}`."""

    body_template: dict[str, Any] | list[Any] | None = None
    query_encoder: QueryEncoderParams | None = None


def checked_template(params: HttpSearchParams, kind: KindContext) -> EncoderSettings | None:
    """What the template cannot do, refused before any request: the local encoder settings when `{vector}` is used."""

    def invalid(message: str, field: str = "body_template") -> InvalidInputError:
        return kind.invalid(message, field)

    if params.body_template is None:
        if params.query_encoder is not None:
            raise invalid("query_encoder embeds the question for a body_template's {vector}: give body_template", "query_encoder")
        return None
    if params.method == "GET":
        raise invalid("body_template is a POST body; a GET request has none", "method")
    replaced = [name for name in ("extra_body", "question_field", "limit_field") if name in params.model_fields_set]
    if replaced:
        raise invalid(f"body_template replaces {replaced[0]}: put that into the template", replaced[0])
    problem = not_json(params.body_template, "body_template")
    if problem is not None:
        raise invalid(f"not JSON: {problem[1]}", problem[0])
    found = placeholders_in(params.body_template)
    if not found & {"{question}", "{vector}"}:
        raise invalid("body_template has neither {question} nor {vector}: every question would send the same body")
    embedded = embedded_whole_path(params.body_template)
    if embedded is not None:
        where, token = embedded
        raise invalid(f'{token} must be a whole value ("{token}"), not inside the string at {where}')
    if ("{vector}" in found) != (params.query_encoder is not None):
        raise invalid(
            "{vector} and query_encoder go together: the vector is the question embedded by query_encoder", "query_encoder"
        )
    if params.query_encoder is None:
        return None
    return checked_encoder(params.query_encoder, kind.under("query_encoder."))
