"""Fault injection on files: checkpoints and results.

Every test here is pure NumPy and file-level (no JAX program is compiled). A kill is simulated by
patching :func:`jaxbandits._io.fault_point`, which every file operation of a commit calls first:
from its k-th call on it raises, so the "killed" process performs no further file operation (no
cleanup either), exactly like a ``kill -9`` between operations k - 1 and k. A few tests use real
processes (``subprocess``) for locking and a real ``SIGKILL``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from scipy import stats

from jaxbandits import _io, checkpoint
from jaxbandits.checkpoint import Checkpoint, CheckpointError
from jaxbandits.results import Result, ResultWriter
from jaxbandits.results import _result as results


class Killed(BaseException):
    """A simulated kill: not an ``Exception``, so nothing catches it on the way up."""


class Faults:
    """Replaces ``_io.fault_point``: counts calls and names; kills from call ``kill_at`` on."""

    def __init__(self, kill_at: int | None = None):
        self.kill_at, self.names = kill_at, []

    def __call__(self, name: str) -> None:
        self.names.append(name)
        if self.kill_at is not None and len(self.names) >= self.kill_at:
            raise Killed(f"killed at file operation {len(self.names)} ({name})")


def _state(step: int) -> tuple[dict, dict[str, np.ndarray]]:
    """The (meta, arrays) of a runner that has done ``step`` chunks: the round count lives in
    both, so a mix of two commits is detectable."""
    meta = {"done": 400 * step, "wall_time": 1.5 * step}
    arrays = {"carry_0": np.full((7, 3), step, np.float32),
              "carry_1": np.arange(5, dtype=np.uint32) + step,
              "done": np.asarray(400 * step, np.int64)}
    return meta, arrays


def _rows(step: int) -> np.ndarray:
    return np.full((4, 3), step, np.float32)  # the records of block `step` (rows 4(step-1)..)


def _commit_step(ckpt: Checkpoint, step: int) -> None:
    """What the runner does per block: write the block's records, then commit."""
    ckpt.records((16, 3), np.float32).write(4 * (step - 1), _rows(step))
    ckpt.commit(*_state(step))


def _assert_is_commit(loaded, step: int, directory) -> None:
    meta, arrays = loaded
    expected_meta, expected_arrays = _state(step)
    assert meta == expected_meta
    assert set(arrays) == set(expected_arrays)
    for key, value in expected_arrays.items():
        np.testing.assert_array_equal(arrays[key], value)
        assert arrays[key].dtype == value.dtype
    assert int(arrays["done"]) == meta["done"]  # carry and metadata from the same commit
    records = _io.read_npy(directory / "records.npy")
    for block in range(1, step + 1):  # every row a commit claims is there
        np.testing.assert_array_equal(records[4 * (block - 1): 4 * block], _rows(block))


def _leftovers(directory) -> list[str]:
    return sorted(p.name for p in directory.iterdir()
                  if _io.temp_target(p.name) is not None
                  or (p.name.startswith("state-") and p.name.endswith(".npz")))


# ------------------------------------------------------------------------------------------------
# (a) A kill between every pair of file operations of a checkpoint commit.


def _count_commit_operations(tmp_path) -> list[str]:
    faults = Faults()
    directory = tmp_path / "count"
    with Checkpoint(directory, "fp") as ckpt:
        ckpt.load()
        _commit_step(ckpt, 1)
        _commit_step(ckpt, 2)  # warm: the second commit also removes the first's state
        ckpt.records((16, 3), np.float32).write(8, _rows(3))
        _io_fault = _io.fault_point
        try:
            _io.fault_point = faults
            ckpt.commit(*_state(3))
        finally:
            _io.fault_point = _io_fault
    return faults.names


def test_commit_calls_a_fault_point_before_every_file_operation(tmp_path):
    names = _count_commit_operations(tmp_path)
    # state file (create, write, fsync, rename, fsync dir), records fsync, manifest (the same
    # five), removal of the previous state file.
    assert names == ["create-temp", "write-temp", "fsync-temp", "rename", "fsync-dir",
                     "fsync-rows",
                     "create-temp", "write-temp", "fsync-temp", "rename", "fsync-dir",
                     "remove"]


@pytest.mark.full
@pytest.mark.parametrize("kill_at", range(1, 14))
def test_kill_between_any_two_commit_operations_leaves_old_or_new_commit(tmp_path, monkeypatch,
                                                                          kill_at):
    names = _count_commit_operations(tmp_path)
    manifest_rename = names.index("rename", names.index("fsync-rows")) + 1  # 1-based call
    directory = tmp_path / "ckpt"
    ckpt = Checkpoint(directory, "fp", describe={"agent": "lin-ts"})
    assert ckpt.load() is None
    _commit_step(ckpt, 1)
    _commit_step(ckpt, 2)
    ckpt.records((16, 3), np.float32).write(8, _rows(3))  # block 3's records, not yet committed
    faults = Faults(kill_at)
    monkeypatch.setattr(_io, "fault_point", faults)
    if kill_at <= len(names):
        with pytest.raises(Killed):
            ckpt.commit(*_state(3))
    else:
        ckpt.commit(*_state(3))  # past the last operation: no kill
    monkeypatch.setattr(_io, "fault_point", lambda name: None)
    ckpt.close()  # what the OS does for a dead process: the lock goes

    with Checkpoint(directory, "fp", describe={"agent": "lin-ts"}) as fresh:
        loaded = fresh.load()
        expected = 3 if kill_at > manifest_rename else 2
        _assert_is_commit(loaded, expected, directory)
        assert _leftovers(directory) == [f"state-{expected}.npz"]  # temporaries swept
        # and the run goes on from there: the next commit is complete and loads
        _commit_step(fresh, expected + 1)
    with Checkpoint(directory, "fp") as again:
        _assert_is_commit(again.load(), expected + 1, directory)


