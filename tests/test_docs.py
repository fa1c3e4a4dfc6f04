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

pytestmark = pytest.mark.unoptimized  # checks what programs compute, not bits (conftest.py)

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


# What a citation must not look like: the implementation notes' file names (``seed-000`` ...),
# issue numbers, and the notes' own labels (section numbers, acceptance checks, "A7"-style
# ambiguity items, "E4"-style experiment labels, "E-LOG"-style task labels). The papers' own
# numbering is written "Sec. 7.1", "Alg. 2", "App. E.2", "Fig. 3" and so on (docs/papers.md).
_SPEC_CITATION = re.compile(
    "|".join([
        r"(?i:\bseed-?00\d)",
        r"(?i:\bissues? #?\d+\b)",
        r"\bspecs?/",
        r"(?i:\bsections? \d+(?:\.\d+)*[a-z]?\b)",
        r"(?i:\bchecks? \d+\b(?![.\d]))",
        r"[(,;] ?A\d{1,2}\b(?![.\d])",
        r"\bE\d{1,2}\b(?![.\d])",
        r"\bE-(?:LIN|LOG|DIST|QUAD)\b",
        r"\u00a7 ?\d",
    ]))

ROOT = DOCS.parent
_CHECKED = [*DOCS.rglob("*.md"), ROOT / "README.md", *(ROOT / "notebooks").glob("*.ipynb"),
            *(ROOT / "jaxbandits").rglob("*.py"), *(ROOT / "tests").glob("*.py"),
            *(ROOT / "benchmarks").rglob("*.py"), *(ROOT / "benchmarks").rglob("*.md"),
            *(ROOT / "benchmarks").rglob("*.sh")]


def _spec_citations(files) -> list[str]:
    hits = []
    for file in files:
        if file == Path(__file__):  # the patterns above
            continue
        text = file.read_text()
        if file.name == "papers.md":  # its own explanation of the old citations
            text = text.split("## Older citations")[0]
        for m in _SPEC_CITATION.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            hits.append(f"{file.relative_to(ROOT)}:{line}: {m.group(0)!r}")
    return hits


def test_the_citation_patterns_catch_what_they_should():
    bad = ["(seed-002 section 4.3)", "Seed-001's", "issue 12", "(A17, the default)",
           "(A7)", "the spec's check 9", "Ensemble++ E10", "E-LOG", "\u00a72.6", "specs/x.md"]
    good = ["Li et al. 2024, Alg. 2", "Oh et al. 2026, App. E.2", "Fig. E.1(a)", "Table E.3",
            "training check 2.1e-16", "an A100 GPU", "seed-steps/s", "instance_seed", "Sec. 7.1"]
    assert not [s for s in bad if not _SPEC_CITATION.search(s)]
    assert not [s for s in good if _SPEC_CITATION.search(s)]


def test_docs_code_and_tests_cite_papers_not_spec_files_or_issues():
    """Docs, README, notebooks, the library, the tests and the benchmarks cite papers by key
    (``docs/papers.md``) with the paper's own numbering; the papers page's explanation of the
    old citations is the one allowed mention. Report tables and panels are named as the papers
    name them (Sun et al. 2025's "linear", "logistic", "distance" and "quadratic" bandits)."""
    hits = _spec_citations(_CHECKED)
    assert not hits, hits


def test_jaxbandits_list_prints_paper_keys(capsys):
    """The paper column of ``jaxbandits list`` holds paper keys, never a spec label."""
    from jaxbandits.cli import main

    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "paper" in out and "Li et al. 2024" in out and "Oh et al. 2026" in out
    hits = [line for line in out.splitlines() if _SPEC_CITATION.search(line)]
    assert not hits, hits


def test_the_catalogue_page_is_generated_from_the_registry():
    """docs/catalogue.md is ``docs/gen_catalogue.py``'s output for today's registry (after adding
    or changing an environment or agent, run ``python docs/gen_catalogue.py``), and it lists every
    registered name with its paper."""
    import importlib.util

    from jaxbandits.registry import AGENTS, ENVS, describe_agent

    spec = importlib.util.spec_from_file_location("gen_catalogue", DOCS / "gen_catalogue.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    page = gen.render()
    for name, cls in gen._library(ENVS).items():
        assert f"### `{name}`" in page and cls.paper in page, name
    for name in gen._library(AGENTS):
        assert f"### `{name}`" in page and describe_agent(name)[1] in page, name
    assert (DOCS / "catalogue.md").read_text() == page, "run: python docs/gen_catalogue.py"
