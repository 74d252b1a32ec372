"""Seed 004, the 2019 README: ``brainscore.get_assembly`` and ``brainscore.metrics.rdm.RDM``, run as written.

Swapped: the assembly identifier ``dicarlo.Majaj2015`` (the reference's S3 data) for ``Cowley2026.190923``
(repeat-averaged V4 spike counts of Cowley et al. 2026, in ../shared/data).
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

SRC = Path(__file__).resolve().parents[2] / "src"


def test_basic_usage_as_written():
    import brainscore
    data = brainscore.get_assembly("Cowley2026.190923")
    assert data.sizes["presentation"] == 1200 and data.sizes["neuroid"] == 33

    from brainscore.metrics.rdm import RDM
    metric = RDM()
    score = metric(assembly1=data, assembly2=data)
    # the README printed center 1 and error 0; here a scalar 1 (the RDM metric is not cross-validated)
    assert float(score) == pytest.approx(1.0, abs=1e-6)


def test_rdm_compares_different_assemblies():
    import brainscore
    from brainscore.metrics.rdm import RDM

    data = brainscore.get_assembly("Cowley2026.190923")
    half = data.isel(neuroid=np.arange(0, 33, 2))  # half of the neurons against all of them
    score = RDM()(assembly1=half, assembly2=data)
    assert 0.5 < float(score) < 1.0
    assert float(score) == pytest.approx(float(brainscore.load_metric("rdm")(half, data)), abs=1e-12)


def test_get_stimulus_set():
    import brainscore
    stimuli = brainscore.get_stimulus_set("Cowley2026.190923")
    assert len(stimuli) == 1200 and stimuli.get_stimulus(stimuli["stimulus_id"].iloc[0]).is_file()


def test_import_brainscore_stays_cheap():
    """The README's names are lazy attributes: ``import brainscore`` imports neither xarray nor torch."""
    code = ("import sys, brainscore; f = brainscore.get_assembly; "
            "assert 'xarray' not in sys.modules and 'torch' not in sys.modules, sorted(sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True, env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"})
