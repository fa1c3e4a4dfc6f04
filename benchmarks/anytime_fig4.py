"""Anytime ensemble sampling (Sun, Wang & Xu), Figure 4: Figure 1's panels in larger spaces.

Sun et al. 2025, Sec. 7 ("we use d = 50, K = 500"): the linear and logistic panels of
:mod:`benchmarks.anytime_fig1` (the same agents, tuned baselines, DT variants and claims) with
higher-dimensional features and more arms; the paper's claim is that the ensemble sampling
algorithms remain competitive with the baselines. Run from the repository root::

    python -m benchmarks.anytime_fig4 --scale small    # d = 20, K = 100, T = 2,000
    python -m benchmarks.anytime_fig4 --scale paper    # d = 50, K = 500, T = 10^4 (a GPU)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from benchmarks import anytime_fig1
from benchmarks import framework as C

NAME = "anytime_fig4"
TITLE = "Anytime ensemble sampling, Figure 4: the linear and logistic panels at larger d and K"
SIZES = {"tiny": (6, 30), "small": (20, 100), "paper": (50, 500)}  # (d, K) per scale
SCALES = {scale: dataclasses.replace(anytime_fig1.SCALES[scale], dim=d, num_arms=k)
          for scale, (d, k) in SIZES.items()}


def main(argv: Sequence[str] | None = None) -> C.Report:
    """Runs Figure 4 at ``--scale`` and writes the PNG and the markdown report."""
    return anytime_fig1.main(argv, name=NAME, title=TITLE, scales=SCALES, figure="Fig. 4")


if __name__ == "__main__":
    main()
