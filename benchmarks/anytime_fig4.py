"""Anytime ensemble sampling (Sun, Wang & Xu), Figure 4: Figure 1's panels in larger spaces.

Sun et al. 2025, Sec. 7 (d = 50, K = 500): ``anytime_fig1`` at larger d and K::

    python -m benchmarks.anytime_fig4 --scale small    # d = 20, K = 100, T = 2,000
"""

from __future__ import annotations

import dataclasses

from benchmarks import anytime_fig1

NAME = "anytime_fig4"
TITLE = "Anytime ensemble sampling, Figure 4: the linear and logistic panels at larger d and K"
SIZES = {"tiny": (6, 30), "small": (20, 100), "paper": (50, 500)}  # (d, K) per scale
SCALES = {scale: dataclasses.replace(anytime_fig1.SCALES[scale], dim=d, num_arms=k)
          for scale, (d, k) in SIZES.items()}


def main(argv=None):
    return anytime_fig1.main(argv, name=NAME, title=TITLE, scales=SCALES, figure="Fig. 4")


if __name__ == "__main__":
    main()
