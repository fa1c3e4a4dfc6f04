"""Logged bandit feedback: a table of (context, action, reward, propensity) rows as a pytree.

A log is what a deployed policy leaves behind: for each round i the context ``x_i`` it saw,
the action ``a_i`` it took (and, for slates, the display ``position``), the reward ``r_i`` and
the probability ``p_i = pi_0(a_i | x_i)`` with which the logging policy ``pi_0`` took it (the
*propensity score*). Off-policy estimators (:mod:`jaxbandits.ope`) read nothing else.

:func:`load_logs` reads one from a CSV file (``.csv``, ``.csv.gz``), a Parquet file (needs
pandas and pyarrow), a pandas ``DataFrame`` or a dict of arrays, and checks it row by row: a
missing column, a propensity outside ``(0, 1]``, an action outside the action set or a
non-finite reward or context is a :class:`~jaxbandits.data.DataFileError` (a ``ValueError``)
naming the column and the row. :func:`load_obd_logs` reads the Open Bandit Dataset's logs
(Saito et al. 2020) of either logging policy, uniform random (``random/``) or Bernoulli
Thompson sampling (``bts/``), and :func:`obd_bts_prior` the Beta prior of that BTS policy.

Example::

    log = jb.data.load_logs("logs.csv", context=["x0", "x1"], action="action",
                            reward="click", pscore="propensity")
    log = jb.data.load_obd_logs(policy="random", campaign="men")
"""

from __future__ import annotations

import csv
import gzip
import importlib.util
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxbandits.data.locate import DATA_ENV_VAR, DataNotFoundError, search_dirs, where_looked
from jaxbandits.data.readers import DataFileError, is_parquet, read_parquet, reading

__all__ = [
    "OBD_CAMPAIGNS",
    "OBD_POLICIES",
    "BanditLog",
    "load_logs",
    "load_obd_logs",
    "obd_bts_prior",
]

#: The logging policies of the Open Bandit Dataset: uniform random and Bernoulli TS.
OBD_POLICIES: tuple[str, ...] = ("random", "bts")
#: Its campaigns.
OBD_CAMPAIGNS: tuple[str, ...] = ("all", "men", "women")


class BanditLog(struct.PyTreeNode):
    """Logged bandit feedback, one row per round (a pytree: arrays are leaves).

    Attributes:
      context: ``(n, d)`` float, the context of each round.
      action: ``(n,)`` int32, the logged action in ``[0, num_actions)``.
      reward: ``(n,)`` float, the observed reward.
      pscore: ``(n,)`` float, the logging policy's probability of the logged action (in
        ``(0, 1]``; of the action at its position for slates).
      position: ``(n,)`` int32 display position in ``[0, num_positions)`` (zeros without one).
      num_actions: K (static).
      num_positions: L, the slate length (static; 1 without positions).
      name: where the log comes from (static).
      context_names: the name of each context column (static).
    """

    context: jax.Array
    action: jax.Array
    reward: jax.Array
    pscore: jax.Array
    position: jax.Array
    num_actions: int = struct.field(pytree_node=False, default=1)
    num_positions: int = struct.field(pytree_node=False, default=1)
    name: str = struct.field(pytree_node=False, default="log")
    context_names: tuple[str, ...] = struct.field(pytree_node=False, default=())

    @property
    def num_rounds(self) -> int:
        """n, the number of logged rounds."""
        return int(self.action.shape[0])

    @property
    def dim(self) -> int:
        """d, the context dimension."""
        return int(self.context.shape[-1])

    def take(self, rows: Any) -> BanditLog:
        """The log restricted to ``rows`` (a slice, an index array or a boolean mask)."""
        return jax.tree.map(lambda leaf: leaf[rows], self)

    def split(self, fraction: float) -> tuple[BanditLog, BanditLog]:
        """``(first, rest)``: the first ``fraction`` of the rounds and the others (in log
        order, so a policy trained on ``first`` is evaluated on later rounds)."""
        if not 0.0 < fraction < 1.0:
            raise ValueError(f"fraction must be in (0, 1), got {fraction}")
        cut = int(round(fraction * self.num_rounds))
        return self.take(slice(0, cut)), self.take(slice(cut, None))

    def __repr__(self) -> str:
        return (f"BanditLog({self.name!r}, rounds={self.num_rounds}, dim={self.dim}, "
                f"actions={self.num_actions}, positions={self.num_positions})")


# ------------------------------------------------------------------------------------------------
# From a table.


