"""Tracker adapters: run_info sent once as parameters, metrics at their steps; a real offline
TensorBoard log read back; MLflow and W&B through stand-ins that record the calls."""

from __future__ import annotations

import struct
import sys
import types

import numpy as np
import pytest

from jaxbandits import tracking

RUN_INFO = {"horizon": 100, "key": [0, 7], "devices": {"backend": "cpu", "count": 1},
            "note": None}


def _result():
    regret = np.array([[1.0, 2.0, 4.0], [3.0, 4.0, 6.0]])
    return types.SimpleNamespace(steps=np.array([1, 10, 100]), cumulative_regret=regret,
                                 cumulative_reward=-regret, run_info=RUN_INFO)


def test_flat_params_and_result_stats():
    assert tracking.flat_params(RUN_INFO) == {"horizon": 100, "key": "[0, 7]",
                                              "devices.backend": "cpu", "devices.count": 1,
                                              "note": "None"}
    stats = tracking.result_stats(_result())
    assert [s["step"] for s in stats] == [1, 10, 100]
    assert stats[2]["regret/mean"] == 5.0 and stats[2]["reward/mean"] == -5.0
    assert stats[0]["regret/stderr"] == pytest.approx(np.std([1, 3], ddof=1) / np.sqrt(2))


def _fake(monkeypatch, name: str, calls: list) -> None:
    module = types.ModuleType(name)

    def record(call):
        return lambda *a, **k: calls.append((call, a, k)) or types.SimpleNamespace(
            log=lambda *a2, **k2: calls.append(("run.log", a2, k2)),
            finish=lambda: calls.append(("run.finish", (), {})))

    for call in ("set_tracking_uri", "set_experiment", "start_run", "log_params",
                 "log_metrics", "end_run", "init"):
        setattr(module, call, record(call))
    monkeypatch.setitem(sys.modules, name, module)


def test_mlflow_and_wandb_receive_params_once_and_metrics_by_step(monkeypatch):
    calls: list = []
    _fake(monkeypatch, "mlflow", calls)
    tracking.log_result(_result(), tracking.MLflowTracker("exp", tracking_uri="file:/tmp/x"))
    names = [c[0] for c in calls]
    assert names == ["set_tracking_uri", "set_experiment", "start_run", "log_params",
                     "log_metrics", "log_metrics", "log_metrics", "end_run"]
    assert calls[3][1][0]["devices.count"] == "1"
    assert [c[2]["step"] for c in calls if c[0] == "log_metrics"] == [1, 10, 100]

    calls.clear()
    _fake(monkeypatch, "wandb", calls)
    tracking.log_result(_result(), tracking.WandbTracker("proj", dir="/tmp"))
    assert [c[0] for c in calls] == ["init", "run.log", "run.log", "run.log", "run.finish"]
    assert calls[0][2]["mode"] == "offline" and calls[0][2]["config"]["horizon"] == 100
    assert calls[3][1][0]["regret/mean"] == 5.0 and calls[3][2]["step"] == 100
    with pytest.raises(ValueError, match="'step'"):
        tracking.WandbTracker("proj")({"regret/mean": 1.0}, RUN_INFO)


