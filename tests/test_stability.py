"""Every chapter prints the same numbers when its model outputs carry float noise.

Another processor computes slightly different hidden states (other float kernels, thread
counts, summation orders). The nbval references (``tests/nbval/*.ipynb``, the ci profile) must
pass there too, so each is re-executed here with every model output perturbed by 1e-6 relative
(``LRD_PERTURB``, :mod:`lrd.engine.perturb`) and compared by nbval with the same sanitize rules as the
plain run. Perturbed units are cached under their own keys (the first run computes them).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lrd.engine.perturb import ENV_VAR

NBVAL = Path(__file__).parent / "nbval"
REFERENCES = sorted(NBVAL.glob("*.ipynb"))
LEVEL = "1e-6"  # relative; float noise between CPUs is about 1e-7 to 1e-6 of the hidden states


def test_every_chapter_has_a_reference():
    from lrd.units import CHAPTER_UNITS

    assert {p.stem for p in REFERENCES} >= set(CHAPTER_UNITS)


@pytest.mark.integration
@pytest.mark.parametrize("reference", REFERENCES, ids=lambda p: p.stem)
def test_printed_outputs_do_not_move_with_float_noise(reference, tmp_path, require_panel):
    from lrd.engine.packs import PACKS

    require_panel(*PACKS)
    copy = tmp_path / reference.name  # executed in a copy: its results/ must not overwrite the tracked ones
    shutil.copy(reference, copy)
    shutil.copytree(NBVAL / "results", tmp_path / "results")  # the other chapters' results (the appendix reads designs there)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--nbval", "--nbval-current-env", "--nbval-sanitize-with",
         str(NBVAL / "sanitize.cfg"), "-p", "no:cacheprovider", "-q", str(copy)],
        cwd=tmp_path, env={**os.environ, ENV_VAR: LEVEL}, capture_output=True, text=True)
    assert proc.returncode == 0, (
        f"{reference.stem} printed other outputs than its reference with its model outputs perturbed by "
        f"{LEVEL} (relative, {ENV_VAR}); a printed number depends on float noise (an unconverged fit, a "
        f"near-tie, too many digits). nbval's report:\n{proc.stdout[-8000:]}{proc.stderr[-2000:]}")