def load_logs(
    source: str | os.PathLike | Mapping[str, Any] | Any,
    *,
    context: Sequence[str] | str = (),
    action: str = "action",
    reward: str = "reward",
    pscore: str = "pscore",
    position: str | None = None,
    num_actions: int | None = None,
    num_positions: int | None = None,
    name: str | None = None,
) -> BanditLog:
    """Reads logged bandit feedback from a table and checks every row.

    Args:
      source: a CSV file (``.csv``, ``.csv.gz``), a Parquet file (``.parquet``; needs pandas
        and pyarrow), a pandas ``DataFrame`` or a dict of equal-length columns.
      context: the context columns: a list of names, or a prefix string (every column whose
        name starts with it, in numeric-suffix order). Numeric columns are used as they are;
        a column of text (category) cells is one-hot encoded (categories sorted).
      action: the column of logged actions, integers in ``[0, num_actions)``.
      reward: the column of rewards (finite numbers).
      pscore: the column of the logging policy's propensities, in ``(0, 1]``.
      position: the column of display positions, if the log has slates: integers from 0, or
        from 1 (no row has 0 and, with ``num_positions``, one has ``num_positions``).
      num_actions: K (default: the largest action + 1).
      num_positions: L (default: the largest position + 1, or 1 without ``position``).
      name: a name for the log (default: the file name).

    Returns:
      a :class:`BanditLog`.

    Raises:
      DataFileError: a missing column, a non-numeric, non-finite or out-of-range cell; the
        message names the column and the row (0-based data row; for a CSV file also its line).
    """
    where, columns = _read_table(source)
    line_offset = 2 if isinstance(source, (str, os.PathLike)) else None
    context_cols = _context_columns(context, columns, where)
    wanted = [action, reward, pscore] + ([position] if position else [])
    missing = [c for c in wanted if c not in columns]
    if missing:
        shown = ", ".join(list(columns)[:20])
        raise DataFileError(f"{where}: missing column {missing[0]!r} (the log needs the "
                            f"columns {wanted}; found: {shown})")
    cell = _Cells(where, line_offset)
    act = cell.integers(columns[action], action, low=0, high=num_actions, what="action")
    k = int(act.max()) + 1 if num_actions is None else int(num_actions)
    rew = cell.floats(columns[reward], reward, what="reward")
    prop = cell.floats(columns[pscore], pscore, what="propensity")
    bad = np.flatnonzero(~((prop > 0.0) & (prop <= 1.0)))
    if bad.size:
        cell.fail(pscore, bad[0], f"propensity {prop[bad[0]]!r} is not in (0, 1] "
                  f"({bad.size} such rows)")
    if position:
        pos = cell.integers(columns[position], position, low=0, high=None, what="position")
        if pos.min() >= 1 and (num_positions is None or pos.max() >= num_positions):
            pos = pos - 1  # 1-based positions (as OBD's)
        num_pos = int(pos.max()) + 1 if num_positions is None else int(num_positions)
        over = np.flatnonzero(pos >= num_pos)
        if over.size:
            cell.fail(position, over[0], f"position {pos[over[0]]} is not below "
                      f"num_positions={num_pos}")
    else:
        pos, num_pos = np.zeros_like(act), 1 if num_positions is None else int(num_positions)
    blocks, names = [], []
    for col in context_cols:
        block, block_names = cell.feature(columns[col], col)
        blocks.append(block)
        names.extend(block_names)
    n = act.shape[0]
    ctx = np.concatenate(blocks, axis=1) if blocks else np.zeros((n, 0))
    return BanditLog(
        context=jnp.asarray(ctx, _float()), action=jnp.asarray(act, jnp.int32),
        reward=jnp.asarray(rew, _float()), pscore=jnp.asarray(prop, _float()),
        position=jnp.asarray(pos, jnp.int32), num_actions=k, num_positions=num_pos,
        name=name or (Path(where).name if line_offset else "log"), context_names=tuple(names))


def _float():
    return jnp.float64 if jax.config.jax_enable_x64 else jnp.float32


def _read_table(source) -> tuple[str, dict[str, Any]]:
    """``(where, {column: values})`` of a file, a DataFrame or a dict of arrays."""
    if isinstance(source, Mapping):
        columns = {str(c): np.asarray(v) for c, v in source.items()}
        where = "log"
    elif hasattr(source, "columns") and hasattr(source, "to_numpy"):  # a pandas DataFrame
        columns = {str(c): source[c].to_numpy() for c in source.columns}
        where = "DataFrame"
    else:
        file = Path(source).expanduser()
        if not file.is_file():
            raise DataNotFoundError(f"{file}: no such log file")
        where = str(file)
        with reading(file, "log"):
            columns = _read_file(file)
    lengths = {c: len(v) for c, v in columns.items()}
    if len(set(lengths.values())) > 1:
        raise DataFileError(f"{where}: columns of different lengths {lengths}")
    if not lengths or not next(iter(lengths.values())):
        raise DataFileError(f"{where} holds no rows")
    return where, columns


