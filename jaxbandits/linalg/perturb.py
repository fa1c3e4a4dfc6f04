"""Reference, perturbation and update-index distributions of Ensemble++ (one place for all).

Ensemble++ (Li et al. 2024, App. B.1, Algs. 3-7, App. E) uses three laws on R^M:

* **reference** ``zeta ~ P_zeta`` (acting): isotropic, ``E[zeta zeta^T] = I_M``; the sample is
  ``theta = mu + A zeta``.
* **perturbation** ``z ~ P_z`` (updating): ``z = zeta / ||zeta||``, unit-norm and conditionally
  ``1/sqrt(M)``-sub-Gaussian (Lemma 4.2); ``"gaussian"`` is the experiments' ``N(0, I_M / M)``,
  isotropic with ``E||z||^2 = 1`` but not unit-norm (Li et al. 2024, Sec. 5: "Gaussian
  perturbation").
* **update index** ``xi`` (the neural loss, Eq. 8): the whole support of a discrete reference law,
  enumerated, so the symmetrised loss is exact (all ``2M`` vectors ``+-sqrt(M) e_m`` for
  ``"coordinate"``).

============== ================================================== ============= ==============
name           reference sampler (Alg.)                           ``||zeta||``  P(<v,zeta>>=1)
============== ================================================== ============= ==============
``gaussian``   ``zeta_i ~ N(0, 1)`` (Alg. 5)                      random        ~0.159
``sphere``     ``sqrt(M) v / ||v||``, ``v ~ N(0, I_M)`` (Alg. 3)  ``sqrt(M)``   >= 0.0668
``cube``       ``zeta_i ~ Unif{+-1}`` (Alg. 4)                    ``sqrt(M)``   >= 7/64 (*)
``coordinate`` ``s sqrt(M) e_i``, ``i ~ Unif[M]``, ``s = +-1``    ``sqrt(M)``   >= 1/(2M)
``sparse``     ``s`` random entries ``+-sqrt(M/s)`` (Alg. 7)      ``sqrt(M)``   not known
============== ================================================== ============= ==============

(*) The paper's Table 1 prints 7/32, which is Hollom & Portier's bound on the two-sided
``P(|<v, zeta>| >= 1)``; the one-sided bound is 7/64, attained at ``v = (1, ..., 1) / sqrt(6)``.

The neural baselines add one law that is not isotropic, ``"one_hot"`` (Ensemble+'s index
``e_m`` with ``m ~ Unif[M]``, unscaled, so ``E[zeta zeta^T] = I_M / M``; its update set is the
``M`` vectors ``e_m``): :data:`INDEX_LAWS` lists the laws a neural agent's reference and update
index may take.

Every sampler takes a key and the static name; ``sparsity`` is the ``s`` of ``"sparse"`` (the
authors' code uses 2).

Example::

    zeta = reference_sample(key, "sphere", 8)            # (8,), ||zeta|| = sqrt(8)
    z = perturbation_sample(key, "sphere", 8)            # (8,), ||z|| = 1
    xi = update_index_set("coordinate", 8)               # (16, 8): +-sqrt(8) e_m
"""

from __future__ import annotations

import difflib
import itertools
import math

import jax
import jax.numpy as jnp
import numpy as np

from jaxbandits.core import distinct_indices, float_dtype

__all__ = [
    "INDEX_LAWS",
    "PERTURBATIONS",
    "REFERENCES",
    "check_distribution",
    "perturbation_sample",
    "reference_sample",
    "update_index_set",
]

REFERENCES: tuple[str, ...] = ("gaussian", "sphere", "cube", "coordinate", "sparse")
PERTURBATIONS: tuple[str, ...] = REFERENCES
INDEX_LAWS: tuple[str, ...] = REFERENCES + ("one_hot",)

_MAX_ENUMERATED = 1 << 16  # the largest update-index set that update_index_set will build


def check_distribution(kind: str, size: int, sparsity: int = 2, *, field: str = "kind",
                       choices: tuple[str, ...] = INDEX_LAWS) -> None:
    """Raises ``ValueError`` (naming ``field``, with close matches) for a law not in ``choices``
    or an invalid ``sparsity``."""
    if kind not in choices:
        close = difflib.get_close_matches(str(kind), choices, n=2, cutoff=0.5)
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        raise ValueError(f"{field} must be one of {choices}, got {kind!r}{hint}")
    if kind == "sparse" and not (isinstance(sparsity, int) and 1 <= sparsity <= size):
        raise ValueError(f"sparsity must be an integer in [1, {size}] (the ensemble size), "
                         f"got {sparsity!r}")


