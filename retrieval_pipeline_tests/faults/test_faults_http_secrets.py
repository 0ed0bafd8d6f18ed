"""Fault injection, HTTP and secrets: a trickling service, a dead one, and tokens that must leak nowhere.

Every case runs the real thing: `retrieval-eval run` in a child process, or the Dagster evaluation on a
fresh instance whose DAGSTER_HOME (SQLite event log and run storage) lives in tmp. Afterwards the
secret, its stripped form and its escaped form are searched for in every byte written.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from http_fakes import TOKEN_VAR, cli, closed_port_url, echoing_search, run_cli, trickling_search, write_project

from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore

pytestmark = pytest.mark.slow

NEWLINE_SECRET = "tok-faults-3c9e1a7b5d20\n"
CRLF_SECRET = "tok-faults-8f24d6b0e1c7\r\nX-Injected: yes"
LEAKY_QUESTIONS = ["turbofan blades", "echo the request", "reject the index", "garbage from the proxy"]
QUERY_KEY = "qk-faults-7d3b90e2a514"


def forms(secret: str) -> list[bytes]:
    """How a secret may appear in bytes: raw, stripped, and escaped as repr() and JSON write it."""
    texts = {secret, secret.strip(), repr(secret)[1:-1], json.dumps(secret)[1:-1]}
    return [text.encode() for text in texts if text]


def written_bytes(*roots: Path) -> dict[Path, bytes]:
    """Every file under the roots, plus the decoded text of every Parquet file (compression hides bytes)."""
    import pyarrow.parquet as pq

    found: dict[Path, bytes] = {}
    for root in roots:
        for path in (p for p in root.rglob("*") if p.is_file()):
            found[path] = path.read_bytes()
            if path.suffix == ".parquet":
                found[path] += json.dumps(pq.read_table(path).to_pylist(), default=str).encode()
    return found


def assert_nowhere(secret: str, texts: dict[str, bytes]) -> None:
    for where, data in texts.items():
        for form in forms(secret):
            assert form not in data, f"a form of the secret is in {where}"


# --- the total timeout and fail-fast ------------------------------------------------------------


@pytest.mark.parametrize("part", ["body", "all"], ids=["trickled-body", "trickled-headers-and-body"])
def test_a_service_trickling_its_answer_hits_the_total_timeout(tmp_path, part):
    with trickling_search(part) as url:
        config = write_project(tmp_path, url, ["turbofan blades", "glacier ice"], timeout_seconds=0.5, retries=0)
        result = run_cli(config, env={TOKEN_VAR: "tok-trickle"})

    assert result.returncode == 3, result.stderr
    assert result.stderr.startswith(
        f"error: incomplete run: 2 of 2 questions failed: POST {url} failed after 1 attempt; "
        "last: timed out: no complete answer within timeout_seconds=0.5 (connect, headers and body)"
    )
    [entry] = ResultStore(str(tmp_path / "store")).history(HistoryKey("faults.http", "search"))
    assert not entry.complete


@pytest.mark.parametrize("as_json", [False, True], ids=["plain", "json"])
def test_a_dead_service_fails_fast_with_exit_3_and_the_cause(tmp_path, as_json):
    url = closed_port_url()
    config = write_project(tmp_path, url, [f"question {n}" for n in range(40)], retries=1, concurrency=1)

    result = run_cli(config, *(["--json"] if as_json else []), env={TOKEN_VAR: "tok-dead"})

    cause = (
        f"10 of 40 questions failed (q1, q2, q3, q4, q5 and 5 more), 30 not asked: connection refused (POST {url}, "
        "2 attempts); the run stopped early: the first questions could not reach the service"
    )
    assert result.returncode == 3, result.stderr
    assert result.stderr.splitlines()[-1].startswith(f"error: incomplete run: {cause}; stored as run ")
    if as_json:
        assert json.loads(result.stdout)["regression"]["summary"].startswith(f"Incomplete run: {cause}.")
    store = ResultStore(str(tmp_path / "store"))
    [entry] = store.history(HistoryKey("faults.http", "search"))
    errors = [question.error for question in store.load(entry).questions]
    assert sum(error.startswith("not asked") for error in errors) == 30 and not entry.complete


# --- secrets ------------------------------------------------------------------------------------


@pytest.mark.parametrize("as_json", [False, True], ids=["plain", "json"])
@pytest.mark.parametrize("secret", [NEWLINE_SECRET, CRLF_SECRET], ids=["trailing-newline", "embedded-crlf"])
def test_a_secret_never_reaches_the_store_stdout_or_stderr_of_a_run(tmp_path, secret, as_json):
    with echoing_search(secret.removesuffix("\n")) as url:
        config = write_project(tmp_path, url, LEAKY_QUESTIONS, retries=1)
        result = run_cli(config, *(["--json"] if as_json else []), env={TOKEN_VAR: secret})

    if secret == CRLF_SECRET:  # refused before anything is sent or stored
        assert result.returncode == 2, result.stderr
        assert f"the environment variable {TOKEN_VAR} holds a line break" in result.stderr
        assert not (tmp_path / "store").exists()
    else:  # one trailing newline is dropped: the service accepts the token, and echoes it on errors
        assert result.returncode == 3, result.stderr
        store = ResultStore(str(tmp_path / "store"))
        [entry] = store.history(HistoryKey("faults.http", "search"))
        first, *echoed = store.load(entry).questions
        assert first.error is None and first.retrieved_document_ids
        assert all("Bearer ***" in question.error for question in echoed)
    streams = {"stdout": result.stdout.encode(), "stderr": result.stderr.encode()}
    assert_nowhere(secret, {**streams, **{str(p): data for p, data in written_bytes(tmp_path).items()}})


def dagster_evaluation(home: Path, config: Path, retriever: str) -> list:
    """The retriever's partition, then its evaluation, on a fresh instance living in `home`."""
    from dagster import DagsterInstance, MultiPartitionKey

    from retrieval_pipeline.dagster_layer.definitions import EVALUATION_JOB, RETRIEVERS_JOB, build_definitions

    defs = build_definitions(config)
    quiet = {"loggers": {"console": {"config": {"log_level": "ERROR"}}}}
    with DagsterInstance.from_config(str(home)) as instance:
        return [
            defs.resolve_job_def(job).execute_in_process(
                instance=instance, partition_key=key, run_config=quiet, raise_on_error=False
            )
            for job, key in (
                (RETRIEVERS_JOB, retriever),
                (EVALUATION_JOB, MultiPartitionKey({"set": "faults.http", "retriever": retriever})),
            )
        ]


