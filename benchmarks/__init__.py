"""Benchmarks and paper reproductions of jaxbandits, a package run from the repository root.

Every module is a script: ``python -m benchmarks.<name> [options]`` (``--help`` lists them).
The paper reproductions share :mod:`benchmarks.framework` (scales, the cached runner, reports
with claims and figures); ``python -m benchmarks.reproduce --list`` lists them and
``python -m benchmarks.reproduce NAME --scale S`` runs one. The throughput scripts share
:mod:`benchmarks.timing`. The correctness references they time the engine against (NumPy and
PyTorch loops) live with the tests, in ``tests/references/``.
"""
