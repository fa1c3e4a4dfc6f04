"""The documentation's examples run, and its site builds.

Every ```python block of the getting-started page and of each guide is executed, in order, in
one namespace per page (so a page reads like a notebook), from a temporary folder. A page's
blocks may assume ``import jax`` and ``import jaxbandits as jb``.
"""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"
PAGES = [DOCS / "getting-started.md", *sorted((DOCS / "guides").glob("*.md"))]
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
_PREAMBLE = "import jax\nimport jaxbandits as jb\n"


def _blocks(page: Path) -> list[str]:
    return _BLOCK.findall(page.read_text())


def test_the_getting_started_page_and_every_guide_have_examples():
    assert _blocks(DOCS / "getting-started.md")
    assert len(PAGES) >= 7, [p.name for p in PAGES]


@pytest.mark.full  # end to end: every example at its page's sizes
@pytest.mark.parametrize("page", [p for p in PAGES if _blocks(p)], ids=lambda p: p.stem)
def test_code_blocks_run(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    module = types.ModuleType(f"docs_{page.stem.replace('-', '_')}")  # dataclasses look it up
    monkeypatch.setitem(sys.modules, module.__name__, module)
    namespace = module.__dict__
    exec(_PREAMBLE, namespace)
    for i, block in enumerate(_blocks(page)):
        exec(compile(block, f"{page.relative_to(DOCS)} (block {i + 1})", "exec"), namespace)


_SPEC_CITATION = re.compile(r"seed-00\d|\b[Ii]ssues? \d+\b|specs/")


def test_docs_cite_papers_not_spec_files_or_issues():
    """Docs, README and notebooks cite papers by key (``docs/papers.md``); the papers page's
    own explanation of the old citations is the one allowed mention."""
    root = DOCS.parent
    files = [*DOCS.rglob("*.md"), root / "README.md", *(root / "notebooks").glob("*.ipynb")]
    hits = []
    for file in files:
        text = file.read_text()
        if file.name == "papers.md":
            text = text.split("## Older citations")[0]
        hits += [f"{file.relative_to(root)}: {m.group(0)}" for m in _SPEC_CITATION.finditer(text)]
    assert not hits, hits