def _read_file(file: Path) -> dict[str, Any]:
    if is_parquet(file):
        frame = read_parquet(file, "the log")
        return {str(c): frame[c].to_numpy() for c in frame.columns}
    opener = gzip.open if file.name.lower().endswith(".gz") else open
    with opener(file, "rt", encoding="utf-8", newline="") as f:
        reader = csv.reader(f)
        header = next(reader, None)
        if header is None:
            raise DataFileError(f"{file} is empty")
        rows = list(reader)
    header = [h.strip() for h in header]
    for number, row in enumerate(rows):
        if len(row) != len(header):
            raise DataFileError(f"{file}, line {number + 2}: {len(row)} cells, the header has "
                                f"{len(header)}")
    return {h: [row[j] for row in rows] for j, h in enumerate(header)}


def _context_columns(context, columns: Mapping[str, Any], where: str) -> list[str]:
    if isinstance(context, str):
        found = [c for c in columns if c.startswith(context)]
        if not found:
            raise DataFileError(f"{where}: no context column starts with {context!r}")

        def order(c: str):
            tail = c[len(context):]
            return (0, int(tail), c) if tail.isdigit() else (1, 0, c)
        return sorted(found, key=order)
    missing = [c for c in context if c not in columns]
    if missing:
        raise DataFileError(f"{where}: missing context column {missing[0]!r} (found: "
                            f"{', '.join(list(columns)[:20])})")
    return list(context)


class _Cells:
    """Conversion of columns with errors that name the column and the row."""

    def __init__(self, where: str, line_offset: int | None):
        self.where, self.line_offset = where, line_offset

    def fail(self, column: str, row: int, message: str):
        line = f" (line {row + self.line_offset})" if self.line_offset else ""
        raise DataFileError(f"{self.where}: column {column!r}, row {row}{line}: {message}")

    def floats(self, values, column: str, what: str) -> np.ndarray:
        out = np.empty(len(values), np.float64)
        for i, v in enumerate(values):
            try:
                out[i] = float(v)
            except (TypeError, ValueError):
                self.fail(column, i, f"{what} {v!r} is not a number")
        bad = np.flatnonzero(~np.isfinite(out))
        if bad.size:
            self.fail(column, bad[0], f"{what} {values[bad[0]]!r} is not a finite number "
                      f"({bad.size} such rows)")
        return out

    def integers(self, values, column: str, *, low: int, high: int | None, what: str
                 ) -> np.ndarray:
        out = self.floats(values, column, what)
        bad = np.flatnonzero((out != np.round(out)) | (out < low)
                             | (out >= (math.inf if high is None else high)))
        if bad.size:
            allowed = f"an integer >= {low}" if high is None else f"an integer in [{low}, {high})"
            label = "outside the action set: " if what == "action" else ""
            self.fail(column, bad[0], f"{what} {values[bad[0]]!r} is {label}not {allowed}")
        return out.astype(np.int64)

    def feature(self, values, column: str) -> tuple[np.ndarray, list[str]]:
        """A numeric column ``(n, 1)``, or a text column one-hot ``(n, categories)``."""
        array = np.asarray(values)
        if array.dtype.kind in "biuf":
            out = array.astype(np.float64)
        else:
            try:
                out = np.asarray([float(v) for v in values])
            except (TypeError, ValueError):
                cats, codes = np.unique(array.astype(str), return_inverse=True)
                return (np.eye(cats.size)[codes],
                        [f"{column}={c}" for c in cats.tolist()])
        bad = np.flatnonzero(~np.isfinite(out))
        if bad.size:
            self.fail(column, bad[0], f"context value {values[bad[0]]!r} is not a finite number")
        return out[:, None], [column]


# ------------------------------------------------------------------------------------------------
# The Open Bandit Dataset.


