"""Placing stimuli on the model's screen: the reference's pixels (Schrimpf et al. 2020), written in parallel.

The reference pastes an image centred on a grey (128, 128, 128) canvas of round(ratio * size) when the
model sees more degrees than the experiment showed, and centre-crops otherwise, with no resampling;
then saves with PIL's defaults. Ours writes PNG at compression level 1 (lossless, so the same pixels)
and converts on several threads; the pixels must be exactly the reference's.
"""
import numpy as np
import pytest
from PIL import Image

from brainscore.benchmarks import screen
from brainscore.data.stimuli import StimulusSet


def reference_placement(path, ratio):
    """The reference's conversion of one file (REFERENCE_FACTS: benchmark_helpers/screen.py), saved with PIL defaults."""
    image = Image.open(path).convert("RGB")
    width, height = image.size
    new_w, new_h = round(width * ratio), round(height * ratio)
    if ratio >= 1:
        canvas = Image.new("RGB", (new_w, new_h), (128, 128, 128))
        canvas.paste(image, ((new_w - width) // 2, (new_h - height) // 2))
        return canvas
    left, top = (width - new_w) // 2, (height - new_h) // 2
    return image.crop((left, top, left + new_w, top + new_h))


@pytest.fixture
def mixed_stimuli(tmp_path):
    """12 random images of odd sizes, half PNG, half JPEG."""
    rng = np.random.default_rng(3)
    folder = tmp_path / "images"
    folder.mkdir()
    rows = []
    for i in range(12):
        size = (37 + 2 * i, 29 + i)
        path = folder / f"img{i:02d}.{'png' if i % 2 else 'jpg'}"
        Image.fromarray(rng.integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)).save(path)
        rows.append({"stimulus_id": f"s{i:02d}", "stimulus_path": str(path)})
    return StimulusSet({"stimulus_id": [r["stimulus_id"] for r in rows],
                        "stimulus_path": [r["stimulus_path"] for r in rows]}, identifier="mixed")


@pytest.mark.parametrize("target, source", [(8, 4), (4, 10)])  # padded to 2x; cropped to 0.4x
def test_placed_images_have_the_reference_pixels_png_and_jpeg(mixed_stimuli, tmp_path, monkeypatch, target, source):
    monkeypatch.setenv("BRAINSCORE_HOME", str(tmp_path / "home"))
    placed = screen.place_on_screen(mixed_stimuli, target, source)
    assert placed.identifier == f"mixed--target{target:.2f}--source{source:.2f}"
    for sid in mixed_stimuli["stimulus_id"]:
        original = mixed_stimuli.get_stimulus(sid)
        ours = placed.get_stimulus(sid)
        assert ours.suffix == original.suffix
        expected = reference_placement(original, target / source)
        if ours.suffix == ".jpg":  # the reference's lossy re-encode at PIL's default quality, exactly
            expected_file = tmp_path / f"expected-{sid}.jpg"
            expected.save(expected_file)
            assert ours.read_bytes() == expected_file.read_bytes()
        else:
            with Image.open(ours) as image:
                assert image.size == expected.size
                np.testing.assert_array_equal(np.asarray(image.convert("RGB")), np.asarray(expected))


def test_png_is_written_at_the_fast_lossless_level(mixed_stimuli, tmp_path, monkeypatch):
    """Level 1 differs from PIL's default level 6 in bytes only (and decodes to the same pixels)."""
    monkeypatch.setenv("BRAINSCORE_HOME", str(tmp_path / "home"))
    assert screen.PNG_OPTIONS == {"compress_level": 1}
    placed = screen.place_on_screen(mixed_stimuli, 8, 4)
    sid = "s01"  # a PNG
    default = tmp_path / "default.png"
    reference_placement(mixed_stimuli.get_stimulus(sid), 2).save(default)
    ours = placed.get_stimulus(sid)
    assert ours.read_bytes() != default.read_bytes()
    with Image.open(ours) as a, Image.open(default) as b:
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize("degrees", [132.6, 999])
def test_a_huge_field_of_view_gets_a_bounded_canvas_showing_the_same_screen(tmp_path, monkeypatch, degrees):
    """Issue 36: visual_degrees() = 132.6 made an 8002 px canvas per 181 px image (999 degrees: 60,000 px, 10.9 GB).
    The canvas is bounded by MAX_CANVAS_PX and the image reduced with it, so a model resizing the screen to its input
    (224 px here) sees nearly what it sees of the unbounded canvas."""
    monkeypatch.setenv("BRAINSCORE_HOME", str(tmp_path / "home"))
    rng = np.random.default_rng(5)
    path = tmp_path / "img.png"
    pixels = np.kron(rng.integers(0, 256, (10, 10, 3), dtype=np.uint8), np.ones((20, 20, 1), dtype=np.uint8))[:181, :181]
    Image.fromarray(pixels).save(path)
    stimuli = StimulusSet({"stimulus_id": ["s"], "stimulus_path": [str(path)]}, identifier="huge")
    placed = screen.place_on_screen(stimuli, degrees, 3.0)
    with Image.open(placed.get_stimulus("s")) as image:
        ours = image.convert("RGB")
    assert ours.size == (screen.MAX_CANVAS_PX, screen.MAX_CANVAS_PX)
    if degrees == 132.6:  # the unbounded canvas fits in memory here: compare what a 224 px model sees of both
        full = reference_placement(path, degrees / 3.0)
        assert full.size == (8000, 8000)
        seen = [np.asarray(i.resize((224, 224), Image.BILINEAR), dtype=float) for i in (ours, full)]
        assert np.abs(seen[0] - seen[1]).mean() < 1.0 and np.abs(seen[0] - seen[1]).max() < 64
    else:  # the image covers 3/999 of the screen: 6 px of 2048, centred, on grey
        array = np.asarray(ours)
        covered = np.argwhere(np.any(array != 128, axis=2))
        assert 0 < len(covered) <= 7 * 7 and abs(covered.mean(axis=0) - 1023.5).max() < 4


def test_an_image_larger_than_the_bound_is_enlarged_at_most_max_enlargement_times(tmp_path, monkeypatch):
    """Past MAX_CANVAS_PX, an image's canvas may still be MAX_ENLARGEMENT times its own side (the reference's
    1855 px image at 10 -> 12 degrees keeps its 2226 px canvas), never more."""
    monkeypatch.setenv("BRAINSCORE_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(screen, "MAX_CANVAS_PX", 64)
    path = tmp_path / "img.png"
    Image.fromarray(np.full((50, 100, 3), 7, dtype=np.uint8)).save(path)
    screen.convert_image(path, tmp_path / "exact.png", 1.2)
    with Image.open(tmp_path / "exact.png") as image:
        assert image.size == (120, 60)  # within 4x its own side: as the reference places it
    screen.convert_image(path, tmp_path / "out.png", 10.0)
    with Image.open(tmp_path / "out.png") as image:
        assert image.size == (400, 200)  # the 1000 x 500 canvas bounded by 4 x the image's own 100 px
        array = np.asarray(image.convert("RGB"))
    assert (array[100, 190:210] == 7).all() and (array[5, 5] == 128).all()  # the image, reduced to 40 x 20, centred
    assert (array[100, 170] == 128).all() and (array[100, 230] == 128).all()
