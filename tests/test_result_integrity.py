"""Saved results cannot lie: content hashes checked on load, one writer at a time, clear errors
on bad result paths and failed writes.

File-level and pure NumPy except where a test says so; the lock tests use real processes.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from jaxbandits import _io
from jaxbandits.results import Result, ResultWriter, is_result_file, lock_result

STEPS = np.asarray([1, 2, 5])


def _result(seed: int = 0, runs: int = 3, name: str = "lin-ts") -> Result:
    rng = np.random.default_rng(seed)
    regret = np.cumsum(rng.random((runs, 3)), axis=1).astype(np.float32)
    return Result(steps=STEPS, cumulative_regret=regret, cumulative_reward=-regret, name=name,
                  extras={"key": [0, seed]})


def _stream(path, result: Result) -> Result:
    writer = ResultWriter(path, result.num_runs, result.steps, replay=False)
    writer.write(0, result.cumulative_regret, result.cumulative_reward)
    return writer.finish(name=result.name, extras=result.extras)


# ------------------------------------------------------------------------------ content hashes


def _flip_a_value(stem, other):
    file = stem.with_name(stem.name + ".regret.npy")
    data = bytearray(file.read_bytes())
    data[-1] ^= 1  # the last float's lowest mantissa bit: same shape, same header
    file.write_bytes(bytes(data))
    return file.name


def _inject_nan(stem, other):
    file = stem.with_name(stem.name + ".regret.npy")
    array = np.load(file)
    array[1, 1] = np.nan
    np.save(file, array)
    return file.name


def _swap_curves(stem, other):
    regret, reward = (stem.with_name(stem.name + s) for s in (".regret.npy", ".reward.npy"))
    tmp = regret.with_name("swap")
    regret.rename(tmp)
    reward.rename(regret)
    tmp.rename(reward)
    return "regret.npy"


def _symlink_a_curve(stem, other):
    regret = stem.with_name(stem.name + ".regret.npy")
    regret.unlink()
    regret.symlink_to(stem.with_name(stem.name + ".reward.npy"))
    return regret.name


def _another_seeds_arrays(stem, other):
    for suffix in (".regret.npy", ".reward.npy"):
        shutil.copyfile(other.with_name(other.name + suffix), stem.with_name(stem.name + suffix))
    return "regret.npy"


def _edit_the_key(stem, other):
    path = stem.with_name(stem.name + ".json")
    meta = json.loads(path.read_text())
    meta["extras"]["key"] = [0, 1]  # pairs it with seed 1's results
    path.write_text(json.dumps(meta))
    return "was edited"


@pytest.mark.parametrize("tamper", [_flip_a_value, _inject_nan, _swap_curves, _symlink_a_curve,
                                    _another_seeds_arrays, _edit_the_key])
def test_a_tampered_streamed_result_is_refused_naming_the_file(tmp_path, tamper):
    stem, other = tmp_path / "a", tmp_path / "b"
    _stream(stem, _result(seed=0))
    _stream(other, _result(seed=1))
    Result.load(stem)  # intact: loads
    what = tamper(stem, other)
    with pytest.raises(ValueError, match=what):
        Result.load(stem)


def test_a_saved_npz_of_another_seed_or_an_edited_field_is_refused(tmp_path):
    _result(seed=0).save(tmp_path / "a")
    _result(seed=1).save(tmp_path / "b")
    shutil.copyfile(tmp_path / "b.npz", tmp_path / "a.npz")
    with pytest.raises(ValueError, match=r"a\.npz' does not match the sha256"):
        Result.load(tmp_path / "a")
    _result(seed=0).save(tmp_path / "a")
    meta = json.loads((tmp_path / "a.json").read_text())
    meta["name"] = "lin-ucb"
    (tmp_path / "a.json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match=r"a\.json' was edited"):
        Result.load(tmp_path / "a")


def test_hashes_are_recorded_for_every_file_and_version_one_still_loads(tmp_path):
    loaded = _stream(tmp_path / "a", _result())
    meta = json.loads((tmp_path / "a.json").read_text())
    assert meta["version"] == 2
    assert meta["sha256"]["files"] == {
        name: _io.sha256_file(tmp_path / f"a.{name}")
        for name in ("regret.npy", "reward.npy", "steps.npy")}
    np.testing.assert_array_equal(loaded.cumulative_regret, _result().cumulative_regret)
    # a version-1 file (no hashes) loads as before; a version-1 file claiming hashes does not
    del meta["sha256"]
    meta["version"] = 1
    (tmp_path / "a.json").write_text(json.dumps(meta))
    np.testing.assert_array_equal(Result.load(tmp_path / "a").cumulative_regret,
                                  _result().cumulative_regret)
    meta["sha256"] = {"fields": "0", "files": {}}
    (tmp_path / "a.json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match="unexpected \\['sha256'\\]"):
        Result.load(tmp_path / "a")


# ------------------------------------------------------------------------------ one writer


_HOLD = textwrap.dedent("""
    import sys
    import numpy as np
    from jaxbandits.results import ResultWriter, lock_result
    stem, how = sys.argv[1], sys.argv[2]
    if how == "lock":
        held = lock_result(stem)
    else:
        held = ResultWriter(stem, 2, np.asarray([1, 2]), replay=False)
    print("ready", flush=True)
    sys.stdin.readline()
