"""Real-data environments: classification data sets as bandits, and the Open Bandit Dataset replay.

The shared files (UCI shuttle and magic, the OBD samples; found through ``JAXBANDITS_DATA``,
which ``conftest.py`` points at ``../shared/data`` next to the repository) are read when
present; those tests skip otherwise. The digits tests (scikit-learn's bundled copy) and the
loader tests on small files written here always run. Nothing here touches the network:
downloads are exercised with the fetchers replaced by local fakes.
"""

from __future__ import annotations

import gzip
import json
import os
import struct
import urllib.request
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbandits as jb
from jaxbandits.cli import main
from jaxbandits.cli._reports import _table_markdown
from jaxbandits.envs import datasets
from jaxbandits.envs.datasets import DataNotFoundError, block_features, load_dataset

pytestmark = pytest.mark.unoptimized  # checks what programs compute, not bits (conftest.py)

SHARED = Path(os.environ["JAXBANDITS_DATA"].split(os.pathsep)[0])  # set by conftest.py
needs_shared = pytest.mark.skipif(
    not (SHARED / "uci").is_dir() or not (SHARED / "obd").is_dir(),
    reason=f"shared data files not found at {SHARED} (UCI shuttle/magic and the OBD samples)",
)


# ------------------------------------------------------------------------------------------------
# Building blocks (always run).


def test_block_features_put_the_context_in_block_k():
    x = jnp.asarray([1.0, -2.0, 3.0])
    arms = block_features(x, 4)
    assert arms.shape == (4, 12)
    for k in range(4):
        np.testing.assert_array_equal(arms[k, 3 * k: 3 * k + 3], x)
        assert float(jnp.abs(arms[k]).sum()) == pytest.approx(6.0)  # zero outside block k


