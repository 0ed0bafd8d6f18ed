"""The vector cache on a real disk: it serves only what it verifies (checksum, width), publishes whole,
cleans what a killed encode left, survives a cache it cannot write or a remote one it cannot read, and
tells a long encode's progress on a clock the test moves."""

from __future__ import annotations

import logging
import zlib
from typing import ClassVar

import fsspec
import numpy as np
import pytest
from fsspec.implementations.memory import MemoryFileSystem

from retrieval_pipeline.retrievers.vector.cache import CHECKSUM_FILE, IDS_FILE, VECTORS_FILE, cached_vectors
from retrieval_pipeline.retrievers.vector.encoding_progress import EncodingProgress

IDS = [f"d{n}" for n in range(40)]


def texts_of(ids):
    return [f"document {identifier} " * (n % 7 + 1) for n, identifier in enumerate(ids)]


class Encoder:
    """Vectors of a text's length and letter counts, `width` wide; counts the texts it encoded."""

    def __init__(self, width: int = 4):
        self.width, self.encoded = width, 0

    def __call__(self, texts):
        self.encoded += len(texts)
        return np.array([[len(t), t.count("d"), t.count("o"), t.count(" ")][: self.width] for t in texts], np.float32)


def vectors_in(folder, encoder: Encoder, report=None, width=lambda: None, clock=lambda: 0.0):
    return cached_vectors(
        folder,
        lambda: (IDS, texts_of(IDS)),
        encoder,
        lambda total: EncodingProgress(total, "documents", report or (lambda message: None), clock=clock),
        texts_at_once=8,
        width=width,
    )


def test_a_cache_hit_serves_the_vectors_it_published(tmp_path):
    first = vectors_in(tmp_path / "key", Encoder())
    again = vectors_in(tmp_path / "key", encoder := Encoder())
    assert again.cache_hit and encoder.encoded == 0 and again.document_ids == IDS
    assert np.array_equal(np.asarray(again.vectors), first.vectors)


@pytest.mark.parametrize("damage", ["zeroed", "garbage", "no checksum"])
def test_vectors_that_fail_their_checksum_are_encoded_again(tmp_path, damage):
    expected = vectors_in(tmp_path / "key", Encoder()).vectors
    if damage == "no checksum":
        (tmp_path / "key" / CHECKSUM_FILE).unlink()
    else:
        stored = np.load(tmp_path / "key" / VECTORS_FILE, mmap_mode="r+")
        stored[:] = 0.0 if damage == "zeroed" else np.random.default_rng(1).standard_normal(stored.shape)
        stored.flush()
    again = vectors_in(tmp_path / "key", encoder := Encoder())
    assert not again.cache_hit and encoder.encoded == len(IDS) and np.array_equal(again.vectors, expected)
    assert vectors_in(tmp_path / "key", Encoder()).cache_hit  # published anew


def test_a_cached_matrix_of_another_width_than_the_encoders_is_encoded_again(tmp_path):
    vectors_in(tmp_path / "key", Encoder(width=3))
    stored = np.load(tmp_path / "key" / VECTORS_FILE, mmap_mode="r")
    assert int((tmp_path / "key" / CHECKSUM_FILE).read_text()) == zlib.crc32(stored.data)  # intact, only narrower
    again = vectors_in(tmp_path / "key", encoder := Encoder(width=4), width=lambda: 4)
    assert not again.cache_hit and encoder.encoded == len(IDS) and again.vectors.shape == (len(IDS), 4)


def test_staging_folders_a_killed_encode_left_are_removed_by_the_next_publish(tmp_path):
    for name in (".key-k1ll3d", ".key-0th3r"):
        (tmp_path / name).mkdir()
        (tmp_path / name / VECTORS_FILE).write_bytes(b"\x93NUMPY half written")
    (tmp_path / ".other-key-a1b2").mkdir()  # another key's staging: not this publish's business
    vectors_in(tmp_path / "key", Encoder())
    assert sorted(path.name for path in tmp_path.iterdir()) == [".other-key-a1b2", "key"]
    assert sorted(path.name for path in (tmp_path / "key").iterdir()) == sorted([VECTORS_FILE, IDS_FILE, CHECKSUM_FILE])


def test_a_cache_that_cannot_be_written_loses_the_shortcut_with_one_warning(tmp_path, caplog):
    (tmp_path / "cache").write_text("a file where the cache folder should be", encoding="utf-8")  # unwritable, even for root
    with caplog.at_level(logging.WARNING):
        served = vectors_in(tmp_path / "cache" / "dense" / "key", encoder := Encoder())
    assert encoder.encoded == len(IDS) and served.vectors.shape == (len(IDS), 4) and not served.cache_hit
    [warning] = caplog.messages
    assert warning.startswith(f"cache {tmp_path / 'cache' / 'dense' / 'key'} not written (") and "next run" in warning


