"""GFLOP/s of the neural rounds' batched products ``(runs, rows, width) @ (runs, width, width)``
(a vmapped layer), beside a square 2048 product, the attainable peak::

    python -m benchmarks.matmul_rates --shapes 25x64x20,8x64x100
"""

from __future__ import annotations

import argparse
import sys

from benchmarks.timing import cli, matmul_gflops, print_table

DEFAULT_SHAPES = "25x32x20,25x64x20,25x200x20,8x64x32,25x64x32,8x64x100,25x64x100"


def parse_shapes(text: str) -> list[tuple[int, int, int]]:
    """``"25x64x20,8x64x100"`` -> ``[(25, 64, 20), (8, 64, 100)]`` (runs x rows x width)."""
    shapes = [item.strip().lower().split("x") for item in text.split(",")]
    for item, parts in zip(text.split(","), shapes, strict=True):
        if len(parts) != 3 or not all(p.isdigit() and int(p) > 0 for p in parts):
            raise argparse.ArgumentTypeError(f"expected RUNSxROWSxWIDTH, got {item!r}")
    return [tuple(int(p) for p in parts) for parts in shapes]


def main(argv: list[str] | None = None) -> int:
    args = cli(__doc__, argv, shapes=(parse_shapes, parse_shapes(DEFAULT_SHAPES),
                                      f"RUNSxROWSxWIDTH,... (default {DEFAULT_SHAPES})"),
               min_time=(0.5, "seconds of timing per shape"))
    import jax

    print(f"jax {jax.__version__}, {jax.devices()[0].platform}, "
          f"{len(jax.devices())} device(s); float32")
    peak = matmul_gflops(min_time=args.min_time)
    print(f"2048 x 2048 @ 2048 x 2048: {peak:.1f} GFLOP/s")
    rates = [matmul_gflops(rows, width, runs, min_time=args.min_time)
             for runs, rows, width in args.shapes]
    print_table(["runs", "rows", "width", "GFLOP/s", "of the 2048 product"],
                [[*shape, f"{rate:.1f}", f"{100 * rate / peak:.1f}%"]
                 for shape, rate in zip(args.shapes, rates, strict=True)], False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