@pytest.fixture
def dagster_home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n", encoding="utf-8")
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    return home


def instance_files(dagster_home: Path, project: Path) -> dict[str, bytes]:
    files = written_bytes(dagster_home, project)
    assert any(path.suffix == ".db" for path in files), "the instance kept its event log in SQLite under DAGSTER_HOME"
    return {str(path): data for path, data in files.items()}


@pytest.mark.parametrize("secret", [NEWLINE_SECRET, CRLF_SECRET], ids=["trailing-newline", "embedded-crlf"])
def test_a_secret_never_reaches_the_dagster_instance_or_the_store(tmp_path, monkeypatch, dagster_home, secret):
    monkeypatch.setenv(TOKEN_VAR, secret)
    with echoing_search(secret.removesuffix("\n")) as url:
        config = write_project(tmp_path / "project", url, LEAKY_QUESTIONS, retries=1)
        results = dagster_evaluation(dagster_home, config, "search")

    if secret == CRLF_SECRET:
        assert not any(result.success for result in results)
        failure = results[-1].get_step_failure_events()[0].step_failure_data.error
        assert f"the environment variable {TOKEN_VAR} holds a line break" in failure.cause.message
    else:
        assert [result.success for result in results] == [True, False]  # the incomplete run fails its partition
        [check] = results[-1].get_asset_check_evaluations()
        assert not check.passed and check.description.startswith("Incomplete run: 3 of 4 questions failed (q2, q3, q4)")
        store = ResultStore(str(tmp_path / "project" / "store"))
        [entry] = store.history(HistoryKey("faults.http", "search"))
        assert any("Bearer ***" in (question.error or "") for question in store.load(entry).questions)  # echoed, masked
    assert_nowhere(secret, instance_files(dagster_home, tmp_path / "project"))