def test_normalisations():
    x = np.asarray([[0.0, 5.0, 2.0], [10.0, 5.0, -2.0], [5.0, 5.0, 0.0]])
    col = datasets.normalize_features(x, "minmax")
    np.testing.assert_allclose(col[:, 0], [-1.0, 1.0, 0.0])
    np.testing.assert_allclose(col[:, 1], 0.0)  # a constant column becomes 0
    np.testing.assert_allclose(col[:, 2], [1.0, -1.0, 0.0])
    row = datasets.normalize_features(x, "minmax-row")
    np.testing.assert_allclose(row.min(axis=1), -1.0)
    np.testing.assert_allclose(row.max(axis=1), 1.0)
    z = datasets.normalize_features(x, "zscore")
    np.testing.assert_allclose(z[:, [0, 2]].mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(z[:, [0, 2]].std(axis=0), 1.0)
    with pytest.raises(ValueError, match="normalize must be one of"):
        datasets.normalize_features(x, "l2")


# ------------------------------------------------------------------------------------------------
# digits (scikit-learn's bundled copy; always runs).


def test_digits_table_and_env():
    env = jb.make_env("digits")
    table = env.data
    assert (table.meta.num_rows, table.meta.dim, table.meta.num_classes) == (1797, 64, 10)
    counts = np.bincount(np.asarray(table.labels), minlength=10)
    assert counts.sum() == 1797 and counts.min() >= 170  # 174..183 per digit
    features = np.asarray(table.features)
    assert features.min() == -1.0 and features.max() == 1.0
    spec = env.spec()
    assert (spec.dim, spec.num_arms, spec.replay) == (640, 10, False)
    assert env.num_pool == 1797  # fewer rows than the 2,500 of the pool
    assert "digits" in repr(env) and "rows=1797" in repr(env)  # the rows are not printed
    assert jb.make_env("digits", image_size=4).spec().dim == 160

    state = env.init(jax.random.key(0))
    assert np.unique(np.asarray(state.pool)).size == 1797
    context = env.observe(jax.random.key(1), state, jnp.int32(0))
    label = int(table.labels[context.row])
    np.testing.assert_array_equal(context.arms, block_features(table.features[context.row], 10))
    for action in (label, (label + 1) % 10):
        fb = env.feedback(jax.random.key(2), state, context, jnp.int32(action))
        assert float(fb.reward) == float(action == label)
        assert float(fb.regret) == 1.0 - float(action == label)


def test_lin_ucb_on_digits_beats_random():
    """Tiny simulate through `digits` (4x4 pooled, d = 16, K = 10): LinUCB's regret after 600
    rounds is below 60% of the uniform policy's exact expectation T (1 - 1/K) = 540 (about 45%
    observed); with a noiseless 0/1 reward, reward + regret = t in every run."""
    env = jb.make_env("digits", image_size=4)
    horizon = 600
    result = jb.simulate(env, jb.make_agent("lin-ucb", explore_scale=0.1), 0, horizon, 3,
                         progress=False)
    np.testing.assert_allclose(result.cumulative_reward + result.cumulative_regret,
                               np.broadcast_to(result.steps, result.cumulative_regret.shape))
    assert result.accepted is None and result.default_metric == "regret"
    assert result.final()[0] < 0.6 * horizon * (1 - 1 / 10)
    assert result.env_config["data"].startswith("DataTable('digits'")


def test_dataset_env_options_are_validated():
    with pytest.raises(ValueError, match="sampling must be one of"):
        jb.make_env("digits", sampling="bootstrap")
    with pytest.raises(ValueError, match="pool_size must be a positive integer"):
        jb.make_env("digits", pool_size=0)
    with pytest.raises(ValueError, match="dataset is fixed to 'digits'"):
        jb.make_env("digits", dataset="magic")
    with pytest.raises(ValueError, match="unknown dataset|dataset must be one of"):
        jb.make_env("classification", dataset="cifar")
    with pytest.raises(ValueError, match="image_size must divide 8"):
        jb.make_env("digits", image_size=3)


def test_sequential_sampling_walks_the_pool():
    env = jb.make_env("digits", sampling="sequential", pool_size=5, instance_seed=3)
    state = env.init(jax.random.key(0))
    rows = [int(env.observe(jax.random.key(t), state, jnp.int32(t)).row) for t in range(10)]
    assert rows[:5] == rows[5:] and len(set(rows)) == 5
    other = env.init(jax.random.key(1))  # instance_seed: every run shares the pool
    np.testing.assert_array_equal(state.pool, other.pool)


# ------------------------------------------------------------------------------------------------
# Loaders on small files in each supported format (always run).


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


def test_numeric_loaders(tmp_path):
    rng = np.random.default_rng(0)
    banknote = _write(tmp_path / "data_banknote_authentication.txt",
                      [",".join(f"{v:.3f}" for v in rng.normal(size=4)) + f",{i % 2}"
                       for i in range(7)])
    table = load_dataset("banknote", banknote)
    assert (table.meta.num_rows, table.meta.dim, table.meta.num_classes) == (7, 4, 2)
    assert np.bincount(np.asarray(table.labels)).tolist() == [4, 3]
    features = np.asarray(table.features)
    np.testing.assert_allclose(features.min(axis=0), -1.0)
    np.testing.assert_allclose(features.max(axis=0), 1.0)

    phoneme = _write(tmp_path / "phoneme.csv", ["V1,V2,V3,V4,V5,Class"]
                     + [",".join(f"{v:.3f}" for v in rng.normal(size=5)) + f",{1 + (i % 3 == 0)}"
                        for i in range(9)])
    table = load_dataset("phoneme", tmp_path, normalize="zscore")  # a folder works too
    assert (table.meta.num_rows, table.meta.dim) == (9, 5)
    assert np.bincount(np.asarray(table.labels)).tolist() == [6, 3]  # '1' is arm 0, '2' arm 1
    np.testing.assert_allclose(np.asarray(table.features).mean(axis=0), 0.0, atol=1e-6)
    assert phoneme.exists()

    shuttle = _write(tmp_path / "shuttle.csv", ["x0,x1,x2,x3,x4,x5,x6,x7,x8,label"]
                     + [",".join(str(v) for v in rng.integers(-5, 90, 9)) + f",{1 + i % 7}"
                        for i in range(14)])
    table = load_dataset("shuttle", shuttle)
    assert (table.meta.num_rows, table.meta.dim, table.meta.num_classes) == (14, 9, 7)
    assert np.bincount(np.asarray(table.labels)).tolist() == [2] * 7

    covtype = tmp_path / "covtype.data.gz"
    with gzip.open(covtype, "wt") as f:
        for i in range(15):  # at least 2 rows per class of the data set (2 * 7)
            f.write(",".join(str(v) for v in rng.integers(0, 3, 54)) + f",{1 + i % 2}\n")
    table = load_dataset("covertype", covtype)
    assert (table.meta.dim, table.meta.num_classes) == (54, 7)  # K is the data set's, not seen
    assert np.bincount(np.asarray(table.labels)).tolist() == [8, 7]


def test_magic_labels_map_gamma_to_arm_1(tmp_path):
    rows = [",".join(["1.5"] * 9) + f",{v},{c}"
            for v, c in ((1, "g"), (2, "h"), (3, "g"), (4, "h"))]
    table = load_dataset("magic", _write(tmp_path / "magic04.data", rows))
    assert np.asarray(table.labels).tolist() == [1, 0, 1, 0]
    (tmp_path / "bad").mkdir()
    bad = _write(tmp_path / "bad" / "magic04.data", rows[:1] + ["1,1,1,1,1,1,1,1,1,1,x"])
    with pytest.raises(ValueError, match="unexpected labels"):
        load_dataset("magic", bad)


def _mushroom_file(path: Path, rows: int = 12) -> Path:
    rng = np.random.default_rng(1)
    letters = list("abcdefgh?")
    lines = [",".join(["e" if i % 3 else "p"] + [letters[v] for v in rng.integers(0, 4, 22)])
             for i in range(rows)]
    return _write(path, lines)


def test_mushroom_categorical_encodings(tmp_path):
    file = _mushroom_file(tmp_path / "agaricus-lepiota.data")
    codes = load_dataset("mushroom", file)
    assert codes.categorical and (codes.meta.num_rows, codes.meta.dim) == (12, 22)
    assert np.bincount(np.asarray(codes.labels)).tolist() == [4, 8]  # poisonous 0, edible 1
    onehot = load_dataset("mushroom", file, categorical="onehot")
    assert not onehot.categorical and 22 < onehot.meta.dim <= 22 * 4
    assert set(np.unique(np.asarray(onehot.features))) <= {-1.0, 0.0, 1.0}

    env = jb.make_env("classification", dataset="mushroom", path=str(file))
    assert env.spec().dim == 44 and env.spec().num_arms == 2
    state_a, state_b = env.init(jax.random.key(0)), env.init(jax.random.key(1))
    assert state_a.codebook.shape == (22, codes.meta.num_categories)
    assert float(jnp.abs(state_a.codebook).max()) <= 1.0
    assert not np.allclose(state_a.codebook, state_b.codebook)  # a fresh encoding per run
    x = env.row_features(state_a, jnp.int32(0))
    np.testing.assert_array_equal(
        x, state_a.codebook[jnp.arange(22), codes.features[0]])  # one value per category


def test_mnist_formats_and_pooling(tmp_path):
    rng = np.random.default_rng(2)
    images = rng.integers(0, 256, (20, 28, 28)).astype(np.uint8)  # 2 rows per class at least
    labels = np.asarray([0, 1, 2, 3, 4, 9] * 3 + [5, 5], np.uint8)
    np.savez(tmp_path / "mnist.npz", x_train=images, y_train=labels, x_test=images[:1],
             y_test=labels[:1])
    table = load_dataset("mnist", tmp_path / "mnist.npz")
    assert (table.meta.num_rows, table.meta.dim, table.meta.num_classes) == (20, 196, 10)
    assert load_dataset("mnist", tmp_path, image_size=7).meta.dim == 49

    idx = tmp_path / "idx"
    idx.mkdir()
    with gzip.open(idx / "train-images-idx3-ubyte.gz", "wb") as f:
        f.write(struct.pack(">4B3I", 0, 0, 8, 3, 20, 28, 28) + images.tobytes())
    with gzip.open(idx / "train-labels-idx1-ubyte.gz", "wb") as f:
        f.write(struct.pack(">4BI", 0, 0, 8, 1, 20) + labels.tobytes())
    from_idx = load_dataset("mnist", idx)
    np.testing.assert_array_equal(from_idx.features, table.features)
    np.testing.assert_array_equal(from_idx.labels, labels)


def test_custom_table_env():
    rng = np.random.default_rng(3)
    table = datasets.make_table(rng.normal(size=(30, 3)), rng.integers(0, 3, 30), name="toy",
                                normalize="minmax")
    env = jb.envs.ClassificationEnv(data=table, pool_size=10)
    env.validate()
    assert env.spec().dim == 9 and env.num_pool == 10
    with pytest.raises(ValueError, match="labels must lie in"):
        datasets.make_table(np.zeros((3, 2)), np.asarray([0, 1, 5]), num_classes=3)


# ------------------------------------------------------------------------------------------------
# Missing files and downloads (no network).


def test_missing_file_says_where_to_put_it(tmp_path, monkeypatch):
    with pytest.raises(DataNotFoundError) as err:
        jb.make_env("shuttle", path=str(tmp_path))
    message = str(err.value)
    assert "shuttle.trn" in message and str(tmp_path) in message
    assert "download('shuttle')" in message and "JAXBANDITS_DATA" in message
    assert isinstance(err.value, FileNotFoundError) and isinstance(err.value, ValueError)

    # without JAXBANDITS_DATA, with no per-user folder and an empty cache, the default search
    # fails the same way, naming the variable and the per-user folder
    monkeypatch.delenv("JAXBANDITS_DATA", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("JAXBANDITS_CACHE", str(tmp_path / "cache"))
    with pytest.raises(DataNotFoundError, match="magic04.data") as err:
        jb.make_env("magic")
    message = str(err.value)
    assert str(tmp_path / "cache") in message and "JAXBANDITS_DATA" in message
    assert str(tmp_path / "xdg" / "jaxbandits") in message
    with pytest.raises(DataNotFoundError, match="item_context.csv"):
        jb.make_env("obd-replay")
    jb.make_env("digits")  # bundled data needs no file


def test_missing_file_is_a_clean_cli_error(tmp_path, capsys):
    code = main(["run", "--env", "magic", "--set", f"env.path={tmp_path}", "--no-progress"])
    assert code == 2
    assert "magic: data file not found" in capsys.readouterr().err


def test_environment_variable_folder_is_searched(tmp_path, monkeypatch):
    folder = tmp_path / "mydata" / "uci"
    folder.mkdir(parents=True)
    _write(folder / "data_banknote_authentication.txt", ["1,2,3,4,0", "2,3,4,5,1"])
    monkeypatch.setenv("JAXBANDITS_DATA", str(tmp_path / "mydata"))
    assert datasets.find_data_file("banknote") == folder / "data_banknote_authentication.txt"


def test_download_writes_into_the_cache(tmp_path, monkeypatch):
    def fake_urlretrieve(url, target):
        assert url.endswith("data_banknote_authentication.txt")
        _write(Path(target), ["1,2,3,4,0", "2,3,4,5,1", "0,0,1,1,1", "1,0,1,0,0"])

    monkeypatch.setattr(urllib.request, "urlretrieve", fake_urlretrieve)
    monkeypatch.setenv("JAXBANDITS_CACHE", str(tmp_path / "cache"))
    path = datasets.download("banknote")
    assert path == tmp_path / "cache" / "data_banknote_authentication.txt"
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("JAXBANDITS_DATA", raising=False)
    assert load_dataset("banknote").meta.num_rows == 4  # found in the cache

    class Bunch:  # what sklearn's fetch_openml returns for phoneme (OpenML 1489)
        data = np.arange(20, dtype=float).reshape(4, 5)
        target = np.asarray(["1", "2", "2", "1"])

    import sklearn.datasets

    monkeypatch.setattr(sklearn.datasets, "fetch_openml",
                        lambda data_id, **kw: Bunch() if data_id == 1489 else None)
    path = datasets.download("phoneme")
    assert path.name == "phoneme.csv"
    table = load_dataset("phoneme")
    assert table.meta.num_rows == 4 and np.asarray(table.labels).tolist() == [0, 1, 1, 0]
    with pytest.raises(ValueError, match="bundled"):
        datasets.download("digits")


# ------------------------------------------------------------------------------------------------
# Shared UCI files.


@needs_shared
def test_shuttle_and_magic_tables():
    shuttle = jb.make_env("shuttle")
    meta = shuttle.data.meta
    assert (meta.num_rows, meta.dim, meta.num_classes) == (43_500, 9, 7)
    assert np.bincount(np.asarray(shuttle.data.labels)).tolist() == [
        34_108, 37, 132, 6_748, 2_458, 6, 11]
    assert shuttle.spec().dim == 63 and shuttle.spec().num_arms == 7
    magic = jb.make_env("magic")
    meta = magic.data.meta
    assert (meta.num_rows, meta.dim, meta.num_classes) == (19_020, 10, 2)
    assert np.bincount(np.asarray(magic.data.labels)).tolist() == [6_688, 12_332]  # h, g
    for env in (shuttle, magic):
        features = np.asarray(env.data.features)
        np.testing.assert_allclose(features.min(axis=0), -1.0)  # every column spans [-1, 1]
        np.testing.assert_allclose(features.max(axis=0), 1.0)
    assert shuttle.num_pool == 2500
    row_wise = jb.make_env("shuttle", normalize="minmax-row")
    features = np.asarray(row_wise.data.features)
    np.testing.assert_allclose(features.min(axis=1), -1.0)
    np.testing.assert_allclose(features.max(axis=1), 1.0)


@needs_shared
def test_random_play_on_shuttle_has_regret_t_times_1_minus_1_over_k():
    """Uniform play: regret ~ Binomial(T, 6/7) per run; T = 300, 4 runs: mean 257.1, standard
    error sqrt(300 * 6/7 * 1/7 / 4) = 3.0, tolerance 12 (4 standard errors)."""
    horizon = 300
    result = jb.simulate(jb.make_env("shuttle"), jb.make_agent("random"), 1, horizon, 4,
                         progress=False)
    assert result.final()[0] == pytest.approx(horizon * 6 / 7, abs=12)


NEURAL_AGENTS = ("neural-es", "neural-ucb", "neural-ts", "neurallog-ucb-1", "neurallog-ucb-2",
                 "neurallog-ts-1", "neurallog-ts-2", "ncbf-ucb")


@needs_shared
@pytest.mark.slow
def test_every_neural_agent_beats_random_on_shuttle():
    """The neural agents' ordering on real data: every neural agent at its defaults (a ring buffer
    of the whole horizon, since a context arrives each round; neural-es / neural-ucb / neural-ts
    train every 10 rounds instead of every round, to keep the test short) ends with less than half
    of uniform play's regret after 300 rounds (2 runs each; random: 257 +- 3 per run). Shuttle is
    80% class 1, so an agent that learns anything quickly leaves random play far behind."""
    env = jb.make_env("shuttle")
    every = {"neural-es": 10, "neural-ucb": 10, "neural-ts": 10}
    agents = {"random": jb.make_agent("random")}
    for name in NEURAL_AGENTS:
        extra = {"update_every": every[name]} if name in every else {}
        agents[name] = jb.make_agent(name, buffer_size=300, **extra)
    results = jb.compare(env, agents, 2, 300, 2, progress=False)
    random_regret = results["random"].final()[0]
    assert random_regret > 230
    for name in NEURAL_AGENTS:
        assert results[name].final()[0] < 0.5 * random_regret, (name, results[name].final())


@needs_shared
def test_greedy_on_magic_beats_random():
    """Greedy on magic's block features (d = 20): regret after 300 rounds below 80% of the
    uniform policy's T / 2 = 150 (about 90 observed, i.e. ~70% accuracy already)."""
    horizon = 300
    result = jb.simulate(jb.make_env("magic"), jb.make_agent("greedy"), 0, horizon, 3,
                         progress=False)
    assert result.final()[0] < 0.8 * horizon / 2


# ------------------------------------------------------------------------------------------------
# Open Bandit Dataset replay (shared samples).


@pytest.fixture(scope="module")
def obd():
    if not (SHARED / "obd").is_dir():
        pytest.skip(f"shared OBD samples not found at {SHARED / 'obd'}")
    return jb.make_env("obd-replay")


@needs_shared
def test_obd_table(obd):
    data, meta = obd.data, obd.data.meta
    assert (meta.num_events, meta.num_items, meta.num_candidates) == (20_000, 80, 5)
    assert obd.spec() == jb.Spec(dim=44, num_arms=5, action_kind="index", replay=True)
    assert float(np.asarray(data.click).sum()) == 92  # 46 clicks in each campaign's sample
    candidates = np.asarray(data.candidates)
    assert all(len(set(row)) == 5 for row in candidates[::97])  # distinct candidates
    assert candidates[0, 0] == 14 and candidates[10_000, 0] >= 34  # logged item; women offset
    assert np.all(candidates[:10_000] < 34) and np.all(candidates[10_000:] >= 34)
    affinity = np.asarray(data.affinity)
    assert affinity.min() == -1.0 and affinity.max() == 1.0
    assert set(np.unique(np.asarray(data.position))) == {0, 1, 2}
    assert data.user.shape == (20_000, 16) and data.items.shape == (80, 8)
    assert "obd-random-men+women" in repr(obd)


@needs_shared
def test_obd_exactly_one_arm_is_accepted(obd):
    """Each logged event is shown with its logged item at exactly one arm (whose features are
    the logged item's), and only that arm is accepted, with the logged click as reward."""
    state = obd.init(jax.random.key(0))

    def round_(t):
        context = obd.observe(jax.random.key(0), state, t)
        fbs = [obd.feedback(jax.random.key(1), state, context, jnp.int32(a)) for a in range(5)]
        accepted = jnp.stack([fb.accepted for fb in fbs])
        reward = jnp.stack([fb.reward for fb in fbs])
        regret = jnp.stack([fb.regret for fb in fbs])
        return context.arms, context.event, accepted, reward, regret

    arms, events, accepted, reward, regret = jax.jit(jax.vmap(round_))(jnp.arange(300))
    assert arms.shape == (300, 5, 44)
    np.testing.assert_array_equal(np.asarray(accepted).sum(axis=1), 1)
    np.testing.assert_array_equal(regret, 0.0)
    clicks = np.asarray(obd.data.click)[np.asarray(events)]
    np.testing.assert_array_equal(np.asarray(reward).sum(axis=1), clicks)
    logged_arm = np.asarray(accepted).argmax(axis=1)
    logged_item = np.asarray(obd.data.candidates)[np.asarray(events), 0]
    item_features = np.asarray(arms)[np.arange(300), logged_arm, 16:24]
    np.testing.assert_allclose(item_features, np.asarray(obd.data.items)[logged_item])
    assert len(set(logged_arm.tolist())) == 5  # the logged slot is shuffled
    assert len(set(np.asarray(events).tolist())) == 300  # a permutation of the events


@pytest.fixture(scope="module")
def random_replay(obd):
    return jb.simulate(obd, jb.make_agent("random"), 0, 5000, 4, progress=False)


@needs_shared
def test_random_policy_acceptance_rate_is_one_over_k(obd, random_replay):
    """The 5 candidates are distinct and include the logged item, so a uniform agent is accepted
    with probability exactly 1/5 per event, whatever the event: over 4 runs x 5,000 events the
    rate's standard error is sqrt(0.2 * 0.8 / 20,000) = 0.0028; tolerance 0.015 (5.3 standard
    errors). Accepted events are then a uniform subsample of the log, so the pooled CTR
    estimates the log's click rate 92 / 20,000 = 0.0046: about 4,000 accepted events and 18
    clicks, standard error sqrt(0.0046 / 4,000) = 0.0011; tolerance 0.0035 (3.3 standard
    errors)."""
    result = random_replay
    assert result.replay and result.default_metric == "ctr"
    rate = result.accepted[:, -1].mean() / result.horizon
    assert rate == pytest.approx(1 / 5, abs=0.015)
    np.testing.assert_array_equal(result.cumulative_regret, 0.0)
    pooled = result.cumulative_reward[:, -1].sum() / result.accepted[:, -1].sum()
    assert pooled == pytest.approx(obd.data.meta.click_rate, abs=0.0035)
    ctr, half = result.final()  # the mean over runs of each run's CTR
    per_run = result.cumulative_reward[:, -1] / result.accepted[:, -1]
    assert ctr == pytest.approx(per_run.mean()) and half >= 0
    assert result.final("regret")[0] == 0.0


@needs_shared
def test_replay_result_round_trip_table_and_plot(random_replay, tmp_path):
    result = random_replay
    result.save(tmp_path / "random")
    loaded = jb.Result.load(tmp_path / "random")
    np.testing.assert_array_equal(loaded.accepted, result.accepted)
    np.testing.assert_array_equal(loaded.cumulative_reward, result.cumulative_reward)
    assert loaded.final() == result.final() and loaded.replay
    assert "LoggedData('obd-random-men+women'" in loaded.env_config["data"]
    table = _table_markdown({"random": result})
    assert "final CTR" in table and "accepted" in table and "regret" not in table
    png = tmp_path / "ctr.png"
    fig = jb.plot_regret({"random": result}, png)
    assert png.read_bytes()[:4] == b"\x89PNG"
    assert "click-through" in fig.axes[0].get_ylabel()


@needs_shared
def test_cli_run_on_replay_reports_ctr(random_replay, tmp_path, capsys):
    """`jaxbandits run --env obd-replay`: the same run as the fixture (same compiled program),
    reported as CTR in the console, summary.md and ctr.png."""
    out = tmp_path / "res"
    assert main(["run", "--env", "obd-replay", "--agents", "random", "--horizon", "5000",
                 "--runs", "4", "--out", str(out), "--no-progress"]) == 0
    loaded = jb.Result.load(out / "random")
    np.testing.assert_array_equal(loaded.accepted, random_replay.accepted)
    assert (out / "ctr.png").read_bytes()[:4] == b"\x89PNG" and not (out / "regret.png").exists()
    assert "final CTR" in (out / "summary.md").read_text()
    assert "final click-through rate" in capsys.readouterr().out


# ------------------------------------------------------------------------------------------------
# Result: replay fields round-trip; results saved before them still load (always run).


def _replay_result() -> jb.Result:
    steps = np.asarray([1, 10, 100])
    accepted = np.asarray([[0.0, 2.0, 20.0], [1.0, 3.0, 25.0]])
    reward = np.asarray([[0.0, 1.0, 2.0], [0.0, 0.0, 1.0]])
    return jb.Result(steps=steps, cumulative_regret=np.zeros((2, 3)), cumulative_reward=reward,
                     accepted=accepted, name="replay")


def test_replay_result_metrics_and_round_trip(tmp_path):
    result = _replay_result()
    np.testing.assert_allclose(result.mean(), [0.0, 0.25, (2 / 20 + 1 / 25) / 2])
    assert result.final() == result.final("ctr")
    assert result.final("accepted")[0] == 22.5
    result.save(tmp_path / "r")
    loaded = jb.Result.load(tmp_path / "r")
    np.testing.assert_array_equal(loaded.accepted, result.accepted)
    assert loaded.final() == result.final() and loaded.default_metric == "ctr"
    linear = jb.Result(steps=result.steps, cumulative_regret=np.ones((2, 3)),
                       cumulative_reward=np.ones((2, 3)), name="linear")
    with pytest.raises(ValueError, match="different default metrics"):
        jb.plot_regret({"a": result, "b": linear})
    with pytest.raises(ValueError, match="needs a replay result"):
        linear.final("ctr")


def test_results_saved_without_accepted_still_load(tmp_path):
    """A result file written before replay support (no `accepted` array) loads as a regret
    result."""
    np.savez(tmp_path / "old.npz", steps=np.asarray([1, 2]),
             cumulative_regret=np.asarray([[0.5, 1.0]]), cumulative_reward=np.asarray([[0.1, 0.3]]))
    (tmp_path / "old.json").write_text(json.dumps({
        "name": "lin-ts", "wall_time": 1.0, "compile_time": 2.0, "env_config": {"name": "linear"},
        "agent_config": {"name": "lin-ts"}, "extras": {}}))
    old = jb.Result.load(tmp_path / "old")
    assert old.accepted is None and not old.replay and old.final() == (1.0, 0.0)