class FailingMemoryFileSystem(MemoryFileSystem):
    """fsspec's in-process file system (standing for s3:// or gs://) whose `failing` calls raise as a
    bucket that went unreachable, or refuses this machine, does."""

    protocol = ("failingmemory",)
    failing: ClassVar[set[str]] = set()

    def exists(self, path, **kwargs):
        if "exists" in self.failing:
            raise ConnectionError("the bucket did not answer")
        return super().exists(path, **kwargs)

    def _open(self, path, mode="rb", **kwargs):
        if "open" in self.failing and "r" in mode:
            raise PermissionError(13, "Forbidden")
        if "write the checksum" in self.failing and "w" in mode and path.endswith(CHECKSUM_FILE):
            raise ConnectionError("the connection was reset")
        return super()._open(path, mode, **kwargs)


@pytest.fixture
def failing_remote(tmp_path):
    fsspec.register_implementation("failingmemory", FailingMemoryFileSystem, clobber=True)
    yield f"failingmemory://vectors-{tmp_path.name}/key"
    FailingMemoryFileSystem.failing = set()


@pytest.mark.parametrize(("failing", "cause"), [("exists", "ConnectionError"), ("open", "PermissionError: Forbidden")])
def test_a_remote_cache_that_cannot_be_read_costs_the_shortcut_with_one_warning(failing_remote, caplog, failing, cause):
    expected = vectors_in(failing_remote, Encoder()).vectors
    stored = FailingMemoryFileSystem().cat_file(f"{failing_remote}/{CHECKSUM_FILE}")
    FailingMemoryFileSystem.failing = {failing}
    with caplog.at_level(logging.WARNING):
        served = vectors_in(failing_remote, encoder := Encoder())
    assert not served.cache_hit and encoder.encoded == len(IDS) and np.array_equal(served.vectors, expected)
    assert caplog.messages == [f"vector cache {failing_remote} not read ({cause}): its vectors encoded in memory, not stored"]
    FailingMemoryFileSystem.failing = set()
    assert FailingMemoryFileSystem().cat_file(f"{failing_remote}/{CHECKSUM_FILE}") == stored  # left as it was
    assert vectors_in(failing_remote, Encoder()).cache_hit


def test_an_upload_that_fails_midway_leaves_nothing_in_the_remote_cache(failing_remote, caplog):
    FailingMemoryFileSystem.failing = {"write the checksum"}  # the last of the three files
    with caplog.at_level(logging.WARNING):
        served = vectors_in(failing_remote, encoder := Encoder())
    assert not served.cache_hit and encoder.encoded == len(IDS) and served.vectors.shape == (len(IDS), 4)
    assert caplog.messages == [f"vector cache {failing_remote} not written (ConnectionError): the next run encodes it again"]
    assert FailingMemoryFileSystem().find(failing_remote) == []  # no vectors without their checksum


def test_a_slow_encode_tells_its_progress_at_least_every_interval_and_a_quick_one_in_twenty_steps(tmp_path):
    now = [0.0]

    def slow(texts):  # every 8 texts take 20 s: more than the 15 s interval, so each is told
        now[0] += 20.0
        return Encoder()(texts)

    told = []
    vectors_in(tmp_path / "slow", slow, told.append, clock=lambda: now[0])
    assert len(told) == len(IDS) // 8 and told[0] == "encoded 8/40 documents (0/s)"
    quick = []
    vectors_in(tmp_path / "quick", Encoder(), quick.append)  # no time passes: only the twentieths are told
    assert [message.split()[1] for message in quick] == ["8/40", "16/40", "24/40", "32/40", "40/40"]


def test_progress_is_told_when_the_interval_passed_and_at_each_twentieth():
    now, told = [0.0], []
    progress = EncodingProgress(
        1000, "chunks", lambda message: told.append((now[0], message)), interval=15.0, clock=lambda: now[0]
    )
    for done in range(10, 1001, 10):
        now[0] += 4.0  # 10 chunks every 4 s: the interval passes every fourth call, a twentieth every fifth
        progress.advance(done)
    times = [at for at, _ in told]
    assert all(later - earlier <= 16.0 for earlier, later in zip([0.0, *times], times))  # never silent much past 15 s
    assert {f"encoded {done:,}/1,000 chunks" for done in range(50, 1001, 50)} <= {m.split(" (")[0] for _, m in told}
    assert told[-1] == (400.0, "encoded 1,000/1,000 chunks (2/s)")
