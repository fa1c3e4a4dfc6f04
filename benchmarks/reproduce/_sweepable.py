"""Linear ensemble agents whose static choices are numeric leaves, so ``jb.sweep`` batches them.

In the library, ``ensemble_size`` and Ensemble++'s ``reference`` / ``perturbation`` laws are
static fields: they set array shapes or select code, so every value is its own compiled program
(5-10 s each on a 2-core CPU, the main cost of a reproduction there). The agents below turn them
into indices into static tuples of candidates:

* :class:`SwitchedEnsemblePlusPlus`: ``ensemble-pp`` with ``reference_id``, ``perturbation_id``
  and ``size_id`` leaves indexing ``references``, ``perturbations`` and ``sizes``;
* :class:`SizedLinES` and :class:`SizedEnsembleSampling`: ``lin-es`` and ``ensemble-sampling``
  with a ``size_id`` leaf indexing ``sizes``.

Each keeps its state at the largest size ``max(sizes)`` with the unused columns at zero, and in
every round draws each candidate from exactly the key the library agent would use for it, then
keeps the selected one. So with the same key it plays **the same actions as the library agent**
with that law and size (the members of an ensemble-sampling agent are keyed by their index, so
the first ``m`` members of the padded ensemble are the ``m`` members of the small one);
``tests/test_reproduce.py`` checks it run by run. The price is drawing every candidate every
round and updating ``max(sizes)`` columns, small next to a compilation for the sizes used here.
None of them is registered.

Example::

    agent = switched_ensemble_pp((2, 4, 8), references=("gaussian", "coordinate"))
    results = jb.sweep(env, agent, key, {"reference_id": [0, 1], "size_id": [0, 1, 2]}, T, R)
"""

from __future__ import annotations

from collections.abc import Sequence

import _common  # noqa: F401  (puts the repository root on sys.path)
import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxbandits.agents.ensembles import EnsemblePlusPlus, EnsembleSampling, LinES
from jaxbandits.agents.select import best_action, chosen_features, uniform_action
from jaxbandits.core import float_dtype
from jaxbandits.linalg import (
    PERTURBATIONS,
    REFERENCES,
    ensemble_init,
    ensemble_sample,
    ensemble_update,
    perturbation_sample,
    prior_factor,
    reference_sample,
)

__all__ = [
    "SizedEnsembleSampling",
    "SizedLinES",
    "SwitchedEnsemblePlusPlus",
    "sized_ensemble_sampling",
    "sized_lin_es",
    "switched_ensemble_pp",
]


def _pad(vector: jax.Array, size: int) -> jax.Array:
    """``vector`` ``(..., M)`` padded with zeros to ``(..., size)``."""
    width = [(0, 0)] * (vector.ndim - 1) + [(0, size - vector.shape[-1])]
    return jnp.pad(vector, width)


def _check_sizes(agent, sizes: tuple[int, ...]) -> None:
    if not sizes or any(not isinstance(m, int) or m < 1 for m in sizes):
        raise ValueError(f"{agent.name}: sizes must be positive integers, got {sizes!r}")
    if max(sizes) != agent.ensemble_size:
        raise ValueError(f"{agent.name}: ensemble_size ({agent.ensemble_size}) must be "
                         f"max(sizes) = {max(sizes)}: the state is kept at the largest size")


def _check_index(agent, field: str, count: int) -> None:
    values = np.ravel(np.asarray(getattr(agent, field)))
    if values.size and (values.min() < 0 or values.max() >= count):
        raise ValueError(f"{agent.name}: {field} must be in [0, {count - 1}], "
                         f"got {getattr(agent, field)!r}")


# ------------------------------------------------------------------------------------------------
# Ensemble++.


