"""Correctness oracles of the agents, imported by the tests and timed by the benchmarks.

* :mod:`numpy_linear`: NumPy per-seed (float64 loops) and batched references of the linear and
  GLM agents;
* :mod:`torch_neural`: PyTorch references of the neural and neural dueling agents;
* :mod:`parity`: the one agreement rule between a reference's regret and the engine's.
"""
