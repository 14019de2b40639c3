"""Float-noise perturbation of model outputs: a check that printed numbers do not depend on it.

The same model gives slightly different hidden states on another processor (other BLAS or
oneDNN kernels, other thread counts, another summation order): differences of about
:math:`10^{-7}` to :math:`10^{-6}` relative. A number printed by a chapter must not move with
them. To check that on one machine, set the environment variable ``LRD_PERTURB`` to a relative
size, e.g.

.. code-block:: bash

    LRD_PERTURB=1e-6 lrd run mid_layer --profile ci -o /tmp/perturbed.ipynb

and every array a chapter's numbers come from is multiplied, element by element, by
:math:`1 + \\varepsilon z` with :math:`\\varepsilon` = ``LRD_PERTURB`` and :math:`z` standard
normal, seeded by a tag naming the array and its shape (so a perturbed run is itself
reproducible):

* the pooled and token hidden states of :func:`lrd.engine.extract` / :func:`lrd.extract_variants`,
  perturbed on the way out, after the hidden-state cache (the cache keeps exact states and no
  forward pass is repeated);
* the multiple-choice log-likelihoods (:func:`lrd.engine.scoring.loglikelihoods`), and everything a
  removal sweep returns (:func:`lrd.methods.relevance.removal_sweep`: log-likelihoods, cosine
  relevance, last-token states; :func:`lrd.methods.relevance.encoder_removal_states`; the Taylor
  importance).

The level enters every unit's cache key (:meth:`lrd.units.Unit.key`), so perturbed units are
computed and cached apart from the exact ones. ``tests/test_stability.py`` re-executes every
chapter's ci reference notebook under ``LRD_PERTURB=1e-6`` and requires the same printed
outputs. Unset (or ``0``), nothing is perturbed.
"""

from __future__ import annotations

import math
import os
import zlib

import numpy as np

#: The environment variable holding the relative size of the perturbation.
ENV_VAR = "LRD_PERTURB"

#: Largest accepted level: beyond float noise, a perturbation tests something else.
MAX_LEVEL = 1e-3


def perturbation_level() -> float:
    """The relative perturbation that ``LRD_PERTURB`` asks for; 0.0 when it is unset or empty.

    Raises
    ------
    ValueError
        When the variable is not a number in ``[0, MAX_LEVEL]``.
    """
    raw = os.environ.get(ENV_VAR, "").strip()
    if not raw:
        return 0.0
    try:
        level = float(raw)
    except ValueError:
        raise ValueError(f"{ENV_VAR}={raw!r} is not a number; set it to a relative size such as 1e-6, "
                         f"or unset it") from None
    if not (math.isfinite(level) and 0 <= level <= MAX_LEVEL):
        raise ValueError(f"{ENV_VAR}={raw!r} must be a relative size in [0, {MAX_LEVEL:g}] (float noise is "
                         f"about 1e-7 to 1e-6); set e.g. {ENV_VAR}=1e-6, or unset it")
    return level


def perturb(array: np.ndarray, *, tag: str) -> np.ndarray:
    """``array * (1 + level * z)`` elementwise, ``z`` standard normal seeded by ``tag`` and the shape.

    Returns ``array`` itself when ``LRD_PERTURB`` is unset or 0, or when it is not a float
    array. The result has the dtype of ``array``.

    Parameters
    ----------
    array : ndarray
        Model outputs (hidden states, log-likelihoods, ...).
    tag : str
        Names the array (``"extract"``, ``"loglikelihoods"``, ...): arrays of the same shape
        with different tags get different noise.

    Examples
    --------
    >>> import os
    >>> os.environ[ENV_VAR] = "1e-6"
    >>> x = np.ones(3)
    >>> bool(np.all(np.abs(perturb(x, tag="demo") - 1) < 1e-5)), bool(np.any(perturb(x, tag="demo") != 1))
    (True, True)
    >>> del os.environ[ENV_VAR]
    >>> perturb(x, tag="demo") is x
    True
    """
    level = perturbation_level()
    x = np.asarray(array)
    if level == 0 or not np.issubdtype(x.dtype, np.floating):
        return array
    rng = np.random.default_rng([zlib.crc32(tag.encode()), *x.shape])
    return (x * (1.0 + level * rng.standard_normal(x.shape))).astype(x.dtype)
