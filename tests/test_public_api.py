"""Every public name is importable and documented; the registries are consistent."""

from __future__ import annotations

import inspect

import pytest

import jaxbandits as jb
from jaxbandits import agents, data, envs, linalg, nets, ope, runner
from jaxbandits.registry import AGENTS, ALIASES, ENVS, describe_agent

MODULES = [jb, agents, data, envs, linalg, nets, ope, runner]
PUBLIC = [(m.__name__, n) for m in MODULES for n in m.__all__]


@pytest.mark.parametrize("module, name", PUBLIC)
def test_public_name_has_a_docstring(module, name):
    obj = getattr(__import__(module, fromlist=[name]), name)
    assert inspect.getdoc(obj), f"{module}.{name} has no docstring"


@pytest.mark.parametrize("table", [AGENTS, ENVS])
def test_registered_classes_describe_themselves(table):
    for name, cls in table.items():
        if name in ALIASES:  # a configuration of a class: it describes itself by its fields
            alias = ALIASES[name]
            assert alias.cls is cls and alias.description and alias.paper, name
            assert jb.make_agent(name).name == name
        else:
            assert cls.name == name
            assert cls.description and cls.paper, name
        assert inspect.getdoc(cls), name


def test_aliases_are_configurations_not_classes():
    """The fourteen neural dueling names are NVLDB / NDB with their rule (and weighting) set:
    ``jb.make_agent`` builds them, ``jaxbandits list`` describes them, and an override wins."""
    from jaxbandits.agents import NDB, NVLDB

    dueling = [n for n in ALIASES if n.startswith(("nvldb", "nldb", "ndb"))]
    assert len(dueling) == 14 and {ALIASES[n].cls for n in dueling} == {NVLDB, NDB}
    agent = jb.make_agent("nvldb-ts-osym")
    assert type(agent) is NVLDB and (agent.rule, agent.variance) == ("ts-osym", "aware")
    assert jb.make_agent("nldb-ucb-csym").variance == "agnostic"
    assert jb.make_agent("ndb-ts").rule == "ts-asym"
    assert jb.make_agent("nvldb-ts-osym", rule="ucb-asym").name == "nvldb-ucb-asym"
    assert describe_agent("nldb-ts-asym")[0].startswith("NLDB-TS-ASYM: neural dueling")


def test_agents_default_construct_and_validate():
    for name in AGENTS:
        jb.make_agent(name).validate()
    for name in ENVS:
        try:
            jb.make_env(name).validate()
        except envs.DataNotFoundError:
            continue  # data-backed envs (shuttle, magic, obd-replay) on a machine without the files


def test_one_version_for_the_package_the_metadata_and_the_command_line(capsys):
    """``jb.__version__``, ``jaxbandits --version`` and (when installed) the package metadata
    agree, and pyproject reads the version from ``jb.__version__`` and lists the project URLs."""
    import importlib.metadata
    import pathlib
    import tomllib

    from jaxbandits.cli import main

    with pytest.raises(SystemExit):
        main(["--version"])
    assert capsys.readouterr().out.startswith(f"jaxbandits {jb.__version__} ")
    try:
        assert importlib.metadata.version("jaxbandits") == jb.__version__
    except importlib.metadata.PackageNotFoundError:
        pass
    project = tomllib.loads((pathlib.Path(__file__).resolve().parents[1]
                             / "pyproject.toml").read_text())
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "jaxbandits.__version__"}
    urls = project["project"]["urls"]
    assert {"Homepage", "Documentation", "Source", "Issues"} <= set(urls)
    assert all(url.startswith("https://") for url in urls.values())