def test_named_runs_are_runs_of_their_own(monkeypatch, tmp_path):
    """compare / sweep name each configuration in run_info: MLflow logs it to a child run
    nested under the tracker's run, W&B to a run of that name in one group, TensorBoard to a
    subfolder; each name's parameters once, its metrics at their steps."""
    calls: list = []
    _fake(monkeypatch, "mlflow", calls)
    created = iter(["child-a", "child-b"])

    class Client:
        def create_run(self, experiment_id, run_name=None, tags=None):
            calls.append(("create_run", (experiment_id,), {"run_name": run_name, "tags": tags}))
            return types.SimpleNamespace(info=types.SimpleNamespace(run_id=next(created)))

        def log_batch(self, run_id, metrics=(), params=()):
            calls.append(("log_batch", (run_id,), {"metrics": list(metrics),
                                                   "params": list(params)}))

        def set_terminated(self, run_id):
            calls.append(("set_terminated", (run_id,), {}))

    sys.modules["mlflow"].MlflowClient = Client
    sys.modules["mlflow"].start_run = lambda **k: types.SimpleNamespace(
        info=types.SimpleNamespace(experiment_id="7", run_id="parent"))
    entities = types.ModuleType("mlflow.entities")
    entities.Param = lambda k, v: (k, v)
    entities.Metric = lambda k, v, ts, step: (k, v, step)
    monkeypatch.setitem(sys.modules, "mlflow.entities", entities)
    tracker = tracking.MLflowTracker()
    for step in (10, 100):
        for name in ("a", "b"):
            tracker({"step": step, "regret/mean": float(step)}, {**RUN_INFO, "name": name})
    tracker.close()
    creates = [c for c in calls if c[0] == "create_run"]
    assert [(c[1][0], c[2]["run_name"], c[2]["tags"]) for c in creates] == [
        ("7", "a", {"mlflow.parentRunId": "parent"}), ("7", "b", {"mlflow.parentRunId": "parent"})]
    batches = [(c[1][0], c[2]) for c in calls if c[0] == "log_batch"]
    assert [run for run, b in batches if b["params"]] == ["child-a", "child-b"]
    assert ("name", "a") in batches[0][1]["params"]
    assert [(run, b["metrics"]) for run, b in batches if b["metrics"]] == [
        ("child-a", [("regret/mean", 10.0, 10)]), ("child-b", [("regret/mean", 10.0, 10)]),
        ("child-a", [("regret/mean", 100.0, 100)]), ("child-b", [("regret/mean", 100.0, 100)])]
    assert [c[1][0] for c in calls if c[0] == "set_terminated"] == ["child-a", "child-b"]
    assert calls[-1][0] == "end_run"

    calls.clear()
    _fake(monkeypatch, "wandb", calls)
    tracker = tracking.WandbTracker("proj")
    for name in ("a", "b", "a"):
        tracker({"step": 5, "regret/mean": 1.0}, {**RUN_INFO, "name": name})
    tracker.close()
    inits = [c[2] for c in calls if c[0] == "init"]
    assert [(k["name"], k["group"], k["reinit"]) for k in inits] == [
        ("a", "proj", "create_new"), ("b", "proj", "create_new")]
    assert inits[1]["config"]["name"] == "b"
    assert [c[0] for c in calls].count("run.log") == 3
    assert [c[0] for c in calls].count("run.finish") == 2

    pytest.importorskip("tensorboardX")
    tracker = tracking.TensorBoardTracker(tmp_path)
    for name in ("x=1,y=2", "../up"):
        for stats in tracking.result_stats(_result()):
            tracker(stats, {**RUN_INFO, "name": name, "grid": {"x": 1}})
    tracker.close()
    for folder in ("x=1,y=2", "_up"):
        assert sorted(step for tag, step, _ in _events(tmp_path / folder)
                      if tag == "regret/mean") == [1, 10, 100]
    assert not (tmp_path.parent / "up").exists()


def test_missing_tracker_is_a_clear_import_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "wandb", None)
    with pytest.raises(ImportError, match="jaxbandits\\[wandb\\]"):
        tracking.WandbTracker()


def _events(folder) -> list:
    """The scalar (tag, step, value) of TensorBoard event files (TFRecord framing)."""
    from tensorboardX.proto import event_pb2

    out = []
    for path in sorted(folder.rglob("events.out.tfevents.*")):
        data = path.read_bytes()
        pos = 0
        while pos < len(data):
            (length,) = struct.unpack("<Q", data[pos:pos + 8])
            event = event_pb2.Event.FromString(data[pos + 12:pos + 12 + length])
            pos += 12 + length + 4
            for value in event.summary.value:
                if value.HasField("simple_value"):
                    out.append((value.tag, event.step, value.simple_value))
    return out


def test_tensorboard_offline_log_reads_back(tmp_path):
    pytest.importorskip("tensorboardX")
    tracking.log_result(_result(), tracking.TensorBoardTracker(tmp_path))
    scalars = _events(tmp_path)
    assert ("regret/mean", 100, 5.0) in scalars and ("reward/mean", 1, -2.0) in scalars
    assert sorted(step for tag, step, _ in scalars if tag == "regret/mean") == [1, 10, 100]
