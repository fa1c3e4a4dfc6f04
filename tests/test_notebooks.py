"""Every notebook under notebooks/ runs top to bottom (headless, at the sizes it ships with)."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib
import pytest

pytestmark = [pytest.mark.full, pytest.mark.unoptimized]  # not bits (conftest.py)

# Notebooks whose story is also run at tiny sizes by their reproduction tests (which inject a
# smaller SCALE); executing them again at their shipped sizes would only repeat those compiles.
RUN_ELSEWHERE = {
    "anytime_glm": "tests/test_reproduce_anytime.py",
    "dueling": "tests/test_reproduce_dueling.py",
    "neural": "tests/test_reproduce_neural.py",
    "neural_ensemblepp": "tests/test_reproduce_ensemble_pp_neural.py",
}
NOTEBOOKS = [p for p in sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))
             if p.stem not in RUN_ELSEWHERE]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path):
    matplotlib.use("Agg")
    cells = json.loads(path.read_text())["cells"]
    namespace: dict = {"__name__": "__main__"}
    for i, cell in enumerate(c for c in cells if c["cell_type"] == "code"):
        source = "".join(cell["source"])
        exec(compile(source, f"{path.name}[cell {i}]", "exec"), namespace)  # noqa: S102


def test_there_is_a_quickstart():
    assert any(p.stem == "quickstart" for p in NOTEBOOKS)
