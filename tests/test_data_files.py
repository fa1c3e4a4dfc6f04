"""The data package: old import paths, where files are looked for, and bad data files.

Every bad file here is tiny and written to ``tmp_path``; nothing is compiled.
"""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import numpy as np
import pytest

import jaxbandits as jb
import jaxbandits.data as data
from jaxbandits.data import DataFileError, DataNotFoundError, load_dataset
from jaxbandits.envs import datasets, replay, text

LIBRARY = Path(jb.__file__).resolve().parent


def _rows(count: int, classes, width: int = 9, sep: str = " ") -> list[str]:
    """``count`` rows of ``width`` integer features and a class, cycling through ``classes``."""
    rng = np.random.default_rng(0)
    return [sep.join(str(v) for v in rng.integers(-5, 90, width)) + sep + classes[i % len(classes)]
            for i in range(count)]


def _write(path: Path, lines: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


# ------------------------------------------------------------------------------------------------
# Import paths and the package's layout.


def test_old_import_paths_are_the_data_package_names():
    for name in datasets.__all__:
        assert hasattr(datasets, name), name
        if hasattr(data, name):
            assert getattr(datasets, name) is getattr(data, name), name
    for module in (replay, text):
        assert all(hasattr(module, name) for name in module.__all__)
    assert jb.envs.DataNotFoundError is data.DataNotFoundError
    assert jb.envs.load_dataset is data.load_dataset and jb.envs.make_table is data.make_table
    assert issubclass(DataFileError, ValueError)  # the command line reports it as a usage error


def test_data_modules_are_small_and_import_no_environment():
    for file in (LIBRARY / "data").glob("*.py"):
        source = file.read_text()
        assert len(source.splitlines()) < 500, file.name
        assert "jaxbandits.envs" not in re.sub(r'"""[\s\S]*?"""', "", source), file.name


def test_library_source_names_no_shared_folder():
    """The library never looks beside the repository (``../shared/data``): only the tests and
    ``.ci/run`` know that folder, through ``JAXBANDITS_DATA``."""
    # a path built with a "shared" part ("shared/data", ... / "shared", "shared" / ...), not the
    # word itself (the shared context vector of the disjoint model is a field named "shared")
    pattern = re.compile(r"""shared/data|/\s*["']shared["']|["']shared["']\)?\s*/|REPO_ROOT""")
    offenders = [str(f.relative_to(LIBRARY)) for f in LIBRARY.rglob("*.py")
                 if pattern.search(f.read_text())]
    assert not offenders


# ------------------------------------------------------------------------------------------------
# Where files are looked for.


@pytest.fixture
def no_data_folders(tmp_path, monkeypatch):
    """No JAXBANDITS_DATA, and an empty home, per-user folder and cache under ``tmp_path``."""
    monkeypatch.delenv("JAXBANDITS_DATA", raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.delenv("JAXBANDITS_CACHE", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def test_missing_file_names_the_variable_and_the_per_user_folder(no_data_folders):
    user = no_data_folders / ".local" / "share" / "jaxbandits"
    assert data.search_dirs() == [user, no_data_folders / ".cache" / "jaxbandits"]
    with pytest.raises(DataNotFoundError) as err:
        load_dataset("shuttle")
    message = str(err.value)
    assert "JAXBANDITS_DATA" in message and f"per-user data folder {user}" in message
    assert "shuttle.trn" in message and "download('shuttle')" in message


def test_search_order_variable_then_user_folder_then_cache(tmp_path, no_data_folders,
                                                           monkeypatch):
    name = "data_banknote_authentication.txt"
    rows = _rows(6, "01", width=4, sep=",")
    cached = _write(no_data_folders / ".cache" / "jaxbandits" / name, rows)
    assert data.find_data_file("banknote") == cached
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    mine = _write(tmp_path / "xdg" / "jaxbandits" / "uci" / name, rows)
    assert data.find_data_file("banknote") == mine
    first, second = tmp_path / "a", tmp_path / "b"
    given = _write(second / name, rows)
    monkeypatch.setenv("JAXBANDITS_DATA", f"{first}:{second}")
    assert data.search_dirs()[:3] == [first, second, tmp_path / "xdg" / "jaxbandits"]
    assert data.find_data_file("banknote") == given
    assert data.find_data_file("banknote", path=cached.parent) == cached  # path= wins


# ------------------------------------------------------------------------------------------------
# Bad data files: clear errors naming the file.


def _shuttle(tmp_path: Path, lines: list[str]) -> Path:
    return _write(tmp_path / "shuttle.trn", lines)


def test_one_class_is_refused(tmp_path):
    file = _shuttle(tmp_path, _rows(20, "1"))
    with pytest.raises(DataFileError, match="every row of .* has class '1'.*at least 2 classes"
                       ) as err:
        load_dataset("shuttle", file)
    assert str(file) in str(err.value)
    with pytest.raises(DataFileError, match="at least 2 classes"):
        jb.make_env("shuttle", path=str(file))


def test_too_few_rows_are_refused(tmp_path):
    """Two rows per class of the data set at least: ten rows of shuttle (K = 7) are refused,
    fourteen are read."""
    file = _shuttle(tmp_path, _rows(10, "12"))
    with pytest.raises(DataFileError, match=r"holds 10 rows, fewer than the 14") as err:
        load_dataset("shuttle", file)
    assert str(file) in str(err.value)
    assert load_dataset("shuttle", _shuttle(tmp_path, _rows(14, "12"))).meta.num_rows == 14


def test_extra_column_is_refused(tmp_path):
    """An extra column used to become the label (every label '7' here); now the row's width is
    checked against the data set's (9 features and the class)."""
    lines = [row + " 7" for row in _rows(20, "1234567")]
    file = _shuttle(tmp_path, lines)
    with pytest.raises(DataFileError, match=r"line 1: 11 columns, expected 10") as err:
        load_dataset("shuttle", file)
    assert str(file) in str(err.value)
    rows = _rows(20, "gh", width=10, sep=",")
    rows[2] = rows[2][: rows[2].rindex(",")]  # one short row
    with pytest.raises(DataFileError, match=r"magic04.data, line 3: 10 columns, expected 11"):
        load_dataset("magic", _write(tmp_path / "magic04.data", rows))
    covertype = _write(tmp_path / "covtype.data", _rows(20, "12", width=55, sep=","))
    with pytest.raises(DataFileError, match=r"covtype.data: 56 columns, expected 55"):
        load_dataset("covertype", covertype)


def test_non_numeric_feature_names_line_and_column(tmp_path):
    rows = _rows(20, "12", width=4, sep=",")
    rows[4] = "1.0,2.0,abc,4.0,1"
    file = _write(tmp_path / "data_banknote_authentication.txt", rows)
    with pytest.raises(DataFileError, match=r"line 5, column 3: non-numeric feature 'abc'"):
        load_dataset("banknote", file)


GARBAGE = b"\x89PNG\r\n\x1a\n" + bytes(range(128, 256)) * 8


@pytest.mark.parametrize("dataset, name, message", [
    ("shuttle", "shuttle.trn", "not a text file"),
    ("mushroom", "agaricus-lepiota.data", "not a text file"),
    ("covertype", "covtype.data.gz", "not a readable compressed file"),
    ("covertype", "covtype.data", "not a text file"),
    ("mnist", "mnist.npz", "not a NumPy .npz archive"),
    ("mnist", "train-images-idx3-ubyte", "not an idx file"),
])
def test_binary_garbage_names_the_file(tmp_path, dataset, name, message):
    file = tmp_path / name
    file.write_bytes(GARBAGE)
    with pytest.raises(DataFileError, match=message) as err:
        load_dataset(dataset, file)
    assert str(file) in str(err.value)


def test_gzip_of_garbage_names_the_file(tmp_path):
    file = tmp_path / "covtype.data.gz"
    with gzip.open(file, "wb") as f:
        f.write(GARBAGE)
    with pytest.raises(DataFileError) as err:
        load_dataset("covertype", file)
    assert str(file) in str(err.value)


def test_bad_obd_and_hate_speech_files_name_the_file(tmp_path):
    campaign = tmp_path / "obd" / "random" / "men"
    campaign.mkdir(parents=True)
    (campaign / "men.csv").write_bytes(GARBAGE)
    (campaign / "item_context.csv").write_text("item_id,item_feature_0\n0,1.0\n")
    with pytest.raises(DataFileError, match="not a text file") as err:
        replay.load_obd("men", tmp_path / "obd")
    assert str(campaign / "men.csv") in str(err.value)
    (campaign / "men.csv").write_text("item_id,position,click\n0,1,0\n")
    (campaign / "item_context.csv").write_bytes(GARBAGE)
    with pytest.raises(DataFileError, match="item_context.csv"):
        replay.load_obd("men", tmp_path / "obd")

    export = tmp_path / "measuring-hate-speech.csv"
    export.write_bytes(GARBAGE)
    with pytest.raises(DataFileError, match="not a text file") as err:
        text.load_hate_speech(export)
    assert str(export) in str(err.value)


def test_bad_file_is_a_clean_cli_error(tmp_path, capsys):
    from jaxbandits.cli import main

    file = _write(tmp_path / "magic04.data", _rows(20, "g", width=10, sep=","))
    code = main(["run", "--env", "magic", "--set", f"env.path={file}", "--no-progress"])
    assert code == 2
    err = capsys.readouterr().err
    assert str(file) in err and "at least 2 classes" in err
