"""A layer read a block of neuroids at a time from its features file (issue 22), and row copies of bounded size.

ResNet-18's ``layer1.1`` on Marques 2020's 9097 gratings is 7.3 GB of float32; a per-neuroid analysis
reads it in column blocks (:class:`LayerBlocks`), and copies between files (``expand_rows``) hold a
bounded block, not 256 full rows. Every read here is compared with the values of the whole array.
"""
from __future__ import annotations

import numpy as np
import pytest

from brainscore.benchmarks.base import Presentation
from brainscore.data.blocks import ArrayBlocks, AssemblyBlocks
from brainscore.errors import ValidationError
from brainscore.models import candidates as candidates_module
from brainscore.models.commitment import ModelCommitment
from brainscore.models.extraction import ActivationsExtractor
from brainscore.models.extraction import core, npy_files
from brainscore.models.extraction.core import LayerFeatures, NpyWriter, expand_rows, read_npy_rows
from brainscore.models.preprocessing import Preprocessing

from model_fixtures import TinyNet

PRE = Preprocessing("imagenet", 20)
LAYERS = ["features.0", "features.1", "features.2"]


def _npy(tmp_path, values, name="x.npy"):
    writer = NpyWriter(tmp_path / name, len(values), checksum=False)
    for start in range(0, len(values), 3):
        writer.append(values[start:start + 3])
    return writer.commit()


@pytest.fixture
def array():
    return np.random.default_rng(0).normal(size=(11, 2, 3, 5)).astype(np.float32)


def test_read_npy_rows_gives_the_rows_and_columns_asked_for(tmp_path, array):
    path = _npy(tmp_path, array)
    matrix = array.reshape(11, -1)
    rows = np.array([7, 0, 7, 10, 3])
    np.testing.assert_array_equal(read_npy_rows(path, rows, 4, 17), matrix[rows, 4:17])
    np.testing.assert_array_equal(read_npy_rows(path, np.arange(2, 9)), matrix[2:9])  # one range
    assert read_npy_rows(path, rows, 5, 5).shape == (5, 0)
    np.save(tmp_path / "v1.npy", matrix)  # np.save's version 1.0 header
    np.testing.assert_array_equal(read_npy_rows(tmp_path / "v1.npy", rows, 1, 2), matrix[rows, 1:2])
    with pytest.raises(ValidationError, match="columns 3:31"):
        read_npy_rows(path, rows, 3, 31)
    with pytest.raises(ValidationError, match="rows outside"):
        read_npy_rows(path, np.array([11]))


def test_layer_blocks_read_what_the_assembly_holds(tmp_path, array, monkeypatch):
    ids = np.array([f"s{i:02d}" for i in range(11)])
    features = LayerFeatures("conv", _npy(tmp_path, array), ids)
    import pandas as pd

    stimuli = pd.DataFrame({"stimulus_id": ids[[4, 1, 9, 0, 10, 2, 3, 5, 6, 7, 8]]})
    blocks = features.blocks(stimuli, "m", {"region": np.full(30, "V1", dtype=object)})
    whole = array.reshape(11, -1)[features.rows_for(stimuli["stimulus_id"])]
    assert blocks.shape == (11, 30) and blocks.dtype == np.float32
    np.testing.assert_array_equal(blocks.read(slice(3, 20)), whole[:, 3:20])
    np.testing.assert_array_equal(blocks.read(slice(0, 30), presentations=slice(2, 5)), whole[2:5])
    monkeypatch.setattr(core, "COPY_BLOCK_BYTES", 4 * 11 * 4)  # runs of at most 4 columns: several reads
    scattered = np.array([29, 0, 5, 6, 13, 28, 7])
    np.testing.assert_array_equal(blocks.read(scattered), whole[:, scattered])
    np.testing.assert_array_equal(blocks.read(scattered, presentations=np.array([3, 1])), whole[[3, 1]][:, scattered])
    assert blocks.neuroid_coord("neuroid_id")[7] == "conv.7" and blocks.neuroid_coord("region")[0] == "V1"
    with pytest.raises(KeyError, match="no neuroid coordinate 'colour'"):
        blocks.neuroid_coord("colour")
    memory = LayerFeatures("conv", None, ids, in_memory=array)  # a run without a cache
    np.testing.assert_array_equal(memory.blocks(stimuli).read(scattered), whole[:, scattered])


def test_array_and_assembly_blocks(array):
    from brainscore.data import NeuroidAssembly

    matrix = array.reshape(11, -1)
    blocks = ArrayBlocks(matrix, {"neuroid_id": np.arange(30)})
    np.testing.assert_array_equal(blocks.read(np.array([2, 1]), presentations=np.array([0, 5])), matrix[[0, 5]][:, [2, 1]])
    assembly = NeuroidAssembly(matrix[:, :, None], dims=("presentation", "neuroid", "time_bin"),
                               coords={"neuroid_id": ("neuroid", np.arange(30) * 2)})
    wrapped = AssemblyBlocks(assembly)
    np.testing.assert_array_equal(wrapped.read(slice(4, 9)), matrix[:, 4:9])
    assert wrapped.neuroid_coord("neuroid_id")[3] == 6
    with pytest.raises(ValidationError, match="2-D"):
        ArrayBlocks(array)
    with pytest.raises(ValidationError, match="one value per neuroid"):
        ArrayBlocks(matrix, {"neuroid_id": np.arange(3)})