def load_obd_logs(policy: str = "random", campaign: str = "all",
                  path: str | os.PathLike | None = None) -> BanditLog:
    """The Open Bandit Dataset's log of one logging ``policy`` and ``campaign`` (Saito et al.
    2020): ``<obd>/<policy>/<campaign>/<campaign>.csv``.

    Rows are OBD's as the Open Bandit Pipeline reads them (``OpenBanditDataset``): the action is
    ``item_id`` (K = 80 items for ``all``, 34 for ``men``, 46 for ``women``), the position
    ``position - 1`` (L = 3), the reward ``click``, the propensity ``propensity_score``; the
    context is the one-hot encoding of the four categorical ``user_feature_*`` columns.

    Args:
      policy: ``"random"`` (uniform random logging) or ``"bts"`` (Bernoulli Thompson sampling;
        its prior is :func:`obd_bts_prior`).
      campaign: ``"all"``, ``"men"`` or ``"women"``.
      path: the ``obd`` folder (holding ``<policy>/<campaign>/``); default: the ``obd``
        subfolder (or the folder itself) of each folder of
        :func:`~jaxbandits.data.search_dirs`, then the samples bundled with the ``obp``
        package if it is installed.

    Raises:
      DataNotFoundError: no file (the message says where it looked).
    """
    if policy not in OBD_POLICIES:
        raise ValueError(f"policy must be one of {OBD_POLICIES}, got {policy!r}")
    if campaign not in OBD_CAMPAIGNS:
        raise ValueError(f"campaign must be one of {OBD_CAMPAIGNS}, got {campaign!r}")
    relative = Path(policy) / campaign / f"{campaign}.csv"
    file = _find_obd(relative, path)
    items = file.parent / "item_context.csv"
    num_items = None
    if items.is_file():
        with reading(items, "OBD item table"), open(items, encoding="utf-8") as f:
            num_items = sum(1 for line in f if line.strip()) - 1
    return load_logs(file, context="user_feature_", action="item_id", reward="click",
                     pscore="propensity_score", position="position", num_actions=num_items,
                     num_positions=3, name=f"obd-{policy}-{campaign}")


def obd_bts_prior(campaign: str = "all", path: str | os.PathLike | None = None
                  ) -> tuple[np.ndarray, np.ndarray]:
    """``(alpha, beta)``, each ``(K,)``: the Beta prior per item of the Bernoulli TS policy that
    logged OBD's ``bts/`` logs of ``campaign`` (``bts_prior.yaml`` beside the ``random/`` and
    ``bts/`` folders; the Open Bandit Pipeline's ``obp/policy/conf/prior_bts.yaml``)."""
    if campaign not in OBD_CAMPAIGNS:
        raise ValueError(f"campaign must be one of {OBD_CAMPAIGNS}, got {campaign!r}")
    file = _find_obd(Path("bts_prior.yaml"), path)
    with reading(file, "BTS prior"):
        prior = _read_prior_yaml(file.read_text(encoding="utf-8"))
    if campaign not in prior or set(prior[campaign]) != {"alpha", "beta"}:
        raise DataFileError(f"{file}: no alpha and beta lists for campaign {campaign!r}")
    alpha, beta = (np.asarray(prior[campaign][k], np.float64) for k in ("alpha", "beta"))
    if alpha.shape != beta.shape or not (np.all(alpha > 0) and np.all(beta > 0)):
        raise DataFileError(f"{file}: campaign {campaign!r} needs positive alpha and beta lists "
                            "of the same length")
    return alpha, beta


def _read_prior_yaml(text: str) -> dict[str, dict[str, list[float]]]:
    """The two-level YAML of lists the prior file holds (``campaign: alpha: - 1.0 ...``)."""
    out: dict[str, dict[str, list[float]]] = {}
    campaign = key = None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        item = line.strip()
        if item.startswith("- ") and campaign and key:
            out[campaign][key].append(float(item[2:]))
        elif item.endswith(":") and indent == 0:
            campaign, key = item[:-1], None
            out[campaign] = {}
        elif item.endswith(":") and campaign:
            key = item[:-1]
            out[campaign][key] = []
        else:
            raise ValueError(f"line {number}: unexpected {item!r}")
    return out


def _find_obd(relative: Path, path) -> Path:
    """``<obd>/relative`` in ``path``, else in the ``obd`` subfolder (or the folder itself) of
    each data folder, and last in the ``obp`` package's bundled copy if it is installed."""
    if path is not None:
        roots = [Path(path).expanduser()]
    else:
        roots = [root for folder in search_dirs() for root in (folder / "obd", folder)]
        spec = importlib.util.find_spec("obp")
        if spec is not None and spec.origin:
            package = Path(spec.origin).parent
            roots.append(package / "dataset" / "obd")
            if relative.name == "bts_prior.yaml":
                relative_in_obp = package / "policy" / "conf" / "prior_bts.yaml"
                if relative_in_obp.is_file() and not any((r / relative).is_file()
                                                         for r in roots):
                    return relative_in_obp
    for root in roots:
        if (root / relative).is_file():
            return root / relative
    raise DataNotFoundError(
        f"Open Bandit Dataset: {relative.as_posix()} not found under "
        f"{where_looked(path, roots)}. Put the dataset's folders (random/, bts/ and "
        f"bts_prior.yaml; the 10,000-row samples ship with `pip install obp`) in an obd/ folder "
        f"of {DATA_ENV_VAR}=<folder>, or pass path=<obd folder>.")
