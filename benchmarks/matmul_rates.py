"""GFLOP/s of the batched matrix products the neural agents' rounds are made of, on this machine.

A neural round multiplies, for every run of a block, ``rows`` inputs by a ``width x width``
layer: ``(runs, rows, width) @ (runs, width, width)``. How fast XLA runs these shapes bounds a
round: the LMC-TS trunk (width 20, up to 200 rows, blocks of 32) and NVLDB's networks (widths 32
and 100, 64 arm rows), beside a square 2048 product, the attainable peak; each shape timed for
``--min-time`` seconds after compiling (``2 runs rows width^2`` FLOP a product)::

    python -m benchmarks.matmul_rates                    # the shapes above
    python -m benchmarks.matmul_rates --shapes 25x64x20,8x64x100
"""

from __future__ import annotations

import argparse
import sys

from benchmarks.timing import matmul_gflops

DEFAULT_SHAPES = "25x32x20,25x64x20,25x200x20,8x64x32,25x64x32,8x64x100,25x64x100"


def parse_shapes(text: str) -> list[tuple[int, int, int]]:
    """``"25x64x20,8x64x100"`` -> ``[(25, 64, 20), (8, 64, 100)]`` (runs x rows x width)."""
    shapes = []
    for item in text.split(","):
        parts = item.strip().lower().split("x")
        if len(parts) != 3 or not all(p.isdigit() and int(p) > 0 for p in parts):
            raise argparse.ArgumentTypeError(f"expected RUNSxROWSxWIDTH, got {item!r}")
        shapes.append(tuple(int(p) for p in parts))
    return shapes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", type=parse_shapes, default=parse_shapes(DEFAULT_SHAPES),
                        help=f"RUNSxROWSxWIDTH,... (default {DEFAULT_SHAPES})")
    parser.add_argument("--min-time", type=float, default=0.5,
                        help="seconds of timing per shape (default 0.5)")
    args = parser.parse_args(argv)
    import jax

    print(f"jax {jax.__version__}, {jax.devices()[0].platform}, "
          f"{len(jax.devices())} device(s); float32")
    peak = matmul_gflops(min_time=args.min_time)
    print(f"2048 x 2048 @ 2048 x 2048: {peak:.1f} GFLOP/s")
    print("runs  rows  width  GFLOP/s  of the 2048 product")
    for runs, rows, width in args.shapes:
        rate = matmul_gflops(rows, width, runs, min_time=args.min_time)
        print(f"{runs:4d}  {rows:4d}  {width:5d}  {rate:7.1f}  {100 * rate / peak:5.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