class SwitchedEnsemblePlusPlus(EnsemblePlusPlus):
    """``ensemble-pp`` with the reference law, perturbation law and size as sweepable indices.

    ``reference_id``, ``perturbation_id`` and ``size_id`` index the static tuples
    ``references``, ``perturbations`` (default: all five laws of
    :mod:`jaxbandits.linalg.perturb`, so ids index ``REFERENCES`` / ``PERTURBATIONS``) and
    ``sizes`` (default ``()``: just ``ensemble_size``); ``ensemble_size`` must be
    ``max(sizes)``. With ``reference_id = references.index(r)``,
    ``perturbation_id = perturbations.index(p)`` and ``size_id = sizes.index(M)`` it plays
    exactly the actions of ``jb.make_agent("ensemble-pp", reference=r, perturbation=p,
    ensemble_size=M)`` with the same key: ``A_0``, ``zeta`` and ``z`` are drawn at size M from
    the same keys and padded with zeros, and zero columns of ``A`` stay zero. The prior factor
    must be the paper's (``factor_init="paper"``), which does not depend on the perturbation
    law. Use :func:`switched_ensemble_pp` to build one.
    """

    name = "ensemble-pp-switched"
    description = "ensemble-pp with the laws and the ensemble size as sweepable indices"

    reference_id: int = 0
    perturbation_id: int = 1
    size_id: int = 0
    references: tuple[str, ...] = struct.field(pytree_node=False, default=REFERENCES)
    perturbations: tuple[str, ...] = struct.field(pytree_node=False, default=PERTURBATIONS)
    sizes: tuple[int, ...] = struct.field(pytree_node=False, default=())

    @property
    def candidate_sizes(self) -> tuple[int, ...]:
        return self.sizes or (self.ensemble_size,)

    def validate(self) -> None:
        super().validate()
        if self.factor_init != "paper":
            raise ValueError(f"{self.name}: factor_init must be 'paper' (the 'code' prior "
                             "factor depends on the static perturbation law)")
        _check_sizes(self, self.candidate_sizes)
        for field, laws, allowed in (("references", self.references, REFERENCES),
                                     ("perturbations", self.perturbations, PERTURBATIONS)):
            if not laws or any(law not in allowed for law in laws):
                raise ValueError(f"{self.name}: {field} must be a non-empty tuple of laws from "
                                 f"{allowed}, got {laws!r}")
        if "sparse" in self.references + self.perturbations and \
                self.sparsity > min(self.candidate_sizes):
            raise ValueError(f"{self.name}: sparsity ({self.sparsity}) must be at most every "
                             f"size ({min(self.candidate_sizes)}): every candidate is drawn")
        _check_index(self, "reference_id", len(self.references))
        _check_index(self, "perturbation_id", len(self.perturbations))
        _check_index(self, "size_id", len(self.candidate_sizes))

    def _pick(self, key: jax.Array, laws: Sequence[str], law_id, sampler, dtype) -> jax.Array:
        """Every (law, size) candidate drawn from ``key``, padded; the selected one ``(M_max,)``."""
        top = self.ensemble_size
        candidates = jnp.stack([
            jnp.stack([_pad(sampler(key, law, m, sparsity=self.sparsity, dtype=dtype), top)
                       for m in self.candidate_sizes])
            for law in laws])
        return candidates[law_id, self.size_id]

    def init(self, key, spec):
        scale = self.noise_std / jnp.sqrt(jnp.asarray(self.reg, float_dtype()))
        factors = jnp.stack([_pad(prior_factor(key, spec.dim, m, scale, "paper"),
                                  self.ensemble_size) for m in self.candidate_sizes])
        return ensemble_init(factors[self.size_id], self.reg)

    def act(self, state, key, context):
        key_ref, key_fallback = jax.random.split(key)
        zeta = self._pick(key_ref, self.references, self.reference_id, reference_sample,
                          state.factor.dtype)
        theta = ensemble_sample(state, zeta, self.inflation_scale(state))
        if context.arms is None:  # the unit sphere: as ensemble-pp, a uniform point if theta = 0
            fallback = uniform_action(key_fallback, context, theta.shape[-1])
            unit = best_action(context, theta)
            return jnp.where(jnp.any(theta != 0), unit, fallback.astype(unit.dtype)), state
        return best_action(context, theta), state

    def update(self, state, key, context, action, feedback):
        z = self._pick(key, self.perturbations, self.perturbation_id, perturbation_sample,
                       state.factor.dtype)
        x = chosen_features(context, action)
        return ensemble_update(state, x, feedback.reward, self.noise_std * z)


