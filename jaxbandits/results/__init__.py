"""``Result``: the recorded curves of one simulation, their statistics, and save / load.

A result holds cumulative regret and reward for every run at the recorded steps (log-spaced by
default), plus timing and the configuration of the environment and the agent.

On disk a result is ``<name>.json`` (metadata, the format, and every array's shape and dtype)
beside its arrays: one ``<name>.npz`` (:meth:`Result.save`), or, for results larger than memory,
one ``<name>.<curve>.npy`` per curve written block by block by :class:`ResultWriter` and
memory-mapped by :meth:`Result.load`. Files are written atomically with the JSON last, loading
validates everything against the JSON, and no pickle is ever written or read. The JSON records the
sha256 of every array file and of its own fields (format version 2), and :meth:`Result.load`
checks them, so an edited value, a swapped or replaced file (another seed's arrays of the same
shape) or an edited field (the key) is an error naming the file; version-1 files, written before
the hashes, load as before. One process at a time writes a result (a lock beside it, taken
before the first file is touched and held until its JSON is written). The statistics
(:meth:`Result.mean`, :meth:`Result.confidence_band`, :meth:`Result.final`) reduce over blocks of
runs with float64 accumulators, so a memory-mapped result never needs to fit in memory.

Environments that report extra per-round metrics (``Spec.metrics``, such as a dueling
environment's weak regret) add one cumulative curve per metric (:attr:`Result.metrics`), stored
beside the others (``metric.<name>`` arrays) and understood wherever a metric name is.

Replay environments (logged data, ``Spec.replay``) have no regret: their results also hold the
cumulative number of accepted rounds, and their headline metric (:attr:`Result.default_metric`,
used by :meth:`Result.final`, :meth:`Result.mean`, the plots and the command line) is the
click-through rate ``CTR = reward over accepted rounds / accepted rounds`` instead of regret.

Every result also records how it was made (:attr:`Result.run_info`: versions, devices, sizes,
key; see :func:`environment_info`). :func:`paired_difference` compares two results of common
random numbers run by run. This package never imports :mod:`jaxbandits.plotting` nor matplotlib.

The package, one purpose a module: ``_result`` (the :class:`Result` type and its statistics),
``_stats`` (Student-t intervals from ``scipy.stats.t``, moments merged over blocks of runs),
``_format`` / ``_files`` / ``_validate`` (the file format, save / load with sha256, the checks
on load), ``_writer`` (:class:`ResultWriter`), ``_paired`` (common random numbers, paired
differences) and ``_provenance`` (:func:`environment_info`, :func:`config_of`). The metric names
are those of :mod:`jaxbandits.metrics`. Import every name from ``jaxbandits.results``.
"""

from jaxbandits.metrics import RESERVED_METRICS, check_metric_names
from jaxbandits.results._files import is_result_file, lock_result
from jaxbandits.results._paired import common_random_numbers, paired_difference
from jaxbandits.results._provenance import config_of, environment_info
from jaxbandits.results._result import Result
from jaxbandits.results._stats import t_quantile
from jaxbandits.results._writer import ResultWriter

__all__ = [
    "RESERVED_METRICS",
    "Result",
    "ResultWriter",
    "check_metric_names",
    "common_random_numbers",
    "config_of",
    "environment_info",
    "is_result_file",
    "lock_result",
    "paired_difference",
    "t_quantile",
]
