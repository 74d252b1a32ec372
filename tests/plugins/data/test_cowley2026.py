"""The packaged Cowley 2026 data on the real files, and screen placement of its stimuli."""
import numpy as np
from PIL import Image

import brainscore
from brainscore.benchmarks.screen import place_on_screen
from brainscore.data import average_repetition


def test_packaged_repetitions_shape_and_coordinates(shared_data):
    assembly = brainscore.load_dataset("Cowley2026.210325")
    raw = np.load(shared_data / "cowley2026_v4/responses_raw/responses_210325.npy")
    n_presentations = int((~np.isnan(raw[0])).sum())
    assert assembly.dims == ("presentation", "neuroid", "time_bin")
    assert assembly.shape == (n_presentations, 50, 1) == (4840, 50, 1)
    assert assembly["stimulus_id"].values[0] == "image0001" and assembly["object_name"].values[0] == "0001"
    assert list(assembly["repetition"].values[:8]) == [0, 1, 2, 3, 4, 5, 6, 0]  # image0001 has 7 repeats
    assert list(assembly["neuroid_id"].values[:2]) == ["neuron_0", "neuron_1"]
    assert set(assembly["region"].values) == {"V4"}
    assert (int(assembly["time_bin_start"][0]), int(assembly["time_bin_end"][0])) == (50, 150)
    # presentation (image 5, repeat 3) holds the raw count of that image and repeat
    index = np.flatnonzero((assembly["stimulus_id"].values == "image0005") & (assembly["repetition"].values == 3))
    np.testing.assert_array_equal(assembly.values[index[0], :, 0], raw[:, 4, 3])
    assert not np.isnan(assembly.values).any()


def test_average_equals_published_repeat_average(shared_data):
    mean = average_repetition(brainscore.load_dataset("Cowley2026.210325"))
    published = np.load(shared_data / "cowley2026_v4/responses_repeat_averaged/responses_210325.npy")
    np.testing.assert_allclose(mean.values[:, :, 0], published.T, rtol=0, atol=1e-12)


def test_selection_sessions_are_averaged_only():
    for session, shape in (("190923", (1200, 33)), ("201025", (1200, 89)), ("210224", (800, 67))):
        assembly = brainscore.load_dataset(f"Cowley2026.{session}")
        assert assembly.shape[:2] == shape and "repetition" not in assembly.coords


def test_stimulus_set_files_and_screen_crop():
    stimuli = brainscore.load_stimulus_set("Cowley2026.210325")
    assert len(stimuli) == 640 and stimuli.identifier == "Cowley2026.210325"
    with Image.open(stimuli.get_stimulus("image0001")) as image:
        assert image.size == (112, 112)
    # an 8-degree model sees the central 8 of the 11.2 degrees: a crop to round(112 * 8 / 11.2) = 80 px
    placed = place_on_screen(stimuli, target_visual_degrees=8, source_visual_degrees=11.2)
    with Image.open(placed.get_stimulus("image0001")) as image, Image.open(stimuli.get_stimulus("image0001")) as src:
        assert image.size == (80, 80)
        # the crop is the centre of the original (JPEG re-encoding changes pixels only slightly)
        centre = np.asarray(src.convert("RGB"), float)[16:96, 16:96]
        assert np.abs(np.asarray(image, float) - centre).mean() < 4
    padded = place_on_screen(stimuli.iloc[:2], target_visual_degrees=22.4, source_visual_degrees=11.2)
    with Image.open(padded.get_stimulus("image0001")) as image:
        assert image.size == (224, 224) and image.getpixel((0, 0)) == (128, 128, 128)


def test_ceiling_cache_is_keyed_by_the_ceiling_computation():
    from brainscore.benchmarks.neural import NeuralBenchmark
    from brainscore.metrics.score import Score

    data = brainscore.load_dataset("Cowley2026.190923")

    def make(ceiling_func):
        return NeuralBenchmark("Toy.V4-pls", 1, data, similarity_metric=None, visual_degrees=8, number_of_trials=1,
                               ceiling_func=ceiling_func, region="V4")

    assert float(make(lambda assembly: Score.of(0.25)).ceiling) == 0.25
    assert float(make(lambda assembly: Score.of(0.5)).ceiling) == 0.5  # same data and name, other ceiling