@pytest.mark.full
@pytest.mark.parametrize("kill_at", range(1, 12))
def test_kill_during_the_first_commit_leaves_nothing_or_the_commit(tmp_path, monkeypatch,
                                                                    kill_at):
    directory = tmp_path / "ckpt"
    ckpt = Checkpoint(directory, "fp")
    assert ckpt.load() is None
    records = ckpt.records((16, 3), np.float32)
    records.write(0, _rows(1))
    faults = Faults(kill_at)
    monkeypatch.setattr(_io, "fault_point", faults)
    killed = True
    try:
        ckpt.commit(*_state(1))
        killed = False
    except Killed:
        pass
    monkeypatch.setattr(_io, "fault_point", lambda name: None)
    ckpt.close()
    with Checkpoint(directory, "fp") as fresh:
        loaded = fresh.load()
        if loaded is None:
            assert killed and _leftovers(directory) == []
            assert not (directory / "records.npy").exists()  # uncommitted: removed
        else:
            _assert_is_commit(loaded, 1, directory)


@pytest.mark.full
def test_a_real_sigkill_mid_commit_leaves_a_resumable_checkpoint(tmp_path):
    """A process commits once, then is SIGKILLed between the new state file's rename and the
    manifest's: the next process gets the lock and the first commit, exactly."""
    directory = tmp_path / "ckpt"
    script = textwrap.dedent(f"""
        import os, signal, sys
        import numpy as np
        sys.path.insert(0, {os.path.dirname(__file__)!r})
        from jaxbandits import _io
        from jaxbandits.checkpoint import Checkpoint
        from test_faults_files import _commit_step
        ckpt = Checkpoint({str(directory)!r}, "fp")
        ckpt.load()
        _commit_step(ckpt, 1)
        calls = []
        def die(name):
            calls.append(name)
            if name == "rename" and calls.count("rename") == 2:  # the manifest's rename
                os.kill(os.getpid(), signal.SIGKILL)
        _io.fault_point = die
        _commit_step(ckpt, 2)
        print("not killed")
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    names = {p.name for p in directory.iterdir()}
    assert "state-2.npz" in names and any(_io.temp_target(n) == "checkpoint.json" for n in names)
    with Checkpoint(directory, "fp") as ckpt:  # the dead process's lock is gone
        _assert_is_commit(ckpt.load(), 1, directory)
        assert _leftovers(directory) == ["state-1.npz"]


# ------------------------------------------------------------------------------------------------
# (b) Corrupt, foreign and mismatched checkpoints.


@pytest.fixture
def committed(tmp_path):
    """A checkpoint directory with two commits (of a `lin-ts` experiment)."""
    directory = tmp_path / "ckpt"
    with Checkpoint(directory, "fp-lints", describe={"agent": "lin-ts", "horizon": 1000,
                                                      "num_runs": 8}) as ckpt:
        ckpt.load()
        _commit_step(ckpt, 1)
        _commit_step(ckpt, 2)
    return directory


def _manifest(directory) -> dict:
    return json.loads((directory / "checkpoint.json").read_text())


def _write_manifest(directory, manifest: dict) -> None:
    """Writes an edited manifest, resealed with its own sha256 (as a careful forger would), so
    that the checks behind the manifest's hash are reached."""
    if isinstance(manifest, dict) and "manifest_sha256" in manifest:
        manifest = dict(manifest, manifest_sha256=checkpoint._manifest_digest(manifest))
    (directory / "checkpoint.json").write_text(json.dumps(manifest))


def _assert_refused_then_replaced(directory, match: str, fingerprint: str = "fp-lints"):
    """``load`` raises a CheckpointError matching ``match``; ``overwrite=True`` starts afresh,
    removing only this module's files, and a new commit then loads."""
    (directory / "notes.txt").write_text("mine")  # a user's file is never removed
    with Checkpoint(directory, fingerprint) as ckpt, pytest.raises(CheckpointError,
                                                                   match=match):
        ckpt.load()
    with Checkpoint(directory, fingerprint, overwrite=True) as ckpt:
        assert ckpt.load() is None
        assert sorted(p.name for p in directory.iterdir()) == ["lock", "notes.txt"]
        _commit_step(ckpt, 1)
    with Checkpoint(directory, fingerprint) as ckpt:
        _assert_is_commit(ckpt.load(), 1, directory)


def test_checkpoint_round_trip_and_resume_of_the_same_experiment(committed):
    with Checkpoint(committed, "fp-lints") as ckpt:
        _assert_is_commit(ckpt.load(), 2, committed)
    with Checkpoint(committed, "fp-lints", overwrite=True) as ckpt:  # same experiment: resumed
        _assert_is_commit(ckpt.load(), 2, committed)
    manifest = _manifest(committed)
    assert manifest["format"] == "jaxbandits-checkpoint" and manifest["version"] == 2
    assert manifest["sequence"] == 2 and manifest["state_file"] == "state-2.npz"
    assert manifest["records"] == {"file": "records.npy", "shape": [16, 3], "dtype": "<f4"}
    assert manifest["meta"] == {"done": 800, "wall_time": 3.0}


def test_truncated_state_file(committed):
    state = committed / "state-2.npz"
    state.write_bytes(state.read_bytes()[:100])
    _assert_refused_then_replaced(committed, r"state-2\.npz has 100 bytes, the manifest says")


def test_altered_state_file_of_the_same_size(committed):
    state = committed / "state-2.npz"
    data = bytearray(state.read_bytes())
    data[len(data) // 2] ^= 0xFF
    state.write_bytes(bytes(data))
    _assert_refused_then_replaced(committed, "does not match its sha256")


@pytest.mark.parametrize("content", [b"garbage, not a zip", b"PK\x03\x04" + b"\0" * 50])
def test_unreadable_npz_behind_a_consistent_manifest(committed, content):
    """Even a manifest whose size and hash match a garbage state file gives a CheckpointError,
    never a raw BadZipFile."""
    (committed / "state-2.npz").write_bytes(content)
    manifest = _manifest(committed)
    manifest.update(state_bytes=len(content), state_sha256=_io.sha256_file(committed /
                                                                          "state-2.npz"))
    _write_manifest(committed, manifest)
    _assert_refused_then_replaced(committed, r"state-2\.npz is not a readable \.npz")


def test_state_file_missing_an_array(committed):
    state = committed / "state-2.npz"
    _, arrays = _state(2)
    del arrays["carry_1"]
    with open(state, "wb") as f:
        _io.write_npz(f, arrays)
    manifest = _manifest(committed)
    manifest.update(state_bytes=state.stat().st_size, state_sha256=_io.sha256_file(state))
    _write_manifest(committed, manifest)
    _assert_refused_then_replaced(committed, r"missing \['carry_1'\]")


def test_missing_state_file(committed):
    (committed / "state-2.npz").unlink()
    _assert_refused_then_replaced(committed, r"state file state-2\.npz is missing")


@pytest.mark.parametrize("content, match", [
    (b"{not json", "checkpoint.json is not valid JSON"),
    (b"\xff\xfe\x00garbage", "checkpoint.json is not valid JSON"),
    (b"[1, 2, 3]", "not a jaxbandits checkpoint manifest"),
    (json.dumps({"format": "jaxbandits-result", "version": 1}).encode(),
     "not a jaxbandits checkpoint manifest .format 'jaxbandits-result'"),
    (json.dumps({"format": "jaxbandits-checkpoint", "version": 3}).encode(), "has version 3"),
    (json.dumps({"format": "jaxbandits-checkpoint", "version": 1}).encode(),
     "malformed: 'fingerprint' should be a string"),
])
def test_garbage_or_foreign_format_manifest(committed, content, match):
    (committed / "checkpoint.json").write_bytes(content)
    _assert_refused_then_replaced(committed, match)


def test_tampered_manifest_fields(committed):
    manifest = _manifest(committed)
    manifest["sequence"] = True
    manifest["state_file"] = "../../etc/passwd"
    _write_manifest(committed, manifest)
    _assert_refused_then_replaced(committed, "'sequence' should be a positive integer")


def test_manifest_array_shapes_disagree_with_state(committed):
    manifest = _manifest(committed)
    manifest["arrays"]["carry_0"]["shape"] = [7, 4]
    _write_manifest(committed, manifest)
    _assert_refused_then_replaced(committed, "array 'carry_0' of state-2.npz is <f4 .7, 3.")


def test_truncated_records_file(committed):
    records = committed / "records.npy"
    records.write_bytes(records.read_bytes()[:150])
    _assert_refused_then_replaced(committed, "records file.*truncated or corrupt")


def test_foreign_fingerprint_names_both_experiments_and_is_never_silently_replaced(committed):
    before = {p.name: p.read_bytes() for p in committed.iterdir() if p.name != "lock"}
    describe = {"agent": "greedy", "horizon": 500, "num_runs": 4}
    with Checkpoint(committed, "fp-greedy", describe=describe) as ckpt:
        with pytest.raises(CheckpointError) as info:
            ckpt.load()
        with pytest.raises(CheckpointError, match="another experiment"):
            ckpt.commit(*_state(1))  # commit checks first too: nothing is written
        with pytest.raises(CheckpointError, match="another experiment"):
            ckpt.records((16, 3), np.float32)
    message = str(info.value)
    assert "agent=lin-ts, horizon=1000, num_runs=8" in message
    assert "agent=greedy, horizon=500, num_runs=4" in message
    assert "overwrite=True" in message and "--overwrite" in message
    assert {p.name: p.read_bytes() for p in committed.iterdir() if p.name != "lock"} == before
    _assert_refused_then_replaced(committed, "another experiment", fingerprint="fp-greedy")


def test_records_of_another_shape_are_refused(committed):
    with Checkpoint(committed, "fp-lints") as ckpt:
        ckpt.load()
        with pytest.raises(CheckpointError, match=r"records <f4|records float32"):
            ckpt.records((32, 3), np.float32)
        assert ckpt.records((16, 3), np.float32).shape == (16, 3)


def test_legacy_two_file_checkpoint_is_refused_not_overwritten(tmp_path):
    directory = tmp_path / "old"
    directory.mkdir()
    np.savez(directory / "carry.npz", np.zeros(3))
    (directory / "meta.json").write_text(json.dumps({"fingerprint": "x", "done": 1200}))
    _assert_refused_then_replaced(directory, "older jaxbandits .carry.npz, meta.json.")


def test_stray_temporaries_of_a_killed_first_commit_are_swept(tmp_path):
    directory = tmp_path / "ckpt"
    directory.mkdir()
    for target in ("checkpoint.json", "state-1.npz", "records.npy"):
        _io.temp_name(directory / target).write_bytes(b"partial")
    (directory / "state-1.npz").write_bytes(b"renamed, but no manifest names it")
    (directory / ".hidden.tmp").write_text("not ours")
    with Checkpoint(directory, "fp") as ckpt:
        assert ckpt.load() is None
    assert sorted(p.name for p in directory.iterdir()) == [".hidden.tmp", "lock"]


def test_commit_checks_its_inputs_before_touching_files(committed):
    before = sorted(p.name for p in committed.iterdir())
    with Checkpoint(committed, "fp-lints") as ckpt:
        ckpt.load()
        with pytest.raises(TypeError):
            ckpt.commit({"done": object()}, {})
        with pytest.raises(ValueError, match="object dtype"):
            ckpt.commit({}, {"x": np.asarray([None, 1])})
    assert sorted(p.name for p in committed.iterdir()) == before
    with Checkpoint(committed, "fp-lints") as ckpt:
        _assert_is_commit(ckpt.load(), 2, committed)


# ------------------------------------------------------------------------------------------------
# (c) Two writers on one directory.


def test_two_writers_in_one_process(tmp_path):
    first = Checkpoint(tmp_path / "ckpt", "fp")
    with pytest.raises(CheckpointError, match="another run .* is writing to this checkpoint"):
        Checkpoint(tmp_path / "ckpt", "fp")
    with pytest.raises(CheckpointError, match="another run"):
        Checkpoint(tmp_path / "ckpt", "other-fp", overwrite=True)  # overwrite does not steal
    first.close()
    first.close()  # idempotent
    with pytest.raises(CheckpointError, match="closed"):
        first.load()
    with Checkpoint(tmp_path / "ckpt", "fp") as second:
        assert second.load() is None


_HOLD = """
import sys, time
from jaxbandits.checkpoint import Checkpoint
ckpt = Checkpoint(sys.argv[1], "fp")
ckpt.load()
print("holding", flush=True)
time.sleep(600)
"""

_TRY = """
import sys
from jaxbandits.checkpoint import Checkpoint, CheckpointError
try:
    Checkpoint(sys.argv[1], "fp")
except CheckpointError as e:
    print(e)
    sys.exit(3)
"""


@pytest.mark.full
def test_second_process_is_refused_while_the_first_holds_the_lock(tmp_path):
    directory = tmp_path / "ckpt"
    with Checkpoint(directory, "fp") as ckpt:
        ckpt.load()
        _commit_step(ckpt, 1)
        proc = subprocess.run([sys.executable, "-c", _TRY, str(directory)], capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode == 3, proc.stderr
        assert f"(process {os.getpid()}) is writing to this checkpoint directory" in proc.stdout
        _commit_step(ckpt, 2)  # the refused process touched nothing
    with Checkpoint(directory, "fp") as ckpt:
        _assert_is_commit(ckpt.load(), 2, directory)


@pytest.mark.full
def test_lock_is_free_after_the_holder_is_killed(tmp_path):
    directory = tmp_path / "ckpt"
    holder = subprocess.Popen([sys.executable, "-c", _HOLD, str(directory)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "holding"
        with pytest.raises(CheckpointError, match=f"process {holder.pid}"):
            Checkpoint(directory, "fp")
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=60)
        holder.stdout.close()
    assert holder.returncode == -signal.SIGKILL
    with Checkpoint(directory, "fp") as ckpt:  # kill -9 leaves no stale lock
        assert ckpt.load() is None


# ------------------------------------------------------------------------------------------------
# (d) An unwritable directory is refused before anything else.


def test_unwritable_checkpoint_directory_fails_at_construction(tmp_path):
    regular = tmp_path / "file"
    regular.write_text("x")
    with pytest.raises(CheckpointError, match="not writable") as info:
        Checkpoint(regular / "ckpt", "fp")
    assert str(regular / "ckpt") in str(info.value)
    with pytest.raises(CheckpointError, match="not a directory"):
        Checkpoint(regular, "fp")  # exists, as a file
    with pytest.raises(ValueError, match="not writable"):
        ResultWriter(regular / "out" / "lin-ts", 4, [1, 2], replay=False)
    with pytest.raises(ValueError, match="not writable"):
        _io.check_writable_dir(regular / "a" / "b")
    assert regular.read_text() == "x" and sorted(p.name for p in tmp_path.iterdir()) == ["file"]


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0,
                    reason="root writes through permission bits")
def test_read_only_directory_fails_at_construction(tmp_path):
    directory = tmp_path / "ro"
    directory.mkdir()
    directory.chmod(0o500)
    try:
        with pytest.raises(CheckpointError, match="not writable"):
            Checkpoint(directory, "fp")
    finally:
        directory.chmod(0o700)


def test_writability_probe_leaves_nothing(tmp_path):
    assert _io.check_writable_dir(tmp_path / "new" / "dir") == tmp_path / "new" / "dir"
    assert list((tmp_path / "new" / "dir").iterdir()) == []


# ------------------------------------------------------------------------------------------------
# _io primitives.


def test_atomic_write_failure_removes_its_temporary_and_keeps_the_old_file(tmp_path):
    target = tmp_path / "x.json"
    target.write_text("old")

    def fail(f):
        f.write(b"half")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        _io.atomic_write(target, fail)
    assert target.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == [
        "x.json"]
    _io.atomic_write_bytes(target, b"new")
    assert target.read_text() == "new"


def test_temporary_names_are_unique_per_process_and_call(tmp_path):
    names = {_io.temp_name(tmp_path / "checkpoint.json").name for _ in range(100)}
    assert len(names) == 100
    assert all(f".{os.getpid()}." in n and _io.temp_target(n) == "checkpoint.json" for n in names)
    assert _io.temp_target("checkpoint.json") is None
    assert _io.temp_target(".x.tmp") is None


def test_npy_rows_create_open_write_read(tmp_path):
    path = tmp_path / "rows.npy"
    with _io.NpyRows.create(path, (10, 2, 3), np.float64) as rows:
        rows.write(4, np.ones((3, 2, 3)))
        rows.write(0, np.arange(6, dtype=np.float32).reshape(1, 2, 3))  # safe cast
        with pytest.raises(ValueError, match="outside"):
            rows.write(9, np.ones((2, 2, 3)))
        with pytest.raises(ValueError, match="rows have shape"):
            rows.write(0, np.ones((1, 3, 2)))
        with pytest.raises(ValueError, match="cannot write complex128"):
            rows.write(0, np.ones((1, 2, 3), complex))
        rows.flush()
    data = _io.read_npy(path)
    assert isinstance(data, np.memmap) and not data.flags.writeable
    np.testing.assert_array_equal(data[0].ravel(), np.arange(6))
    np.testing.assert_array_equal(data[4:7], 1.0)
    np.testing.assert_array_equal(data[7:], 0.0)
    np.testing.assert_array_equal(np.load(path), data)  # a valid .npy for numpy too
    with _io.NpyRows.open(path, (10, 2, 3), np.float64) as rows:
        rows.write(9, np.full((1, 2, 3), 5.0))
    assert _io.read_npy(path, mmap=False)[9, 1, 2] == 5.0
    with pytest.raises(ValueError, match="not float32 of shape"):
        _io.NpyRows.open(path, (10, 2, 3), np.float32)
    with pytest.raises(ValueError, match="object dtypes"):
        _io.NpyRows.create(tmp_path / "o.npy", (2,), object)
    path.write_bytes(path.read_bytes()[:-8])
    with pytest.raises(ValueError, match="truncated or corrupt"):
        _io.NpyRows.open(path, (10, 2, 3), np.float64)
    with pytest.raises(ValueError, match="truncated or corrupt"):
        _io.read_npy(path)
    (tmp_path / "junk.npy").write_bytes(b"junk")
    with pytest.raises(ValueError, match="not a readable .npy"):
        _io.read_npy(tmp_path / "junk.npy")


@pytest.mark.full
@pytest.mark.parametrize("kill_at", range(1, 6))
def test_npy_rows_create_never_leaves_a_partial_file(tmp_path, monkeypatch, kill_at):
    path = tmp_path / "rows.npy"
    monkeypatch.setattr(_io, "fault_point", Faults(kill_at))
    with pytest.raises(Killed):
        _io.NpyRows.create(path, (1000, 4), np.float32)
    monkeypatch.setattr(_io, "fault_point", lambda name: None)
    if path.exists():  # killed after the rename: the file is complete
        assert _io.read_npy(path).shape == (1000, 4)
    else:
        assert all(_io.temp_target(p.name) == "rows.npy" for p in tmp_path.iterdir())


# ------------------------------------------------------------------------------------------------
# (e) Result.save keeps the whole name.


def _result(seed: int = 0, runs: int = 5, replay: bool = False, name: str = "r") -> Result:
    rng = np.random.default_rng(seed)
    steps = np.asarray([1, 3, 10, 30, 100])
    regret = np.cumsum(rng.random((runs, 5)), axis=1)
    accepted = np.cumsum(rng.integers(0, 3, (runs, 5)), axis=1).astype(np.float64)
    return Result(steps=steps, cumulative_regret=regret, cumulative_reward=regret[:, ::-1].copy(),
                  accepted=accepted if replay else None, name=name, wall_time=1.25,
                  env_config={"name": "linear", "dim": 4}, agent_config={"explore_scale": seed},
                  extras={"key": [0, seed]})


def test_dotted_names_stay_distinct(tmp_path):
    sweep = tmp_path / "sweep"
    for i, value in enumerate((0.1, 0.2, 0.5)):
        path = _result(seed=i, name=f"explore_scale={value}").save(sweep / f"explore_scale={value}")
        assert path == sweep / f"explore_scale={value}.npz"
    assert sorted(p.name for p in sweep.iterdir()) == sorted(
        f"explore_scale={v}.{ext}" for v in (0.1, 0.2, 0.5) for ext in ("json", "npz"))
    for i, value in enumerate((0.1, 0.2, 0.5)):
        for given in (f"explore_scale={value}", f"explore_scale={value}.json",
                      f"explore_scale={value}.npz"):
            loaded = Result.load(sweep / given)
            assert loaded.name == f"explore_scale={value}" and loaded.agent_config == {
                "explore_scale": i}
            np.testing.assert_array_equal(loaded.cumulative_regret,
                                          _result(seed=i).cumulative_regret)
    _result(name="v1").save(tmp_path / "exp.v1")
    assert (tmp_path / "exp.v1.npz").exists() and (tmp_path / "exp.v1.json").exists()
    assert not (tmp_path / "exp.npz").exists()
    assert Result.load(tmp_path / "exp.v1").name == "v1"


def test_saved_json_records_format_and_arrays(tmp_path):
    _result(replay=True).save(tmp_path / "r")
    meta = json.loads((tmp_path / "r.json").read_text())
    assert meta["format"] == "jaxbandits-result" and meta["version"] == 2
    assert meta["sha256"]["files"] == {"npz": _io.sha256_file(tmp_path / "r.npz")}
    assert len(meta["sha256"]["fields"]) == 64
    assert meta["storage"] == "npz" and meta["replay"] is True
    assert meta["arrays"] == {
        "steps": {"shape": [5], "dtype": "<i8"},
        "cumulative_regret": {"shape": [5, 5], "dtype": "<f8"},
        "cumulative_reward": {"shape": [5, 5], "dtype": "<f8"},
        "accepted": {"shape": [5, 5], "dtype": "<f8"}}
    loaded = Result.load(tmp_path / "r")
    assert loaded.replay and loaded.final() == _result(replay=True).final()
    assert loaded.extras == {"key": [0, 0]} and loaded.wall_time == 1.25


@pytest.mark.full
@pytest.mark.parametrize("kill_at", range(1, 12))
def test_a_killed_save_never_mixes_old_and_new(tmp_path, monkeypatch, kill_at):
    old, new = _result(seed=1, runs=3, name="old"), _result(seed=2, runs=3, name="new")
    old.save(tmp_path / "r")
    monkeypatch.setattr(_io, "fault_point", Faults(kill_at))
    try:
        new.save(tmp_path / "r")
    except Killed:
        pass
    monkeypatch.setattr(_io, "fault_point", lambda name: None)
    try:
        loaded = Result.load(tmp_path / "r")
    except FileNotFoundError:
        return  # killed after removing the old JSON and before the new one: no result
    expected = {"old": old, "new": new}[loaded.name]
    np.testing.assert_array_equal(loaded.cumulative_regret, expected.cumulative_regret)
    assert loaded.name == "new" or kill_at == 1  # the old one survives only an immediate kill


# ------------------------------------------------------------------------------------------------
# (f) Tampered result files.


def _npz_arrays(path) -> dict[str, np.ndarray]:
    with np.load(path) as data:
        return {k: data[k] for k in data.files}


def _rewrite_npz(path, arrays) -> None:
    with open(path, "wb") as f:
        _io.write_npz(f, arrays)


def _edit_json(path, **changes) -> None:
    meta = json.loads(path.read_text())
    meta.update(changes)
    path.write_text(json.dumps(meta))


@pytest.fixture
def saved(tmp_path):
    _result(replay=True).save(tmp_path / "r")
    return tmp_path / "r"


def test_truncated_npz(saved):
    npz = saved.with_name("r.npz")
    npz.write_bytes(npz.read_bytes()[:300])
    with pytest.raises(ValueError, match=r"r\.npz' cannot be read.*truncated"):
        Result.load(saved)


def test_garbage_npz(saved):
    saved.with_name("r.npz").write_bytes(b"\x93NUMPY garbage")
    with pytest.raises(ValueError, match=r"r\.npz' cannot be read"):
        Result.load(saved)


def test_npz_missing_an_array(saved):
    npz = saved.with_name("r.npz")
    arrays = _npz_arrays(npz)
    del arrays["cumulative_reward"]
    _rewrite_npz(npz, arrays)
    with pytest.raises(ValueError, match=r"missing \['cumulative_reward'\]"):
        Result.load(saved)


def test_npz_missing(saved):
    saved.with_name("r.npz").unlink()
    with pytest.raises(ValueError, match=r"r\.npz' is missing"):
        Result.load(saved)


def test_wrong_dtype_in_npz(saved):
    npz = saved.with_name("r.npz")
    arrays = _npz_arrays(npz)
    arrays["cumulative_regret"] = arrays["cumulative_regret"].astype(np.int64)
    _rewrite_npz(npz, arrays)
    with pytest.raises(ValueError, match="says 'cumulative_regret' is float64.*holds? int64"):
        Result.load(saved)
    json_path = saved.with_name("r.json")  # the JSON "agrees": the dtype itself is refused
    meta = json.loads(json_path.read_text())
    meta["arrays"]["cumulative_regret"]["dtype"] = "<i8"
    json_path.write_text(json.dumps(meta))
    with pytest.raises(ValueError, match="'cumulative_regret' must be floating, got int64"):
        Result.load(saved)


def test_float_steps_are_refused(saved):
    npz, json_path = saved.with_name("r.npz"), saved.with_name("r.json")
    arrays = _npz_arrays(npz)
    arrays["steps"] = arrays["steps"].astype(np.float64)
    _rewrite_npz(npz, arrays)
    meta = json.loads(json_path.read_text())
    meta["arrays"]["steps"]["dtype"] = "<f8"
    json_path.write_text(json.dumps(meta))
    with pytest.raises(ValueError, match="'steps' must be a non-empty .S,. integer array"):
        Result.load(saved)


def test_wrong_shape_in_json(saved):
    json_path = saved.with_name("r.json")
    meta = json.loads(json_path.read_text())
    meta["arrays"]["cumulative_regret"]["shape"] = [6, 5]
    json_path.write_text(json.dumps(meta))
    with pytest.raises(ValueError, match=r"says 'cumulative_regret' is float64 of shape \(6, 5\)"
                                         r".*\(5, 5\) .tampered"):
        Result.load(saved)


def test_inconsistent_shapes_and_steps(saved):
    npz, json_path = saved.with_name("r.npz"), saved.with_name("r.json")
    arrays = _npz_arrays(npz)
    arrays["steps"] = arrays["steps"][::-1].copy()
    _rewrite_npz(npz, arrays)
    with pytest.raises(ValueError, match="'steps' must be positive and increasing"):
        Result.load(saved)
    arrays["steps"] = np.asarray([1, 3, 10, 30])
    _rewrite_npz(npz, arrays)
    meta = json.loads(json_path.read_text())
    meta["arrays"]["steps"]["shape"] = [4]
    json_path.write_text(json.dumps(meta))
    with pytest.raises(ValueError, match=r"'cumulative_regret' must be \(runs, 4\)"):
        Result.load(saved)


def test_replay_flag_and_arrays_must_agree(saved):
    _edit_json(saved.with_name("r.json"), replay=False)
    with pytest.raises(ValueError, match="'arrays' must list"):
        Result.load(saved)


@pytest.mark.parametrize("content, match", [
    (b"{truncated", "is not valid JSON"),
    (b"[]", "is not a jaxbandits result"),
    (json.dumps({"format": "jaxbandits-checkpoint", "version": 1}).encode(),
     "it is a checkpoint manifest"),
    (json.dumps({"format": "something-else"}).encode(), "format 'something-else'"),
    (json.dumps({"format": "jaxbandits-result", "version": 7}).encode(), "has version 7"),
    (json.dumps({"format": "jaxbandits-result", "version": 1, "name": "x"}).encode(),
     "has the wrong keys: missing"),
])
def test_foreign_or_garbage_json(saved, content, match):
    saved.with_name("r.json").write_bytes(content)
    with pytest.raises(ValueError, match=match):
        Result.load(saved)


def test_wrong_metadata_types(saved):
    _edit_json(saved.with_name("r.json"), wall_time="fast")
    with pytest.raises(ValueError, match="'wall_time' must be int or float, got 'fast'"):
        Result.load(saved)


def test_checkpoint_manifest_given_to_result_load(committed):
    with pytest.raises(ValueError, match="checkpoint manifest"):
        Result.load(committed / "checkpoint.json")


def test_missing_result_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError, match="no result named"):
        Result.load(tmp_path / "nothing")


def test_save_refuses_an_inconsistent_result(tmp_path):
    bad = Result(steps=np.asarray([1, 2]), cumulative_regret=np.zeros((3, 3)),
                 cumulative_reward=np.zeros((3, 3)))
    with pytest.raises(ValueError, match=r"must be \(runs, 2\)"):
        bad.save(tmp_path / "bad")
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------------------------------------
# (g) ResultWriter: block-by-block results larger than memory.


def test_result_writer_round_trip(tmp_path):
    reference = _result(seed=3, runs=10, replay=True, name="lin-ts")
    writer = ResultWriter(tmp_path / "out" / "explore_scale=0.1", 10, reference.steps,
                          replay=True, dtype=np.float64)
    assert not (tmp_path / "out" / "explore_scale=0.1.json").exists()
    for start in (6, 0, 3):  # any order
        stop = {0: 3, 3: 6, 6: 10}[start]
        writer.write(start, reference.cumulative_regret[start:stop],
                     reference.cumulative_reward[start:stop], reference.accepted[start:stop])
    with pytest.raises(ValueError, match="accepted_rows must be given"):
        writer.write(0, reference.cumulative_regret[:1], reference.cumulative_reward[:1])
    with pytest.raises(TypeError, match="unknown result fields"):
        writer.finish(colour="blue")
    result = writer.finish(name="lin-ts", wall_time=1.25, env_config=reference.env_config,
                           agent_config=reference.agent_config, extras=reference.extras)
    for array in (result.cumulative_regret, result.cumulative_reward, result.accepted):
        assert isinstance(array, np.memmap) and not array.flags.writeable
    for field in ("steps", "cumulative_regret", "cumulative_reward", "accepted"):
        np.testing.assert_array_equal(getattr(result, field), getattr(reference, field))
    assert result.name == "lin-ts" and result.replay and result.final() == reference.final()
    loaded = Result.load(tmp_path / "out" / "explore_scale=0.1")
    assert json.loads((tmp_path / "out" / "explore_scale=0.1.json").read_text())[
        "storage"] == "npy"
    assert isinstance(loaded.cumulative_regret, np.memmap)
    assert loaded.agent_config == reference.agent_config
    with pytest.raises(ValueError, match="closed"):
        writer.write(0, reference.cumulative_regret[:1], reference.cumulative_reward[:1],
                     reference.accepted[:1])
    # tampering with the npy form is caught too
    regret = tmp_path / "out" / "explore_scale=0.1.regret.npy"
    regret.write_bytes(regret.read_bytes()[:-4])
    with pytest.raises(ValueError, match=r"regret\.npy' has .* bytes.*truncated"):
        Result.load(tmp_path / "out" / "explore_scale=0.1")
    regret.unlink()
    with pytest.raises(ValueError, match=r"regret\.npy' is missing"):
        Result.load(tmp_path / "out" / "explore_scale=0.1")


def test_unfinished_writer_leaves_no_loadable_result(tmp_path):
    _result(seed=1, runs=4).save(tmp_path / "r")
    with ResultWriter(tmp_path / "r", 4, [1, 2], replay=False) as writer:
        writer.write(0, np.ones((4, 2)), np.ones((4, 2)))
    # a writer that never finished replaced the old result by nothing, not by a mix
    with pytest.raises(FileNotFoundError):
        Result.load(tmp_path / "r")
    with pytest.raises(ValueError, match="positive and increasing"):
        ResultWriter(tmp_path / "s", 4, [2, 1], replay=False)
    with pytest.raises(ValueError, match="num_runs must be a positive integer"):
        ResultWriter(tmp_path / "s", True, [1, 2], replay=False)


def _rss_bytes() -> int:
    try:
        import psutil
    except ImportError:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return psutil.Process().memory_info().rss


def _anon_rss_bytes() -> int | None:
    """Anonymous resident memory (heap), without file-backed pages of memory maps."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def test_result_writer_memory_stays_flat(tmp_path):
    """Writing 2 x 200 MB of curves in 4 MB blocks grows the process by far less than a
    curve; the statistics of the memory-mapped result stay within a few blocks of heap."""
    runs, width, block = 500_000, 100, 10_000  # 200 MB per float32 curve
    regret = np.ones((block, width), np.float32)
    reward = np.full((block, width), 2.0, np.float32)
    writer = ResultWriter(tmp_path / "big", runs, np.arange(1, width + 1), replay=False)
    writer.write(0, regret, reward)
    before = _rss_bytes()
    for start in range(block, runs, block):
        writer.write(start, regret, reward)
    grown = _rss_bytes() - before
    assert grown < 50 * 2**20, f"RSS grew by {grown / 2**20:.0f} MiB while writing 400 MB"
    result = writer.finish(name="big")
    anon = _anon_rss_bytes()
    mean, half = result.final()
    np.testing.assert_array_equal(result.mean("reward"), 2.0)
    assert mean == 1.0 and half == 0.0
    if anon is not None:
        assert _anon_rss_bytes() - anon < 100 * 2**20  # blocks of 32 MiB, not 400 MB of float64


# ------------------------------------------------------------------------------------------------
# (h) Statistics on memory-mapped results equal the in-memory ones.


@pytest.mark.parametrize("metric", ["regret", "reward", "ctr", "accepted"])
def test_statistics_of_memmapped_result_match_in_memory(tmp_path, monkeypatch, metric):
    rng = np.random.default_rng(7)
    runs, steps = 1_003, np.asarray([1, 2, 5, 10, 50, 100])
    regret = np.cumsum(rng.gamma(2.0, 3.0, (runs, 6)), axis=1).astype(np.float32) + 1e4
    reward = np.cumsum(rng.random((runs, 6)), axis=1).astype(np.float32)
    accepted = np.cumsum(rng.integers(0, 2, (runs, 6)), axis=1).astype(np.float32)
    in_memory = Result(steps=steps, cumulative_regret=regret, cumulative_reward=reward,
                       accepted=accepted)
    writer = ResultWriter(tmp_path / "m", runs, steps, replay=True)
    for start in range(0, runs, 100):
        writer.write(start, regret[start:start + 100], reward[start:start + 100],
                     accepted[start:start + 100])
    mapped = writer.finish()
    assert isinstance(mapped.cumulative_regret, np.memmap)

    wide = {"regret": regret, "reward": reward, "accepted": accepted}
    wide = {k: v.astype(np.float64) for k, v in wide.items()}
    wide["ctr"] = wide["reward"] / np.maximum(wide["accepted"], 1.0)
    values = wide[metric]
    mean, sd = values.mean(axis=0), values.std(axis=0, ddof=1)
    half = stats.t.ppf(0.975, runs - 1) * sd / np.sqrt(runs)
    monkeypatch.setattr(results, "_BLOCK_BYTES", 8 * 6 * 2 * 37)  # many blocks of 37 runs
    for result in (in_memory, mapped):
        np.testing.assert_allclose(result.mean(metric), mean, rtol=1e-12)
        lower, upper = result.confidence_band(metric)
        np.testing.assert_allclose(lower, mean - half, rtol=1e-12)
        np.testing.assert_allclose(upper, mean + half, rtol=1e-12)
        final_mean, final_half = result.final(metric)
        assert final_mean == pytest.approx(mean[-1], rel=1e-12)
        assert final_half == pytest.approx(half[-1], rel=1e-9)
    # and the float32 computation numpy would do in memory agrees to float32 precision
    np.testing.assert_allclose(mapped.mean(metric), values.astype(np.float32).mean(axis=0),
                               rtol=1e-5)


def test_statistics_of_one_run_and_of_blocks_of_one(monkeypatch):
    one = _result(runs=1)
    lower, upper = one.confidence_band()
    np.testing.assert_array_equal(lower, one.cumulative_regret[0])
    assert one.final() == (float(one.cumulative_regret[0, -1]), 0.0)
    monkeypatch.setattr(results, "_BLOCK_BYTES", 1)  # one run per block
    many = _result(runs=9)
    np.testing.assert_allclose(many.mean(), many.cumulative_regret.mean(axis=0), rtol=1e-13)
    np.testing.assert_allclose(many.confidence_band()[1] - many.mean(),
                               stats.t.ppf(0.975, 8) * many.cumulative_regret.std(axis=0,
                                                                                  ddof=1) / 3,
                               rtol=1e-12)
