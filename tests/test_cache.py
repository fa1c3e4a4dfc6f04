"""The persistent compilation cache: a second `jaxbandits run` of the same experiment, in a new
process, reads its programs from disk and compiles in under a quarter of the first run's time."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import jax
import pytest

import jaxbandits as jb

COMMAND = [sys.executable, "-m", "jaxbandits.cli", "run", "--env", "linear", "--horizon", "20",
           "--runs", "2", "--agents", "lin-ts,lin-ucb", "--progress", "none", "--cpu-devices",
           "1"]


def _compile_seconds(tmp_path, cache: str) -> float:
    env = {**os.environ, "JAXBANDITS_COMPILATION_CACHE": cache}
    out = subprocess.run(COMMAND, cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=600, check=True).stdout
    match = re.search(r"compile time: ([0-9.]+) s in all \((.*)\)", out)
    assert match, out
    assert (cache in match.group(2)) == (cache != "off"), match.group(2)
    return float(match.group(1))


@pytest.mark.full
def test_second_process_reuses_the_compilation_cache(tmp_path):
    cache = tmp_path / "cache"
    first = _compile_seconds(tmp_path, str(cache))
    assert any(cache.iterdir())  # the programs were written
    second = _compile_seconds(tmp_path, str(cache))
    assert second < first / 4, (first, second)


def test_cache_location_and_off_switch(tmp_path, monkeypatch):
    before = jax.config.jax_compilation_cache_dir
    try:
        monkeypatch.setenv("JAXBANDITS_COMPILATION_CACHE", str(tmp_path / "env"))
        assert jb.use_compilation_cache() == tmp_path / "env"
        assert jax.config.jax_compilation_cache_dir == str(tmp_path / "env")
        assert jb.use_compilation_cache(tmp_path / "arg") == tmp_path / "arg"  # argument wins
        assert jb.use_compilation_cache("off") is None
        assert jax.config.jax_compilation_cache_dir is None
        monkeypatch.setenv("JAXBANDITS_COMPILATION_CACHE", "off")
        assert jb.use_compilation_cache() is None
        monkeypatch.delenv("JAXBANDITS_COMPILATION_CACHE")
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
        assert jb.cache.default_cache_dir() == tmp_path / "xdg" / "jaxbandits" / "jax"
    finally:
        jax.config.update("jax_compilation_cache_dir", before)
