"""What every reproduction smoke test checks (``tests/test_reproduce*.py``), in one place.

:func:`run_tiny` runs a reproduction module of ``benchmarks/`` in-process at the test-only
``--scale tiny`` into a temporary folder and checks the report it writes: the PNG, the markdown
with the figure, every table (rows of the right width, finite numbers) and the claims section;
:func:`run_notebook` executes a notebook's code cells with injected variables (``SCALE =
"tiny"``), so that it reuses the scripts' compiled programs.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import matplotlib

ROOT = Path(__file__).resolve().parents[1]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?|nan|inf", re.IGNORECASE)


def run_tiny(module, tmp_path: Path, *extra: str, expected: dict[str, bool | None] | None = None):
    """Runs the reproduction ``module`` (``benchmarks.<name>``) at ``--scale tiny``; returns
    ``(module, tiny config, report)``.

    ``expected`` maps a piece of a claim's text to the verdict it must have at this scale and
    seed (the paper's, or a documented deviation): every claim containing it has that verdict,
    and at least one does. Only claims decidable at tiny scale with fixed keys belong there (a
    closed form, a run-by-run identity, a gap many times its interval), so a flip fails CI.
    """
    matplotlib.use("Agg")
    name = module.NAME
    report = module.main(["--scale", "tiny", "--seed", "0", "--out", str(tmp_path), "--plain",
                          "--no-progress", *extra])
    assert report.figure == tmp_path / f"{name}.png"
    assert report.figure.read_bytes()[:8] == PNG_MAGIC
    assert report.figure.stat().st_size > 10_000
    assert report.markdown == tmp_path / f"{name}.md"
    text = report.markdown.read_text()
    assert f"![{name}]({name}.png)" in text
    assert f"--scale tiny --seed 0 --out {tmp_path}" in text  # the command that reproduces it
    for table in report.tables:
        assert table.markdown() in text
        assert table.rows, table.title
        for row in table.rows:
            assert len(row) == len(table.columns), (table.title, row)
            for cell in row[1:]:
                for number in NUMBER.findall(cell):
                    assert math.isfinite(float(number)), (table.title, row)
    assert "### Claims checked" in text
    assert report.claims
    for claim, _, evidence in report.claims:
        assert claim and evidence, claim
    for piece, verdict in (expected or {}).items():
        found = [(claim, v, e) for claim, v, e in report.claims if piece in claim]
        assert found, f"no claim contains {piece!r}"
        for claim, v, evidence in found:
            assert v is verdict, f"{claim}: {v}, expected {verdict} ({evidence})"
    return module, module.SCALES["tiny"], report


def run_notebook(path: Path, **variables: Any) -> dict[str, Any]:
    """Executes the code cells of the notebook ``path`` in one namespace that starts with
    ``variables``; returns the namespace."""
    matplotlib.use("Agg")
    namespace: dict[str, Any] = {"__name__": "__main__", **variables}
    cells = json.loads(path.read_text())["cells"]
    for i, cell in enumerate(c for c in cells if c["cell_type"] == "code"):
        source = "".join(cell["source"])
        exec(compile(source, f"{path.name}[cell {i}]", "exec"), namespace)  # noqa: S102
    return namespace