def test_an_error_quoting_a_secret_that_escapes_an_asset_is_masked_in_the_event_log(tmp_path, monkeypatch, dagster_home):
    plugin = tmp_path / "plugin" / "faults_leaky-0.1.dist-info"
    plugin.mkdir(parents=True)
    (plugin / "METADATA").write_text("Metadata-Version: 2.1\nName: faults-leaky\nVersion: 0.1\n")
    (plugin / "entry_points.txt").write_text("[retrieval_pipeline.retrievers]\nfaults_leaky = http_fakes:LeakyKind\n")
    monkeypatch.syspath_prepend(str(plugin.parent))
    monkeypatch.setenv(TOKEN_VAR, NEWLINE_SECRET)
    config = write_project(tmp_path / "project", closed_port_url(), ["turbofan blades"])
    config.write_text(config.read_text() + f"  leaky:\n    kind: faults_leaky\n    token: {{env: {TOKEN_VAR}}}\n")

    results = dagster_evaluation(dagster_home, config, "leaky")

    failure = results[-1].get_step_failure_events()[0].step_failure_data.error
    assert failure.cause.message.startswith(
        "retrieval_pipeline.core.base.secrets.SecretScrubbedError: RuntimeError: login refused for token '***"
    )
    assert_nowhere(NEWLINE_SECRET, instance_files(dagster_home, tmp_path / "project"))


# --- a key in the url's query -------------------------------------------------------------------


def test_a_key_in_the_urls_query_echoed_by_a_failing_service_is_masked_in_run_verdicts_and_the_store(tmp_path):
    env = {TOKEN_VAR: "tok-query"}
    with echoing_search("tok-query") as url:
        config = write_project(tmp_path, f"{url}?key={QUERY_KEY}", ["turbofan blades", "the path please"], retries=0)
        runs = [run_cli(config, *options, env=env) for options in ([], ["--json"])]
    verdicts = [cli("verdicts", "--config", str(config), *options, env=env) for options in ([], ["--json"])]

    assert [result.returncode for result in runs + verdicts] == [3, 3, 1, 1]
    assert all("serving /search?key=***" in result.stdout + result.stderr for result in runs + verdicts)
    store = ResultStore(str(tmp_path / "store"))
    stored = [store.load(entry).questions[1].error for entry in store.history(HistoryKey("faults.http", "search"))]
    assert stored and all("serving /search?key=***" in error for error in stored)
    written = {str(path): data for path, data in written_bytes(tmp_path).items() if path != config}  # the user's own file
    streams = {f"{n}.{name}": getattr(r, name).encode() for n, r in enumerate(runs + verdicts) for name in ("stdout", "stderr")}
    assert_nowhere(QUERY_KEY, {**streams, **written})


def test_nightly_keeps_a_key_in_the_urls_query_out_of_the_dagster_instance_and_shows_it_masked(tmp_path):
    from dagster import AssetKey, DagsterInstance

    home = tmp_path / "dagster_home"
    env = {TOKEN_VAR: "tok-query", "DAGSTER_HOME": str(home)}
    with echoing_search("tok-query") as url:
        config = write_project(tmp_path / "project", f"{url}?key={QUERY_KEY}", ["turbofan blades", "the path please"], retries=0)
        result = cli("nightly", "--config", str(config), env=env)

    assert result.returncode == 3, result.stdout + result.stderr  # the echoed question fails the pair
    with DagsterInstance.from_config(str(home)) as instance:
        built = instance.get_latest_materialization_event(AssetKey("retriever_config")).asset_materialization
        assert built.metadata["configuration"].value["url"] == f"{url}?key=***"
    streams = {"stdout": result.stdout.encode(), "stderr": result.stderr.encode()}
    assert_nowhere(QUERY_KEY, {**streams, **instance_files(home, tmp_path / "project" / "store")})
