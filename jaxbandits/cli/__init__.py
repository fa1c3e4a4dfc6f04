"""The ``jaxbandits`` command line: ``run`` and ``sweep`` experiments, ``plot`` and ``compare``
saved results, ``list`` what is registered.

``jaxbandits run`` with no arguments runs the built-in default experiment
(:data:`DEFAULT_EXPERIMENT`: the ``linear`` environment, T = 10,000, 200 runs, the linear agents
with lin-ucb's exploration scale tuned) and writes the saved results, ``summary.md`` (with the
run record: command, overrides, versions, devices) and ``regret.png`` to a results folder. For
a replay environment (logged data such as ``obd-replay``) the table and the plot (``ctr.png``)
show the final click-through rate over accepted rounds instead of regret.

Agents are **well specified** by default: every field the environment's assumptions determine
(noise scale, prior precision, parameter bound, a horizon-sized buffer on changing arm sets) is
set from the environment unless ``--set`` gives it (``jb.make_agent(name, env=env)``); the
command prints the values it took. ``--misspecified`` keeps the agents' bare defaults.

The results folder is prepared before anything is computed: a new ``results/<env>-<time>``
(``-2``, ``-3``, ... when two runs start in the same second), or ``--out``, which must be a
creatable, writable folder and, unless ``--overwrite`` is given, empty. One command at a time
writes a folder: it holds a lock on the folder itself from before compiling to its last file, so a
second command into the same ``--out`` is refused. Every run records the files it writes in
``.jaxbandits-files``, and ``--overwrite`` removes exactly those (a folder without that record,
from an older jaxbandits, loses its ``*.npz``, ``*.json``, ``*.npy``, ``*.png`` and
``summary.md``); files jaxbandits did not write, such as a user's ``config.json``, stay.

The package, one purpose a module: ``_parser`` (commands, options, defaults), ``_settings``
(``--set`` / ``--grid`` values), ``_experiment`` (what ``run`` and ``sweep`` share),
``_commands`` (``run``, ``sweep``), ``_folders`` (the results folder, its lock and records) and
``_reports`` (``plot``, ``compare``, ``list`` and the results tables, rendered by
:mod:`jaxbandits.tables`). The figures are :mod:`jaxbandits.plotting`'s, imported only when a
command draws one.
"""

from __future__ import annotations

import atexit
import gc
import os
import sys

from jaxbandits.cli._folders import FILES_RECORD, RESULT_FILES, RESUME_MARKER
from jaxbandits.cli._parser import (
    DEFAULT_ENV,
    DEFAULT_EXPERIMENT,
    DEFAULT_HORIZON,
    DEFAULT_RUNS,
    METRICS,
    build_parser,
)
from jaxbandits.cli._settings import parse_settings

__all__ = [
    "DEFAULT_ENV",
    "DEFAULT_EXPERIMENT",
    "DEFAULT_HORIZON",
    "DEFAULT_RUNS",
    "FILES_RECORD",
    "METRICS",
    "RESULT_FILES",
    "RESUME_MARKER",
    "console",
    "main",
    "parse_settings",
]


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    args.argv = list(sys.argv[1:] if argv is None else argv)
    try:
        return args.handler(args)
    except (ValueError, OSError) as err:  # OSError: a file named by the user, disk full ...
        print(f"jaxbandits: error: {err}", file=sys.stderr)
        return 2


def console() -> None:
    """The ``jaxbandits`` executable: :func:`main`, the exit handlers, then a prompt exit.

    Everything is written and closed when :func:`main` returns; the interpreter's own teardown
    (freeing XLA's compiled programs object by object, 0.4-0.7 s after a comparison) writes
    nothing, so it is skipped. An exception leaves the usual way, with its traceback.

    The process is short-lived, so the objects that exist once the package is imported (modules,
    classes, registries) are frozen out of the cyclic garbage collector and it collects less
    often: tracing builds many short-lived objects, and the collector otherwise spent about
    0.6 s of a cold default ``run`` scanning them."""
    gc.freeze()
    gc.set_threshold(50_000, 20, 50)
    code = main()
    atexit._run_exitfuncs()  # trackers, loggers, thread pools
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
