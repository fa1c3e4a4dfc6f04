"""Every public name is importable and documented; the registries are consistent."""

from __future__ import annotations

import inspect

import pytest

import jaxbandits as jb
from jaxbandits import agents, envs, linalg, nets
from jaxbandits.registry import AGENTS, ENVS

MODULES = [jb, agents, envs, linalg, nets]
PUBLIC = [(m.__name__, n) for m in MODULES for n in m.__all__]


@pytest.mark.parametrize("module, name", PUBLIC)
def test_public_name_has_a_docstring(module, name):
    obj = getattr(__import__(module, fromlist=[name]), name)
    assert inspect.getdoc(obj), f"{module}.{name} has no docstring"


@pytest.mark.parametrize("table", [AGENTS, ENVS])
def test_registered_classes_describe_themselves(table):
    for name, cls in table.items():
        assert cls.name == name
        assert cls.description and cls.paper, name
        assert inspect.getdoc(cls), name


def test_agents_default_construct_and_validate():
    for name in AGENTS:
        jb.make_agent(name).validate()
    for name in ENVS:
        try:
            jb.make_env(name).validate()
        except envs.DataNotFoundError:
            continue  # data-backed envs (shuttle, magic, obd-replay) on a machine without the files