def test_expand_rows_copies_bounded_blocks(tmp_path, array, monkeypatch):
    """Files shown under several ids: the unique rows are expanded by blocks of at most COPY_BLOCK_BYTES."""
    unique = _npy(tmp_path, array, "unique.npy")
    first_of = np.array([3, 3, 0, 10, 5, 3, 1])
    monkeypatch.setattr(npy_files, "COPY_BLOCK_BYTES", 2 * 2 * 30 * 4)  # 2 stimuli x 2 trials per block
    appended = []
    original = NpyWriter.append
    monkeypatch.setattr(NpyWriter, "append", lambda self, batch: (appended.append(len(batch)), original(self, batch)))
    target = tmp_path / "expanded.npy"
    flat = array.reshape(11, -1)
    expand_rows(unique, target, first_of, 1, checksum=False)
    np.testing.assert_array_equal(np.load(target), array[first_of])
    assert max(appended) == 4 and not unique.exists()
    unique = _npy(tmp_path, flat[:10].reshape(10, 2, 3, 5), "unique2.npy")  # rows of 5 images x 2 trials
    appended.clear()
    expand_rows(unique, tmp_path / "trials.npy", np.array([4, 0, 4]), 2, checksum=False)
    expected = flat[:10].reshape(10, 2, 3, 5)[[8, 9, 0, 1, 8, 9]]
    np.testing.assert_array_equal(np.load(tmp_path / "trials.npy"), expected)
    assert max(appended) == 4


@pytest.mark.parametrize("budget, in_memory", [(10 ** 9, True), (11 * 30 * 4 + 100, False), (0, False)])
def test_row_sink_expands_rows_once_within_its_budget(tmp_path, array, monkeypatch, budget, in_memory):
    """In memory only where the budget holds old and new rows together (the old bytes go back after); else a file
    written by bounded blocks. Either way the rows are those asked for."""
    budget_ = candidates_module._MemoryBudget(budget)
    sink = candidates_module._RowSink(11, tmp_path, budget_)
    sink.append(array[:6])
    sink.append(array[6:])
    sink.commit()
    monkeypatch.setattr(core, "COPY_BLOCK_BYTES", 3 * 30 * 4)
    first_of = np.array([2, 2, 10, 0, 7, 7, 7, 1, 3, 4, 5, 6, 8, 9, 2])
    sink.expand_rows(first_of, 1)
    np.testing.assert_array_equal(np.asarray(sink.values), array[first_of])
    assert (sink._memory is not None) == in_memory
    if in_memory:
        assert budget_.available == budget - 15 * 30 * 4
    sink.close()


def _commit(**kwargs):
    extractor = ActivationsExtractor(TinyNet(), "tiny", PRE, batch_size=4)
    return ModelCommitment("tiny", extractor, LAYERS, **kwargs)


def test_look_at_blocks_read_what_look_at_returns(stimuli):
    model = _commit(region_layer_map={"V1": "features.0"})
    model.start_recording("V1", time_bins=[(70, 170)])
    shuffled = type(stimuli)(stimuli.iloc[::-1].reset_index(drop=True), identifier="reversed",
                             stimulus_paths=dict(stimuli.stimulus_paths))
    blocks = model.look_at_blocks(shuffled)
    assembly = model.look_at(shuffled).squeeze("time_bin")
    assert blocks.shape == assembly.shape
    np.testing.assert_array_equal(blocks.read(slice(None)), assembly.values)
    np.testing.assert_array_equal(blocks.neuroid_coord("neuroid_id"), assembly["neuroid_id"].values)
    assert set(blocks.neuroid_coord("region")) == {"V1"}
    model.start_recording("V1", time_bins=[(70, 120), (120, 170)])
    assert model.look_at_blocks(stimuli) is None  # two bins: only look_at
    model.start_task("passive")
    assert model.look_at_blocks(stimuli) is None


def test_prepare_extracts_a_recording_without_loading_it(stimuli, monkeypatch):
    """The runner's warm-up (Presentation.prepare) leaves the features file in the cache and holds nothing."""
    model = _commit(region_layer_map={"V1": "features.0"})
    shown = Presentation(stimuli, number_of_trials=1, region="V1", time_bins=[(70, 170)])

    def refuse(*args, **kwargs):
        raise AssertionError("the warm-up loaded the layer")
    monkeypatch.setattr(LayerFeatures, "assembly", refuse)
    shown.prepare(model)
    assert model.activations_model.forward_passes == 2  # 7 images in batches of 4
    path, = model.activations_model.cache_paths(stimuli, ["features.0"]).values()
    assert path.is_file()
    blocks = shown.show_blocks(model)  # from the file: no second pass, nothing loaded
    assert model.activations_model.forward_passes == 2 and blocks.shape == (7, 4 * 9 * 9)
