"""Runs one paper reproduction, or lists them: ``python -m benchmarks.reproduce NAME --scale S``.

``--list`` prints every reproduction with the figures and tables it covers; ``NAME [options]``
runs ``benchmarks.NAME`` (``NAME --help`` lists the options). A module of ``benchmarks/`` with
``SCALES`` and ``main(argv)`` is listed by itself.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from pathlib import Path

#: module -> (paper key, what it reproduces), in the order of docs/reproductions/.
PAPERS: dict[str, tuple[str, str]] = {
    "anytime_fig1": ("Sun et al. 2025", "Fig. 1 (linear, logistic) with the DT variants"),
    "anytime_fig2": ("Sun et al. 2025", "Fig. 2 (a)-(c): GLM-ES m, lambda, sigma_R ablations"),
    "anytime_fig3": ("Sun et al. 2025", "Fig. 3: the doubling schedule's b and T_0"),
    "anytime_fig4": ("Sun et al. 2025", "Fig. 4: Fig. 1's panels at d = 50, K = 500"),
    "neural_fig1": ("Sun et al. 2025", "Fig. 1 (distance, quadratic) and Fig. 2(d)"),
    "neural_fig3": ("Sun et al. 2025", "Fig. 3, quadratic half: Neural-ES-DT's b and T_0"),
    "ensemble_pp_fig2": ("Li et al. 2024", "Fig. 2: regret against M; the M matching TS"),
    "ensemble_pp_ablation": ("Li et al. 2024", "Fig. 10(a)-(e): reference x perturbation laws"),
    "ensemble_pp_neural": ("Li et al. 2024", "Figs. 1/10, 3, 4, 11, 14, App. F.2, App. G.5"),
    "ensemble_pp_fig6": ("Li et al. 2024", "Fig. 6: ensemble sampling with moderate M near TS"),
    "ensemble_pp_tasks": ("Li et al. 2024", "App. F.2, Fig. 10(f): LMC-TS on every task; Mushroom"),
    "neurallog_figs": ("Bae & Lee 2025", "Figs. 1-2 (synthetic, classification), Table 2"),
    "neurallog_table2_power": ("Bae & Lee 2025", "Table 2's default row with many runs: power"),
    "neurallog_appendix": ("Bae & Lee 2025", "Figs. 3-6, Fig. 2's mushroom and mnist"),
    "neurallog_obd": ("Bae & Lee 2025", "Figs. 7-9, Table 2 (m, kappa, S): OBD replay sweeps"),
    "lee_oh_demo": ("Lee & Oh 2024", "a demonstration (no experiments in the paper); Prop. 2"),
    "dueling_figs": ("Oh et al. 2026", "Fig. 2 / E.1, Figs. E.5-E.8, Tables E.2-E.3, App. E.3"),
    "dueling_acceptance": ("Oh et al. 2026", "Fig. 2's ordering with enough runs to decide"),
    "dueling_scaling": ("Oh et al. 2026", "Figs. E.2-E.4, the d = 100 run, Figs. E.9-E.10"),
}
PAPER_ORDER = ("Sun et al. 2025", "Li et al. 2024", "Bae & Lee 2025", "Lee & Oh 2024",
               "Oh et al. 2026")


def reproductions() -> dict[str, tuple[str, str]]:
    """``{module: (paper, what)}``: :data:`PAPERS` and every module of ``benchmarks/`` whose
    source defines ``SCALES`` and ``main`` (not imported)."""
    found = dict(PAPERS)
    folder = Path(__file__).resolve().parent
    for path in sorted(folder.glob("[!_]*.py")):  # modules, not packages (authors/)
        source = path.read_text()
        if path.stem not in found and "\nSCALES" in source and "\ndef main(" in source:
            doc = source.split('"""')[1].strip().splitlines()[0] if '"""' in source else ""
            found[path.stem] = ("", doc)
    return found


def print_list() -> None:
    """Prints the reproductions grouped by paper, with the command that runs each."""
    found = reproductions()
    papers = [*PAPER_ORDER, *sorted({p for p, _ in found.values()} - set(PAPER_ORDER))]
    for paper in papers:
        names = [n for n, (p, _) in found.items() if p == paper]
        if names:
            print(paper or "other")
            for name in names:
                print(f"  {name:<22} {found[name][1]}")
    print("\nrun one: python -m benchmarks.reproduce NAME --scale tiny|small|paper")


def main(argv: Sequence[str] | None = None):
    """``--list`` (or nothing): the list; ``NAME [options]``: ``benchmarks.NAME.main(options)``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("--list", "-l", "list"):
        print_list()
        return None
    if argv[0] in ("-h", "--help"):
        print(__doc__)
        return None
    name, rest = argv[0], argv[1:]
    if name not in reproductions():
        raise SystemExit(f"no reproduction {name!r}; python -m benchmarks.reproduce --list "
                         "lists them")
    return importlib.import_module(f"benchmarks.{name}").main(rest)


if __name__ == "__main__":
    main()
