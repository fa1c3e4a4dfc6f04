"""The command line's results folders: one command at a time, ``--overwrite`` removes only what
jaxbandits wrote, the resume record holds what fixes the numbers, ``compare`` / ``plot`` never
drop a corrupt result, and bad options or paths are clear errors naming them.

``jb.compare`` is replaced by a fake that saves one tiny result where the real one would
(nothing is compiled); one test runs a second process.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import jaxbandits as jb
from jaxbandits import cli
from jaxbandits.cli import main
from jaxbandits.results import Result

ARGS = ["run", "--agents", "lin-ts", "--horizon", "10", "--runs", "2", "--no-progress"]


def _tiny(name: str = "lin-ts", seed: int = 0) -> Result:
    regret = np.cumsum(np.random.default_rng(seed).random((2, 3)), axis=1)
    return Result(steps=np.asarray([1, 5, 10]), cumulative_regret=regret,
                  cumulative_reward=-regret, name=name, extras={"key": [0, 0]})


@pytest.fixture
def fake_compare(monkeypatch, tmp_path):
    """``jb.compare`` saving one tiny result per agent into ``save_to`` (as the runner does);
    the plot writes a stub PNG."""
    calls = []

    def compare(env, agents, key, horizon, num_runs, save_to=None, **kwargs):
        calls.append(kwargs)
        results = {name: _tiny(name) for name in agents}
        for name, result in results.items():
            result.save(save_to / name)
        return results

    monkeypatch.setattr(jb, "compare", compare)
    monkeypatch.setattr(jb, "plot_regret", lambda results, path, **kw: path.write_bytes(b"png"))
    monkeypatch.chdir(tmp_path)
    return calls


def test_overwrite_removes_only_the_files_jaxbandits_wrote(fake_compare, tmp_path):
    out = tmp_path / "out"
    assert main(ARGS + ["--out", str(out)]) == 0
    record = json.loads((out / cli.FILES_RECORD).read_text())
    assert record["written"] == ["lin-ts.json", "lin-ts.npz", "regret.png", "summary.md"]
    (out / "config.json").write_text('{"lr": 0.1}')  # the user's own files
    (out / "notes.md").write_text("mine")
    assert main(ARGS + ["--out", str(out), "--agents", "lin-ucb", "--overwrite"]) == 0
    assert (out / "config.json").read_text() == '{"lr": 0.1}'
    assert (out / "notes.md").read_text() == "mine"
    assert not (out / "lin-ts.json").exists() and Result.load(out / "lin-ucb").name == "lin-ucb"
    # the user's files are not results: compare skips them and reads the one result
    assert main(["compare", str(out)]) == 0


def test_overwrite_after_a_killed_run_removes_what_it_had_written(fake_compare, tmp_path,
                                                                  monkeypatch):
    out = tmp_path / "out"
    assert main(ARGS + ["--out", str(out)]) == 0
    (out / "config.json").write_text("{}")

    def killed(*args, save_to=None, **kwargs):
        _tiny().save(save_to / "half")
        raise KeyboardInterrupt  # killed after writing one result

    monkeypatch.setattr(jb, "compare", killed)
    with pytest.raises(KeyboardInterrupt):
        main(ARGS + ["--out", str(out), "--overwrite"])
    assert (out / "half.json").exists()
    monkeypatch.undo()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(jb, "plot_regret", lambda results, path, **kw: path.write_bytes(b"png"))
    monkeypatch.setattr(jb, "compare", lambda *a, **k: {})
    assert main(ARGS + ["--out", str(out), "--overwrite"]) == 0
    assert not (out / "half.json").exists() and (out / "config.json").exists()


_SECOND = textwrap.dedent("""
    import sys
    import jaxbandits as jb
    from jaxbandits.cli import main

    def compare(*args, **kwargs):  # compiling: the folder is already locked
        print("ready", flush=True)
        sys.stdin.readline()
        return {}

    jb.compare = compare
    jb.plot_regret = lambda results, path, **kw: path.write_bytes(b"png")
    sys.exit(main(sys.argv[1:]))
