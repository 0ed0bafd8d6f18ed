"""Secret values known to the process, and the one scrubber every recorded error text goes through.

A secret enters through `{env: VARIABLE}` in a retriever's parameters, or in a url as its password or
a query value under a secret-looking name (`?key=...`, by the redaction's rule), and whatever then fails may quote it (an
HTTP client, a third-party kind, a service echoing its request). The store, the CLI and Dagster's logs
and metadata all pass texts through `scrub`, so no code path has to remember which exception types
might. The registry is process-wide on purpose: errors surface far from where the retriever was built
(worker threads, Dagster's step machinery), and a secret known anywhere must be hidden everywhere, in
the forms error texts give it (stripped of surrounding whitespace, escaped as Python and JSON quote it).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any
from urllib.parse import unquote_plus, urlsplit

from retrieval_pipeline.core.base.errors import RetrievalEvalError
from retrieval_pipeline.core.base.redaction import secret_name

MASK = "***"
_lock = threading.Lock()
_forms: tuple[str, ...] = ()


class SecretScrubbedError(RetrievalEvalError):
    """Stands in for an error whose text quoted a secret: its message names the original class, secret masked."""


def remember(value: str) -> None:
    """Every form the value may take in an error text is masked from now on."""
    global _forms
    variants = {value, value.strip(), repr(value)[1:-1], json.dumps(value)[1:-1], repr(value.encode())[2:-1]}
    with _lock:
        _forms = tuple(sorted(set(_forms) | {form for form in variants if form}, key=len, reverse=True))


def from_environment(variable: str) -> str | None:
    """The variable's value, remembered as a secret; None when unset or empty."""
    value = os.environ.get(variable)
    if not value:
        return None
    remember(value)
    return value


def remember_configured(params: Any) -> None:
    """Every `{env: VARIABLE}` and every url's password and query key anywhere in a retriever's parameters,
    before the kind reads them (or not)."""
    if isinstance(params, str):
        _remember_url_secrets(params)
    elif isinstance(params, Mapping):
        if isinstance(params.get("env"), str):
            from_environment(params["env"])
        for value in params.values():
            remember_configured(value)
    elif isinstance(params, (list, tuple)):
        for value in params:
            remember_configured(value)


def _remember_url_secrets(text: str) -> None:
    """A url's password (`//user:PASSWORD@host`) and its query values under a secret-looking name (`?key=`,
    `?api_key=`, `?access_token=`), as written and decoded: a service echoing its request quotes them, and
    whatever shows the configuration would."""
    try:
        url = urlsplit(text)
    except ValueError:  # no url ("http://[::1" and the like): nothing of one to remember
        return
    if not (url.scheme and url.netloc):
        return
    values = [url.password]  # as written (urlsplit decodes nothing); each is remembered decoded too
    for pair in url.query.split("&"):
        name, _, value = pair.partition("=")
        if secret_name(unquote_plus(name)):
            values.append(value)
    for value in filter(None, values):
        remember(value)
        remember(unquote_plus(value))


def scrub(text: str) -> str:
    """The text with every known secret form masked; longest forms first so none leaves a fragment."""
    for form in _forms:
        if form in text:
            text = text.replace(form, MASK)
    return text


def _chain_text(error: BaseException) -> str:
    seen: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and current not in seen:
        seen.append(current)
        current = current.__cause__ or (None if current.__suppress_context__ else current.__context__)
    return "\n".join(f"{type(e).__name__}: {e}" for e in seen)


@contextmanager
def scrubbed_errors() -> Iterator[None]:
    """An error escaping the block whose text (or its causes') quotes a secret is replaced by a
    `SecretScrubbedError` without the chain, so whatever logs it (Dagster stores message and
    traceback in its event log) never sees the secret. Other errors pass unchanged."""
    try:
        yield
    except Exception as error:
        text = _chain_text(error)
        if scrub(text) == text:
            raise
        raise SecretScrubbedError(scrub(f"{type(error).__name__}: {error}")) from None
