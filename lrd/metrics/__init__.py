"""Measurements of layer-wise representation dynamics, one module per family.

Every function takes ``layers`` of shape ``(n_layers, n_samples, d_model)``,
layer 0 = embeddings, layer ``L = n_layers - 1`` = last block.
"""

from lrd.metrics.augmentation import dime, infonce, lidar
from lrd.metrics.cosine import mean_cosine_similarity
from lrd.metrics.curvature import curvature, prompt_curvature
from lrd.metrics.entropy import (
    dataset_entropy,
    effective_rank,
    gram_entropy,
    matrix_entropy,
    normalize_rows,
    prompt_entropy,
    spectrum_entropy,
)
from lrd.metrics.frenet import (
    FrenetResult,
    frenet,
    grassmann_distance,
    menger_curvature,
    subspace_basis,
)
from lrd.metrics.gfmi import gfmi
from lrd.metrics.nrs import adjust_nrs, nrs
from lrd.metrics.profile import LRDProfile, lrd_profile, model_scores, profile_rows

__all__ = [
    "curvature",
    "dataset_entropy",
    "dime",
    "effective_rank",
    "gram_entropy",
    "infonce",
    "lidar",
    "matrix_entropy",
    "normalize_rows",
    "prompt_curvature",
    "prompt_entropy",
    "spectrum_entropy",
    "adjust_nrs",
    "LRDProfile",
    "lrd_profile",
    "model_scores",
    "profile_rows",
    "FrenetResult",
    "frenet",
    "gfmi",
    "grassmann_distance",
    "mean_cosine_similarity",
    "menger_curvature",
    "nrs",
    "subspace_basis",
]