""")


@pytest.mark.full  # a second process
def test_a_second_run_into_the_same_out_is_refused(fake_compare, tmp_path, capsys):
    out = tmp_path / "out"
    first = subprocess.Popen([sys.executable, "-c", _SECOND, *ARGS, "--out", str(out)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        while (line := first.stdout.readline()) and line.strip() != "ready":
            pass  # the announcement, then "ready" once it would compile
        assert line.strip() == "ready"
        assert main(ARGS + ["--out", str(out)]) == 2
        assert "being written by another process" in capsys.readouterr().err
        assert main(ARGS + ["--out", str(out), "--overwrite"]) == 2  # not even with it
    finally:
        first.stdin.close()
        assert first.wait(timeout=120) == 0
    assert (out / "summary.md").exists() and not (out / "lin-ts.json").exists()


def test_the_resume_record_holds_every_option_and_the_backend_not_the_device_count(
        fake_compare, tmp_path, capsys):
    out, ckpt = tmp_path / "out", tmp_path / "ckpt"
    command = ARGS + ["--out", str(out), "--checkpoint", str(ckpt), "--cpu-devices", "1"]
    assert main(command) == 0
    record = json.loads((out / cli.RESUME_MARKER).read_text())
    assert "x64" in record and record["options"]["seed"] == 0
    # checkpoints resume on any device count (tests/test_resume_devices.py)
    assert "devices" not in record and "cpu_devices" not in record["options"]
    assert main(command) == 0  # the same command resumes into it
    assert main(command + ["--chunk-size", "5"]) == 2
    assert "--chunk-size: None then 5" in capsys.readouterr().err
    backend = record["backend"]
    record["backend"] = "tpu"  # as written on another backend (whose default blocks differ)
    (out / cli.RESUME_MARKER).write_text(json.dumps(record))
    assert main(command) == 2
    assert f"backend: 'tpu' then {backend!r}" in capsys.readouterr().err
    assert main(command + ["--overwrite"]) == 0


@pytest.mark.parametrize("command", ["compare", "plot"])
def test_compare_and_plot_never_skip_a_corrupt_result(tmp_path, capsys, command):
    folder = tmp_path / "format-tests"  # "format" in the path once made errors skippable
    folder.mkdir()
    _tiny("a").save(folder / "a")
    _tiny("b").save(folder / "b")
    meta = json.loads((folder / "b.json").read_text())
    meta["version"] = 99
    (folder / "b.json").write_text(json.dumps(meta))
    assert main([command, str(folder), "--metric", "regret"]) == 2
    assert "b.json' has version 99" in capsys.readouterr().err
    (folder / "b.json").write_text('{"format": "jaxbandits-res')  # truncated
    assert main([command, str(folder)]) == 2
    assert "b.json' is not valid JSON" in capsys.readouterr().err


def test_compare_on_an_array_file_or_a_folder_json_is_a_clear_error(tmp_path, capsys):
    writer = jb.ResultWriter(tmp_path / "r", 2, np.asarray([1, 2]), replay=False)
    writer.write(0, np.ones((2, 2)), np.ones((2, 2)))
    writer.finish(name="r")
    assert main(["compare", str(tmp_path / "r.regret.npy")]) == 2
    assert "is one array of a saved result" in capsys.readouterr().err
    (tmp_path / "odd.json").mkdir()
    assert main(["compare", str(tmp_path / "odd")]) == 2
    assert "not a file" in capsys.readouterr().err


def test_plot_into_a_file_names_the_path(tmp_path, capsys):
    _tiny().save(tmp_path / "r")
    (tmp_path / "file.txt").write_text("mine")
    assert main(["plot", str(tmp_path / "r"), "--out", str(tmp_path / "file.txt" / "p.png")]) == 2
    assert "file.txt/p.png" in capsys.readouterr().err


@pytest.mark.parametrize("extra, match", [
    (["--seed", str(2**64)], "--seed must be a 64-bit integer"),
    (["--cpu-devices", "0"], "--cpu-devices must be a positive integer"),
    (["--compilation-cache", "FILE"], "--compilation-cache FILE is an existing file"),
])
def test_bad_options_name_the_option(fake_compare, tmp_path, capsys, extra, match):
    (tmp_path / "FILE").write_text("not a folder")
    assert main(ARGS + ["--out", str(tmp_path / "o")] + extra) == 2
    assert match in capsys.readouterr().err
    assert not fake_compare


def test_a_repeated_grid_field_is_an_error_not_a_dropped_list(tmp_path, capsys, monkeypatch):
    import jaxbandits as jb

    calls = []
    monkeypatch.setattr(jb, "sweep", lambda *a, **k: calls.append(a))
    command = ["sweep", "--agent", "lin-ucb", "--grid", "agent.explore_scale=0.1,0.2",
               "--grid", "agent.explore_scale=1", "--horizon", "5", "--runs", "1",
               "--out", str(tmp_path / "o")]
    assert main(command) == 2
    assert "--grid agent.explore_scale is given twice" in capsys.readouterr().err
    assert not calls
