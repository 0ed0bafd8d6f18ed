"""An embeddings endpoint failing while the real `retrieval-eval` encodes the corpus: the service's
failure (exit 3), one line naming the retriever and the endpoint without its query or the token,
whatever the endpoint got wrong; nothing is stored and nothing is cached."""

from __future__ import annotations

import pytest
from embedding_fakes import FAULTS, faulty_embeddings
from http_fakes import TOKEN_VAR, cli, closed_port_url, run_cli, write_dense_project

pytestmark = pytest.mark.slow

TOKEN = "tok-embed-5e1d"  # long enough that scrubbing it masks nothing else
EXPECTED = {
    "unreachable": "connection refused",
    "server_error": "failed after 2 attempts; last: HTTP 503",
    "unauthorized": "answered HTTP 401",
    "count": "holds 1 vectors for the 2 texts sent",
    "ragged": "rows of different lengths",
    "narrower": "vectors of width 2, not 3, the width of earlier vectors",
    "nan": "NaN",
    "strings": "vectors must be numbers",
    "duplicate_index": "distinct 'index' below 2",
    "not_json": "non-JSON",
    "no_data": "no list at 'data'",
    "timeout": "timed out",
    "ignores_dimensions": "vectors of width 3, not 8, the width asked for (dimensions)",
}


def assert_one_line_naming_the_endpoint(result, endpoint: str, expected: str) -> None:
    assert result.returncode == 3, result.stderr
    *progress, error = result.stderr.splitlines()
    assert all(line.startswith("Preparing retriever embedded… encoded ") for line in progress), result.stderr
    assert (
        error.startswith("error: retriever embedded could not be built: ") and f"POST {endpoint}" in error and expected in error
    ), error
    assert TOKEN not in result.stderr and "k-123" not in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("fault", ["unreachable", *FAULTS, "ignores_dimensions"])
def test_an_endpoint_failing_while_the_corpus_is_encoded_is_a_failing_service_named_on_one_line(tmp_path, fault):
    with faulty_embeddings(TOKEN) as (base, _):
        endpoint = closed_port_url().replace("/search", "/embeddings") if fault == "unreachable" else f"{base}/{fault}"
        asked = {"dimensions": 8} if fault == "ignores_dimensions" else {}  # answered 3 wide, as every fault
        config = write_dense_project(tmp_path, f"{endpoint}?key=k-123", ["wings"], retries=1, timeout_seconds=0.5, **asked)
        result = run_cli(config, env={TOKEN_VAR: TOKEN}, retriever="embedded")

    assert_one_line_naming_the_endpoint(result, endpoint, EXPECTED[fault])
    assert not (tmp_path / "store").exists() or not any((tmp_path / "store").rglob("*.parquet"))
    assert not any((tmp_path / "cache").rglob("*.npy"))


def test_compare_names_the_retriever_whose_endpoint_failed(tmp_path):
    with faulty_embeddings(TOKEN) as (base, _):
        config = write_dense_project(tmp_path, f"{base}/nan?key=k-123", ["wings"])
        result = cli("compare", "faults.http", "bm25", "embedded", "--config", str(config), env={TOKEN_VAR: TOKEN})

    assert_one_line_naming_the_endpoint(result, f"{base}/nan", EXPECTED["nan"])


def test_nightly_shows_the_failed_build_by_name_and_exits_3_while_the_other_retriever_is_evaluated(tmp_path):
    with faulty_embeddings(TOKEN) as (base, _):
        config = write_dense_project(tmp_path, f"{base}/strings?key=k-123", ["wings"])
        env = {TOKEN_VAR: TOKEN, "DAGSTER_HOME": str(tmp_path / "dagster_home")}
        result = cli("nightly", "--config", str(config), env=env)

    assert result.returncode == 3, result.stdout + result.stderr
    [failed] = [line for line in result.stdout.splitlines() if line.startswith("✗")]
    assert failed.startswith("✗ retriever_config_job [embedded]: retriever embedded could not be built: ")
    assert f"POST {base}/strings: " in failed and EXPECTED["strings"] in failed
    assert "✓ faults.http × bm25: top-1 100.0%" in result.stdout
    assert TOKEN not in result.stdout + result.stderr and "k-123" not in result.stdout + result.stderr


def test_nightly_prints_a_long_encodes_progress_as_lines_on_stderr_without_the_secret(tmp_path):
    with faulty_embeddings(TOKEN) as (base, _):
        config = write_dense_project(tmp_path, f"{base}/fine?key=k-123", ["wings"])
        env = {TOKEN_VAR: TOKEN, "DAGSTER_HOME": str(tmp_path / "dagster_home")}
        result = cli("nightly", "--config", str(config), "--in-process", env=env)  # launched runs log it in Dagster

    assert result.returncode == 0, result.stdout + result.stderr
    progress = [line.split(" (")[0] for line in result.stderr.splitlines() if "encoded" in line]
    assert progress == ["embedded: encoded 2/4 documents", "embedded: encoded 4/4 documents"]
    assert TOKEN not in result.stdout + result.stderr and "k-123" not in result.stdout + result.stderr


def test_a_cache_that_cannot_be_written_costs_one_warning_and_the_run_goes_on_telling_its_progress(tmp_path):
    with faulty_embeddings(TOKEN) as (base, calls):
        config = write_dense_project(tmp_path, f"{base}/fine", ["wings"])
        (tmp_path / "cache").write_text("a file where the cache folder should be", encoding="utf-8")  # even root cannot
        result = run_cli(config, env={TOKEN_VAR: TOKEN}, retriever="embedded")

    assert result.returncode == 0, result.stderr
    assert calls["fine"] == 3  # two batches of documents, one question
    progress, [warning] = result.stderr.splitlines()[:2], result.stderr.splitlines()[2:]
    assert [line.split(" (")[0] for line in progress] == [
        "Preparing retriever embedded… encoded 2/4 documents",
        "Preparing retriever embedded… encoded 4/4 documents",
    ]
    assert warning.startswith(f"cache {tmp_path / 'cache' / 'dense'}/") and "the next run builds it again" in warning
    assert "faults.http × embedded" in result.stdout