def switched_ensemble_pp(sizes: Sequence[int], references: Sequence[str] = REFERENCES,
                         perturbations: Sequence[str] = PERTURBATIONS,
                         **fields) -> SwitchedEnsemblePlusPlus:
    """A :class:`SwitchedEnsemblePlusPlus` over ``sizes`` x ``references`` x ``perturbations``.

    ``fields`` are the other fields (``reg``, ``noise_std``, ...); the ids default to the first
    candidate of each tuple. Sweep ``reference_id``, ``perturbation_id`` and ``size_id``.
    """
    fields.setdefault("perturbation_id", 0)
    agent = SwitchedEnsemblePlusPlus(ensemble_size=max(sizes), sizes=tuple(int(m) for m in sizes),
                                     references=tuple(references),
                                     perturbations=tuple(perturbations), **fields)
    agent.validate()
    return agent


# ------------------------------------------------------------------------------------------------
# Ensemble sampling.


def _select_sized(agent, state, key) -> jax.Array:
    """A member among the first ``sizes[size_id]``: uniform, or round robin for ``lin-es``."""
    size = jnp.asarray(agent.sizes, jnp.int32)[agent.size_id]
    if getattr(agent, "selection", "uniform") == "round_robin":
        return state.ensemble.ridge.count % size
    return jax.random.randint(key, (), 0, size)


class SizedLinES(LinES):
    """``lin-es`` with the ensemble size m as a sweepable index ``size_id`` into ``sizes``.

    Keeps ``max(sizes)`` members and selects among the first ``sizes[size_id]``; the members are
    keyed by their index, so with ``size_id = sizes.index(m)`` it plays exactly the actions of
    ``jb.make_agent("lin-es", ensemble_size=m)`` (same key, same other fields).
    Use :func:`sized_lin_es` to build one.
    """

    name = "lin-es-sized"
    description = "lin-es with the ensemble size as a sweepable index"

    size_id: int = 0
    sizes: tuple[int, ...] = struct.field(pytree_node=False, default=(25,))

    def validate(self) -> None:
        super().validate()
        _check_sizes(self, self.sizes)
        _check_index(self, "size_id", len(self.sizes))

    def _select(self, state, key):
        return _select_sized(self, state, key)


class SizedEnsembleSampling(EnsembleSampling):
    """``ensemble-sampling`` with the ensemble size M as a sweepable index ``size_id``.

    As :class:`SizedLinES`: plays exactly the actions of
    ``jb.make_agent("ensemble-sampling", ensemble_size=M)`` with ``size_id = sizes.index(M)``.
    """

    name = "ensemble-sampling-sized"
    description = "ensemble-sampling with the ensemble size as a sweepable index"

    size_id: int = 0
    sizes: tuple[int, ...] = struct.field(pytree_node=False, default=(8,))

    def validate(self) -> None:
        super().validate()
        _check_sizes(self, self.sizes)
        _check_index(self, "size_id", len(self.sizes))

    def _select(self, state, key):
        return _select_sized(self, state, key)


def sized_lin_es(sizes: Sequence[int], **fields) -> SizedLinES:
    """A :class:`SizedLinES` over ``sizes``; sweep ``size_id`` (with ``perturb_std`` etc.)."""
    agent = SizedLinES(ensemble_size=max(sizes), sizes=tuple(int(m) for m in sizes), **fields)
    agent.validate()
    return agent


def sized_ensemble_sampling(sizes: Sequence[int], **fields) -> SizedEnsembleSampling:
    """A :class:`SizedEnsembleSampling` over ``sizes``; sweep ``size_id``."""
    agent = SizedEnsembleSampling(ensemble_size=max(sizes), sizes=tuple(int(m) for m in sizes),
                                  **fields)
    agent.validate()
    return agent