def reference_sample(
    key: jax.Array, kind: str, size: int, *, sparsity: int = 2, dtype=None
) -> jax.Array:
    """One isotropic reference vector ``zeta`` in ``R^M`` (``E[zeta zeta^T] = I_M``).

    Args:
      key: the key of this draw.
      kind: ``"gaussian"``, ``"sphere"``, ``"cube"``, ``"coordinate"`` or ``"sparse"`` (static).
      size: M, the ensemble size (static).
      sparsity: s, the number of non-zero entries of ``"sparse"`` (static).
      dtype: the float dtype (default float32, or float64 under x64).

    Returns:
      ``(M,)``; ``||zeta|| = sqrt(M)`` exactly for every law but ``"gaussian"``.
    """
    check_distribution(kind, size, sparsity)
    dtype = dtype or float_dtype()
    if kind == "gaussian":
        return jax.random.normal(key, (size,), dtype)
    if kind == "sphere":
        v = jax.random.normal(key, (size,), dtype)
        return math.sqrt(size) * v / jnp.linalg.norm(v)
    if kind == "cube":
        return jax.random.rademacher(key, (size,), dtype)
    if kind == "one_hot":
        return jax.nn.one_hot(jax.random.randint(key, (), 0, size), size, dtype=dtype)
    key_index, key_sign = jax.random.split(key)
    if kind == "coordinate":
        index = jax.random.randint(key_index, (), 0, size)
        sign = jax.random.rademacher(key_sign, (), dtype)
        return jnp.zeros((size,), dtype).at[index].set(sign * math.sqrt(size))
    # sparse: s distinct coordinates with independent signs, each of magnitude sqrt(M / s).
    chosen = distinct_indices(key_index, size, sparsity)
    signs = jax.random.rademacher(key_sign, (sparsity,), dtype)
    return jnp.zeros((size,), dtype).at[chosen].set(signs * math.sqrt(size / sparsity))


def perturbation_sample(
    key: jax.Array, kind: str, size: int, *, sparsity: int = 2, dtype=None
) -> jax.Array:
    """One perturbation vector ``z`` in ``R^M`` for the factor update (Li et al. 2024, App. B.1,
    Algs. 3-7).

    ``z = zeta / sqrt(M)`` with ``zeta`` from :func:`reference_sample`: unit-norm and isotropic
    with ``E[z z^T] = I_M / M`` (``"sphere"``: uniform on ``S^{M-1}``; ``"cube"``:
    ``Unif{+-1/sqrt(M)}^M``; ``"coordinate"``: ``+-e_i``; ``"sparse"``: ``s`` entries
    ``+-1/sqrt(s)``). ``"gaussian"`` is ``N(0, I_M / M)``, the experiments' choice, whose norm is
    random (``E||z||^2 = 1``).

    Returns:
      ``(M,)``.
    """
    return reference_sample(key, kind, size, sparsity=sparsity, dtype=dtype) / math.sqrt(size)


def update_index_set(kind: str, size: int, *, sparsity: int = 2, dtype=None) -> jax.Array:
    """The whole support of a discrete reference law, as the rows of an ``(N, M)`` array.

    * ``"coordinate"``: the ``2M`` vectors ``+-sqrt(M) e_m`` (Ensemble++'s default update
      distribution, which makes the symmetrised loss of Eq. 8 exact);
    * ``"cube"``: the ``2^M`` vertices of ``{+-1}^M``;
    * ``"sparse"``: the ``C(M, s) 2^s`` vectors with ``s`` entries ``+-sqrt(M/s)``.

    Averaging any function over the rows equals its expectation under the reference law
    (``mean_n xi_n xi_n^T = I_M``). The continuous laws (``"gaussian"``, ``"sphere"``) have no
    finite support: draw ``NpS`` vectors with :func:`reference_sample` instead (the authors' code
    uses 16 per data point).

    Raises:
      ValueError: for a continuous law, or when the set would exceed 65,536 rows.
    """
    check_distribution(kind, size, sparsity)
    dtype = dtype or float_dtype()
    if kind in ("gaussian", "sphere"):
        raise ValueError(f"kind {kind!r} has continuous support; sample it with "
                         "reference_sample (e.g. 16 draws per data point) instead")
    if kind == "one_hot":
        return jnp.eye(size, dtype=dtype)
    if kind == "coordinate":
        eye = math.sqrt(size) * np.eye(size)
        return jnp.asarray(np.concatenate([eye, -eye]), dtype)
    if kind == "cube":
        _check_enumerable(2.0**size, kind)
        return jnp.asarray(list(itertools.product((1.0, -1.0), repeat=size)), dtype)
    _check_enumerable(math.comb(size, sparsity) * 2.0**sparsity, kind)
    rows = []
    for support in itertools.combinations(range(size), sparsity):
        for signs in itertools.product((1.0, -1.0), repeat=sparsity):
            row = np.zeros(size)
            row[list(support)] = signs
            rows.append(row)
    return jnp.asarray(np.sqrt(size / sparsity) * np.asarray(rows), dtype)


def _check_enumerable(count: float, kind: str) -> None:
    if count > _MAX_ENUMERATED:
        raise ValueError(f"the {kind!r} update-index set has {count:.0f} vectors (more than "
                         f"{_MAX_ENUMERATED}); sample it with reference_sample instead")
