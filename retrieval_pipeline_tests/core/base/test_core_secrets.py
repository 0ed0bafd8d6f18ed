"""A key written into a configured url's query, or its password, is a secret as an `{env: VARIABLE}` value
is: whatever quotes it (a service echoing its request path, a metadata value showing the url) shows it
masked, as written and as decoded, while the query's other values stay readable."""

from __future__ import annotations

from retrieval_pipeline.core.base import secrets


def test_a_configured_urls_password_and_secret_looking_query_value_are_masked_as_written_and_decoded_and_nothing_else():
    url = "https://reader:pw-core-51c2@search.example/v1?limit=10&Api_Key=ak%2Fcore-9f3e71&format=json#top"
    secrets.remember_configured({"kind": "http", "members": [{"url": url}]})

    echoed = "GET /v1?limit=10&Api_Key=ak%2Fcore-9f3e71&format=json failed; key ak/core-9f3e71, pw-core-51c2 refused"

    assert secrets.scrub(echoed) == "GET /v1?limit=10&Api_Key=***&format=json failed; key ***, *** refused"