""")


def _holder(stem, how):
    child = subprocess.Popen([sys.executable, "-c", _HOLD, str(stem), how],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "ready"
    return child


def _end(child):
    child.stdin.close()
    child.wait(timeout=60)


@pytest.mark.full  # a second process
def test_a_second_process_is_refused_even_after_the_lock_file_is_removed(tmp_path):
    stem = tmp_path / "r"
    child = _holder(stem, "writer")
    try:
        with pytest.raises(ValueError, match=r"being written by another process \(pid \d+\)"):
            ResultWriter(stem, 2, STEPS[:2], replay=False)
        with pytest.raises(ValueError, match="being written by another process"):
            _result().save(stem)
        (tmp_path / ".r.lock").unlink()  # a user cleaning up under a running writer
        with pytest.raises(ValueError, match="being written by another writer"):
            ResultWriter(stem, 2, STEPS[:2], replay=False)
    finally:
        _end(child)
    _stream(stem, _result())  # free once the holder is gone
    assert not (tmp_path / ".r.lock").exists()


@pytest.mark.full  # a second process
def test_simulate_with_the_save_to_of_another_process_is_refused(tmp_path):
    """Two ``simulate`` calls with one ``save_to``: the second is refused, the first's files
    stay (jax: one tiny compiled run)."""
    import jaxbandits as jb
    from jaxbandits.simulate import trace_counts

    stem = tmp_path / "r"
    child = _holder(stem, "lock")  # what a runner holds from before compiling
    traced = dict(trace_counts())
    try:
        with pytest.raises(ValueError, match="being written by another process"):
            jb.simulate(jb.make_env("linear", dim=2, num_arms=3), jb.make_agent("greedy"), 0,
                        horizon=4, num_runs=2, save_to=stem, progress=False)
        assert trace_counts() == traced  # refused before anything was compiled
    finally:
        _end(child)
    assert not (tmp_path / "r.json").exists()


def test_the_lock_is_reentrant_in_one_process_and_released_by_the_writer(tmp_path):
    stem = tmp_path / "r"
    with lock_result(stem):
        _stream(stem, _result())  # the writer takes it again
        assert (tmp_path / ".r.lock").exists()
    assert not (tmp_path / ".r.lock").exists()
    with lock_result(stem) as early:  # taken before compiling; its file removed meanwhile
        (tmp_path / ".r.lock").unlink()
        _stream(stem, _result())  # the writer locks a new file, seen by other processes
        assert _io.flock_held(tmp_path / ".r.lock")  # still held: the early lock is not over
    assert not (tmp_path / ".r.lock").exists() and early._released
    writer = ResultWriter(stem, 2, STEPS[:2], replay=False)
    assert _io.flock_held(tmp_path / ".r.lock")
    with pytest.raises(ValueError, match="being written by another writer"):
        ResultWriter(stem, 2, STEPS[:2], replay=False)  # two writers in one process
    writer.close()
    _stream(stem, _result())


# ------------------------------------------------------------------------------ result paths


def test_a_folder_or_dot_names_are_not_result_names(tmp_path):
    (tmp_path / "runs").mkdir()
    for bad in (tmp_path / "runs", tmp_path / "runs" / "..", tmp_path / "runs" / "."):
        with pytest.raises(ValueError, match="existing folder|must be a file name"):
            ResultWriter(bad, 2, STEPS[:2], replay=False)
        with pytest.raises(ValueError, match="existing folder|must be a file name"):
            _result().save(bad)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs"]
    assert list((tmp_path / "runs").iterdir()) == []


def test_compare_labels_dot_and_dot_dot_never_write_outside_the_folder(tmp_path):
    import jaxbandits as jb

    env, agent = jb.make_env("linear", dim=2, num_arms=3), jb.make_agent("greedy")
    (tmp_path / "out").mkdir()  # as the command line makes it (the runner maps labels to names)
    for label in (".", ".."):
        with pytest.raises(ValueError, match="existing folder|must be a file name|names a folder"):
            jb.compare(env, {label: agent}, 0, 4, 2, save_to=tmp_path / "out", progress=False)
    assert [p.name for p in tmp_path.iterdir()] == ["out"]
    assert list((tmp_path / "out").iterdir()) == []


def test_saving_or_plotting_inside_a_file_names_the_path(tmp_path):
    from jaxbandits.plotting import plot_regret

    (tmp_path / "file.txt").write_text("mine")
    with pytest.raises(ValueError, match="file.txt.*not writable"):
        _result().save(tmp_path / "file.txt" / "r")
    with pytest.raises(ValueError, match="file.txt.*not writable"):
        ResultWriter(tmp_path / "file.txt" / "r", 2, STEPS[:2], replay=False)
    with pytest.raises(ValueError, match=r"cannot write .*file\.txt/x\.png"):
        plot_regret(_result(), tmp_path / "file.txt" / "x.png")
    with pytest.raises(ValueError, match="is a folder"):
        plot_regret(_result(), tmp_path)
    assert (tmp_path / "file.txt").read_text() == "mine"


# ------------------------------------------------------------------------------ failed writes


@pytest.mark.parametrize("code, kind", [(errno.ENOSPC, OSError), (errno.EFBIG, OSError),
                                        (errno.EPERM, PermissionError)])
def test_failed_writes_name_the_target_file_not_a_temporary(tmp_path, monkeypatch, code, kind):
    def fail(*args, **kwargs):
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, "replace", fail)  # disk full / size limit / immutable at the rename
    with pytest.raises(kind, match=r"cannot write '.*/r\.npz'") as info:
        _result().save(tmp_path / "r")
    assert info.value.errno == code and ".tmp" not in str(info.value)
    monkeypatch.undo()
    writer = ResultWriter(tmp_path / "s", 3, STEPS, replay=False)
    monkeypatch.setattr(os, "pwrite", fail)  # a block of rows that does not fit
    with pytest.raises(kind, match=r"cannot write '.*/s\.regret\.npy'"):
        writer.write(0, _result().cumulative_regret, _result().cumulative_reward)
    writer.close()
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_is_result_file_judges_by_content(tmp_path):
    _result().save(tmp_path / "r")
    (tmp_path / "config.json").write_text(json.dumps({"format": "mine", "lr": 0.1}))
    (tmp_path / "broken.json").write_text('{"format": "jaxbandits-res')
    assert is_result_file(tmp_path / "r.json") and is_result_file(tmp_path / "broken.json")
    assert not is_result_file(tmp_path / "config.json")


@pytest.mark.parametrize("label", [".", ".."])
def test_a_compare_label_that_names_a_folder_is_refused(tmp_path, label):
    import jaxbandits as jb

    with pytest.raises(ValueError, match="names a folder"):
        jb.compare(jb.make_env("linear", dim=2, num_arms=3), {label: jb.make_agent("greedy")}, 0,
                   horizon=4, num_runs=2, save_to=tmp_path / "new", progress=False)
    assert list(tmp_path.iterdir()) in ([], [tmp_path / "new"])
    assert not any(tmp_path.rglob("*.json"))
