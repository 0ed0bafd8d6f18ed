"""Helpers of the issue 31 end-to-end test: the Cranfield files read as plain data, the project's
configuration, and the figures computed here (hit rates, kappa, the prediction-powered estimate) without
the product's code."""

from __future__ import annotations

import csv
import json
import math
import statistics
from pathlib import Path

import yaml
from chat_service import TOKEN_VAR

from retrieval_pipeline.core.scoring.stats.intervals import Z_95

RETRIEVERS = {"bm25_a": {"k1": 1.5, "b": 0.75}, "bm25_b": {"k1": 0.9, "b": 0.3, "method": "robertson", "stemmer": None}}
JUDGE = "flipper"


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def read_csv(path: Path) -> list[dict]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def write_csv(path: Path, rows: list[dict]) -> None:
    with path.open("w", encoding="utf-8", newline="") as handle:  # as a spreadsheet saves it
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def qrels(collection: Path) -> set[tuple[str, str]]:
    rows = read_csv_tsv(collection / "qrels" / "test.tsv")
    return {(row["query-id"], row["corpus-id"]) for row in rows if int(row["score"]) >= 2}


def read_csv_tsv(path: Path) -> list[dict]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def prompt_document(entry: dict) -> str:
    title, text = entry.get("title") or "", entry.get("text") or ""
    return f"{title}\n\n{text}" if title and text else title or text


def keep_one_qrel(set_file: Path) -> None:
    """The set as a team starts: each question's first relevant document only, nothing rejected."""
    header, *questions = set_file.read_text(encoding="utf-8").splitlines()
    lines = [header]
    for line in questions:
        question = json.loads(line)
        question["expected_document_ids"] = question["expected_document_ids"][:1]
        question.pop("rejected_document_ids", None)
        lines.append(json.dumps(question))
    set_file.write_text("\n".join(lines) + "\n", encoding="utf-8")


def configure(root: Path, corpus: Path, url: str, **extra) -> Path:
    config = {
        "store": str(root / "results"),
        "cache_dir": str(root / "cache"),
        "question_sets": [{"file": "cranfield.jsonl"}],
        "retrievers": {name: {"kind": "lexical", "corpus": str(corpus), **params} for name, params in RETRIEVERS.items()},
        "judges": {
            JUDGE: {
                "kind": "openai",
                "url": url,
                "model": "flipper-1",
                "headers": {"Authorization": {"env": TOKEN_VAR, "prefix": "Bearer "}},
            }
        },
        **extra,
    }
    path = root / "config.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def hit_rate(rankings: dict[str, list[str]], labels: dict[str, set[str]], k: int) -> float:
    return sum(bool(set(ranking[:k]) & labels[q]) for q, ranking in rankings.items()) / len(rankings)


def ppi(figure, rankings, pooled, labelled, machine, human) -> tuple[float, float]:
    """Prediction-powered estimate and its 95% half-width (docs/labels.md): the mean machine figure over the pooled
    questions plus the mean human-minus-machine error over the human-labelled ones, the questions with nothing
    pooled entering exactly, weighted by their share."""
    f = {q: figure(rankings[q], machine[q]) for q in rankings}
    y = {q: figure(rankings[q], human[q]) for q in labelled}
    exact = sum(f[q] for q in rankings if q not in pooled)
    predicted = [f[q] for q in rankings if q in pooled]
    share = len(predicted) / len(rankings)
    errors = [y[q] - f[q] for q in labelled]
    value = share * (statistics.fmean(predicted) + statistics.fmean(errors)) + exact / len(rankings)
    half = Z_95 * share * math.sqrt(statistics.variance(predicted) / len(predicted) + statistics.variance(errors) / len(errors))
    return value, half


def own_kappa(count: dict, n: int) -> float:
    observed = (count[("yes", "yes")] + count[("no", "no")]) / n
    human = (count[("yes", "yes")] + count[("yes", "no")]) / n
    machine = (count[("yes", "yes")] + count[("no", "yes")]) / n
    chance = human * machine + (1 - human) * (1 - machine)
    return (observed - chance) / (1 - chance)


def edit_config(config: Path, **keys) -> None:
    data = yaml.safe_load(config.read_text(encoding="utf-8"))
    data.update(keys)
    config.write_text(yaml.safe_dump(data), encoding="utf-8")


def judged_share(rankings: dict[str, list[str]], judged: dict[str, set[str]]) -> float:
    return statistics.fmean(len(set(ranking[:3]) & judged[q]) / 3 for q, ranking in rankings.items())
