"""Bad inputs of every kind in issue 10: each raises a named error whose message names the problem.

None of these may return a number: each case asserts the error type and words of its message.
"""
from __future__ import annotations

import io
import math
import os
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from brainscore import registry
from brainscore.benchmarks.screen import place_on_screen
from brainscore.caching import check_home
from brainscore.data import NeuroidAssembly, StimulusSet
from brainscore.data.assemblies import DataAssembly
from brainscore.data.images import load_rgb
from brainscore.data.store import safe_extract
from brainscore.errors import (BrainScoreError, HashMismatchError, UnknownIdentifierError, ValidationError)
from brainscore.metrics.neural.regression import CrossRegressedCorrelation, TrainTestSplitCorrelation
from brainscore.metrics.similarity.cka import CKACrossValidated, CKAMetric
from brainscore.metrics.similarity.rdm import RDMCrossValidated, RDMMetric, stack_rdms
from brainscore.models.commitment import ModelCommitment
from brainscore.models.extraction import ActivationsExtractor, microsaccade_shifts
from brainscore.models.preprocessing import Preprocessing

RNG = np.random.default_rng(0)
X = RNG.normal(size=(40, 30))
Y = X[:, :5] @ RNG.normal(size=(5, 6)) + RNG.normal(size=(40, 6))


def assembly(values, n_objects: int = 4) -> NeuroidAssembly:
    n, q = values.shape
    return NeuroidAssembly(values, dims=("presentation", "neuroid"), coords={
        "stimulus_id": ("presentation", [f"s{i:02d}" for i in range(n)]),
        "object_name": ("presentation", [f"o{i % n_objects}" for i in range(n)]),
        "neuroid_id": ("neuroid", [f"n{j}" for j in range(q)])})


def changed(values, row=None, column=None, value=None, rows=None):
    out = np.array(values, dtype=float)
    if rows is not None:
        out = out[:rows]
    if column is not None and row is None:
        out[:, column] = value
    elif row is not None and column is None:
        out[row, :] = value
    elif row is not None:
        out[row, column] = value
    return out


def regression(kind, **kwargs):
    return CrossRegressedCorrelation(kind, crossvalidation_kwargs=dict(stratification_coord=None), **kwargs)


# ---- numeric cases: (metric, source values, target values, error, words of the message) -------------------------
NUMERIC = {
    # regression (item 8)
    "pls-constant-features": (regression("pls"), np.ones_like(X), Y, ValidationError, "every feature"),
    "ridge-constant-features": (regression("ridge"), np.ones_like(X), Y, ValidationError, "every feature"),
    "ridgecv-constant-features": (regression("ridgecv"), np.ones_like(X), Y, ValidationError, "every feature"),
    "linear-constant-features": (regression("linear"), np.ones_like(X), Y, ValidationError, "every feature"),
    "pls-constant-target-neuroid": (regression("pls"), X, changed(Y, column=2, value=3.0), ValidationError, "n2"),
    "ridge-constant-target-neuroid": (regression("ridge"), X, changed(Y, column=0, value=0.0), ValidationError,
                                      "same response to every stimulus"),
    "pls-fewer-stimuli-than-components": (regression("pls"), X[:12], Y[:12], ValidationError, "n_components=25"),
    "pls-inf-source": (regression("pls"), changed(X, 0, 0, np.inf), Y, ValidationError, "infinite"),
    "ridgecv-inf-source": (regression("ridgecv"), changed(X, 3, 4, -np.inf), Y, ValidationError, "infinite"),
    "linear-inf-target": (regression("linear"), X, changed(Y, 1, 1, np.inf), ValidationError, "infinite"),
    "pls-nan-source": (regression("pls"), changed(X, 0, 0, np.nan), Y, ValidationError, "NaN"),
    "ridge-nan-target": (regression("ridge"), X, changed(Y, 5, 0, np.nan), ValidationError, "NaN"),
    "pls-two-stimuli": (regression("pls"), X[:2], Y[:2], ValidationError, "at least 3"),
    "pls-one-stimulus": (regression("pls"), X[:1], Y[:1], ValidationError, "at least 3"),
    "ridge-empty": (regression("ridge"), X[:0], Y[:0], ValidationError, "0 presentations"),
    "pls-reverse-constant-model-unit": (regression("pls", reverse=True), changed(X, column=1, value=2.0), Y,
                                        ValidationError, "n1"),
    # RDM (item 8)
    "rdm-nan-features": (RDMMetric(), changed(X, 2, 2, np.nan), Y, ValidationError, "NaN"),
    "rdm-inf-features": (RDMMetric(), changed(X, 2, 2, np.inf), Y, ValidationError, "inf"),
    "rdm-constant-pattern": (RDMMetric(), changed(X, row=7, value=1.0), Y, ValidationError, "s07"),
    "rdm-one-neuroid": (RDMMetric(), X[:, :1], Y, ValidationError, "at least 2 neuroids"),
    "rdm-two-stimuli": (RDMMetric(), X[:2], Y[:2], ValidationError, "at least 3"),
    "rdm-cv-constant-pattern": (RDMCrossValidated(stratification_coord=None), X, changed(Y, row=0, value=0.0),
                                ValidationError, "s00"),
    "rdm-cv-nan": (RDMCrossValidated(stratification_coord=None), X, changed(Y, 3, 3, np.nan), ValidationError, "NaN"),
    # CKA (item 8)
    "cka-constant-model": (CKAMetric(), np.ones_like(X), Y, ValidationError, "first assembly"),
    "cka-constant-data": (CKAMetric(), X, np.full_like(Y, 4.0), ValidationError, "second assembly"),
    "cka-inf": (CKAMetric(), changed(X, 0, 0, np.inf), Y, ValidationError, "inf"),
    "cka-nan": (CKAMetric(), X, changed(Y, 0, 0, np.nan), ValidationError, "NaN"),
    "cka-biased-constant": (CKAMetric(unbiased=False), np.zeros_like(X), Y, ValidationError, "0/0"),
    "cka-cv-constant": (CKACrossValidated(stratification_coord=None), np.ones_like(X), Y, ValidationError,
                        "same for every stimulus"),
    "cka-two-stimuli": (CKAMetric(), X[:2], Y[:2], ValidationError, "at least 3"),
}


@pytest.mark.parametrize("case", sorted(NUMERIC))
def test_degenerate_numbers_are_errors_not_numbers(case):
    metric, source, target, error, words = NUMERIC[case]
    with pytest.raises(error, match=None) as info:
        metric(assembly(source), assembly(target))
    assert words in str(info.value), str(info.value)


def test_train_test_regression_with_a_constant_training_neuroid():
    metric = TrainTestSplitCorrelation("ridge")
    target = changed(Y, column=4, value=1.0)
    with pytest.raises(ValidationError, match="n4"):
        metric(assembly(X[:30]), assembly(X[30:]), assembly(target[:30]), assembly(Y[30:]))


def test_rdm_with_nan_cells():
    ids = [f"s{i:02d}" for i in range(5)]
    rdm = np.ones((5, 5)) - np.eye(5)
    rdm[1, 3] = rdm[3, 1] = np.nan
    with pytest.raises(ValidationError, match="NaN or infinite dissimilarities"):
        RDMMetric()(stack_rdms([rdm], ids).isel(subject=0), assembly(X[:5]))


def test_non_numeric_responses():
    bad = assembly(X).astype(object)
    with pytest.raises(ValidationError, match="real numbers"):
        RDMMetric()(bad, assembly(Y))


# ---- images (items 7 and 12) -------------------------------------------------------------------------------------
def _png(tmp_path, name, image) -> Path:
    path = tmp_path / name
    image.save(path)
    return path


def test_sixteen_bit_grey_is_scaled_not_clipped(tmp_path):
    """I;16 mid-grey reads as 128, not 255 (convert('RGB') clipped it: mean 254 against 128)."""
    values = np.full((8, 8), 32896, dtype=np.uint16)  # 128 * 257
    path = _png(tmp_path, "grey16.png", Image.fromarray(values))
    assert Image.open(path).mode.startswith("I")
    rgb = np.asarray(load_rgb(path))
    assert rgb.shape == (8, 8, 3) and (rgb == 128).all()


def test_sixteen_bit_gradient_matches_its_eight_bit_version(tmp_path):
    eight = np.tile(np.arange(256, dtype=np.uint8), (4, 1))
    sixteen = eight.astype(np.uint16) * 257
    loaded = np.asarray(load_rgb(_png(tmp_path, "g16.png", Image.fromarray(sixteen))))[..., 0]
    np.testing.assert_array_equal(loaded, eight)


def test_alpha_is_composited_on_the_screen_grey(tmp_path):
    rgba = np.zeros((2, 2, 4), np.uint8)
    rgba[..., 0] = 255
    rgba[0, 0, 3], rgba[0, 1, 3], rgba[1, 0, 3], rgba[1, 1, 3] = 255, 0, 128, 64
    rgb = np.asarray(load_rgb(_png(tmp_path, "a.png", Image.fromarray(rgba, "RGBA"))))
    assert rgb[0, 0].tolist() == [255, 0, 0] and rgb[0, 1].tolist() == [128, 128, 128]
    assert rgb[1, 0].tolist() == [round(128 / 255 * 255 + (1 - 128 / 255) * 128), round((1 - 128 / 255) * 128),
                                  round((1 - 128 / 255) * 128)]
    la = Image.fromarray(np.stack([np.full((2, 2), 0, np.uint8), np.full((2, 2), 0, np.uint8)], -1), "LA")
    assert (np.asarray(load_rgb(_png(tmp_path, "la.png", la))) == 128).all()


def test_palette_with_a_transparent_entry_and_cmyk(tmp_path):
    palette = Image.new("P", (2, 1))
    palette.putpalette([10, 20, 30, 200, 100, 50] + [0] * 762)
    palette.putpixel((1, 0), 1)
    palette.info["transparency"] = 0
    rgb = np.asarray(load_rgb(_png(tmp_path, "p.png", palette)))
    assert rgb[0, 0].tolist() == [128, 128, 128] and rgb[0, 1].tolist() == [200, 100, 50]
    cmyk = Image.new("CMYK", (2, 2), (0, 255, 255, 0))  # pure red in CMYK
    path = tmp_path / "c.jpg"
    cmyk.save(path, quality=100)
    red = np.asarray(load_rgb(path))[0, 0]
    assert red[0] > 240 and red[1] < 15 and red[2] < 15


IMAGE_FILES = {
    "zero-byte-png": (lambda p: p.write_bytes(b""), ValidationError, "empty"),
    "text-png": (lambda p: p.write_text("not an image"), ValidationError, "not an image file"),
    "truncated-png": (lambda p: p.write_bytes(_encoded("PNG")[:200]), ValidationError, "damaged"),
    "truncated-jpeg": (lambda p: p.write_bytes(_encoded("JPEG")[:300]), ValidationError, "damaged"),
    "int32-out-of-range": (lambda p: Image.fromarray(np.full((4, 4), 70000, np.int32), "I").save(p, "TIFF"),
                           ValidationError, "0..65535"),
    "float-nan": (lambda p: Image.fromarray(np.full((4, 4), np.nan, np.float32), "F").save(p, "TIFF"),
                  ValidationError, "0..1"),
    "float-out-of-range": (lambda p: Image.fromarray(np.full((4, 4), 3.0, np.float32), "F").save(p, "TIFF"),
                           ValidationError, "0..1"),
}


def _encoded(fmt: str) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(RNG.integers(0, 256, (64, 64, 3), dtype=np.uint8)).save(buffer, fmt)
    return buffer.getvalue()


@pytest.mark.parametrize("case", sorted(IMAGE_FILES))
def test_unreadable_images_name_the_file(tmp_path, case):
    write, error, words = IMAGE_FILES[case]
    path = tmp_path / f"{case}.png"
    write(path)
    with pytest.raises(error) as info:
        load_rgb(path)
    assert words in str(info.value) and str(path) in str(info.value)


def test_float_image_in_range_is_scaled(tmp_path):
    path = tmp_path / "f.tiff"
    Image.fromarray(np.full((4, 4), 0.5, np.float32), "F").save(path)
    assert (np.asarray(load_rgb(path)) == 128).all()


def test_a_damaged_image_names_its_stimulus_during_extraction(tmp_path, monkeypatch):
    monkeypatch.setenv("BRAINSCORE_HOME", str(tmp_path / "home"))
    good = _png(tmp_path, "good.png", Image.new("RGB", (16, 16), (1, 2, 3)))
    bad = tmp_path / "bad.png"
    bad.write_bytes(_encoded("PNG")[:100])
    stimuli = StimulusSet({"stimulus_id": ["ok1", "broken7", "ok2"], "stimulus_path": [str(good), str(bad), str(good)]})
    extractor = ActivationsExtractor(torch.nn.Sequential(torch.nn.Conv2d(3, 2, 3)), "n", Preprocessing("imagenet", 16),
                                     progress=False)
    with pytest.raises(ValidationError, match="broken7") as info:
        extractor(stimuli, ["0"])
    assert "bad.png" in str(info.value)


# ---- zip archives (item 10) ---------------------------------------------------------------------------------------
def _zip(path: Path, members: dict[str, bytes], compression=zipfile.ZIP_DEFLATED) -> Path:
    with zipfile.ZipFile(path, "w", compression) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


ZIPS = {
    "ratio-bomb": (lambda p: _zip(p, {"zeros.bin": b"\0" * (8 << 20)}), {}, "fold"),
    "total-size": (lambda p: _zip(p, {"a.bin": RNG.bytes(1 << 16), "b.bin": RNG.bytes(1 << 16)}),
                   {"max_total_bytes": 100_000}, "GiB allowed"),
    "entry-count": (lambda p: _zip(p, {f"f{i}.txt": b"x" for i in range(30)}), {"max_entries": 20}, "30 entries"),
    "parent-path": (lambda p: _zip(p, {"../escape.png": b"x"}), {}, "outside the target"),
    "absolute-path": (lambda p: _zip(p, {"/etc/evil.png": b"x"}), {}, "outside the target"),
    "not-a-zip": (lambda p: p.write_bytes(b"PK\x03\x04 not really"), {}, "not a readable zip"),
}


@pytest.mark.parametrize("case", sorted(ZIPS))
def test_zip_bombs_and_unsafe_archives_are_refused(tmp_path, case):
    make, limits, words = ZIPS[case]
    archive = tmp_path / "a.zip"
    make(archive)
    with pytest.raises(ValidationError) as info:
        safe_extract(archive, tmp_path / "out", **limits)
    assert words in str(info.value) and str(archive) in str(info.value)
    assert not (tmp_path / "escape.png").exists()
    assert sum(f.stat().st_size for f in (tmp_path / "out").rglob("*") if f.is_file()) <= 1 << 17 \
        if (tmp_path / "out").exists() else True


def test_a_symlink_member_is_refused(tmp_path):
    archive = tmp_path / "link.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        info = zipfile.ZipInfo("link.png")
        info.external_attr = (0o120777 << 16)
        zf.writestr(info, "/etc/passwd")
    with pytest.raises(ValidationError, match="symbolic link"):
        safe_extract(archive, tmp_path / "out")


def test_a_member_larger_than_declared_is_stopped_while_extracting(tmp_path):
    archive = _zip(tmp_path / "lie.zip", {"a.bin": RNG.bytes(5000)}, zipfile.ZIP_STORED)
    with zipfile.ZipFile(archive) as zf:
        info = zf.infolist()[0]
    data = bytearray(archive.read_bytes())
    # lower the declared size in the central directory only: the extractor must count real bytes
    central = data.rfind(b"PK\x01\x02")
    data[central + 24:central + 28] = (100).to_bytes(4, "little")
    archive.write_bytes(bytes(data))
    assert info.file_size == 5000
    with pytest.raises((ValidationError, zipfile.BadZipFile)):
        safe_extract(archive, tmp_path / "out")
    extracted = tmp_path / "out" / "a.bin"
    assert not extracted.exists() or extracted.stat().st_size <= 100 + (1 << 20)


def test_cli_validate_refuses_a_zip_bomb(tmp_path, capsys):
    from brainscore.cli import main

    csv = tmp_path / "stimuli.csv"
    csv.write_text("stimulus_id,filename\na,zeros.bin\n")
    bomb = _zip(tmp_path / "bomb.zip", {"zeros.bin": b"\0" * (16 << 20)})
    code = main(["data", "validate", "--stimuli", str(csv), "--stimulus-zip", str(bomb)])
    assert code != 0
    assert "zip bomb" in capsys.readouterr().err


# ---- publish (item 11) ---------------------------------------------------------------------------------------------
def test_publish_no_check_never_publishes_a_wrong_hash(tmp_path, monkeypatch):
    from brainscore.data.packaging import package_stimulus_set
    from brainscore.data.publish import publish

    monkeypatch.setenv("BRAINSCORE_HOME", str(tmp_path / "home"))
    image = _png(tmp_path, "x.png", Image.new("RGB", (4, 4), (9, 9, 9)))
    stimuli = StimulusSet({"stimulus_id": ["x"], "stimulus_path": [str(image)]}, identifier="Tamper.set")
    packaged = package_stimulus_set(stimuli, "Tamper.set", tmp_path / "packaged")
    target = packaged.files[0].path
    target.write_bytes(target.read_bytes() + b"tampered")
    with pytest.raises(HashMismatchError, match="changed before upload") as info:
        publish([packaged], str(tmp_path / "bucket"), public_url="https://example.org", check=False,
                print_snippet=False)
    assert packaged.files[0].sha256 in str(info.value)
    assert not (tmp_path / "bucket" / target.name).exists()


# ---- BRAINSCORE_HOME, identifiers, degrees, regions (item 12) ---------------------------------------------------
def test_home_that_is_a_file(tmp_path, monkeypatch):
    home = tmp_path / "file"
    home.write_text("x")
    monkeypatch.setenv("BRAINSCORE_HOME", str(home))
    with pytest.raises(BrainScoreError, match="is a file, not a directory"):
        check_home()


def test_home_under_a_file(tmp_path, monkeypatch):
    (tmp_path / "file").write_text("x")
    monkeypatch.setenv("BRAINSCORE_HOME", str(tmp_path / "file" / "home"))
    with pytest.raises(BrainScoreError, match="not a writable directory"):
        check_home()


def test_score_checks_home_before_any_work(tmp_path, monkeypatch):
    from brainscore.scoring import score

    home = tmp_path / "file"
    home.write_text("x")
    monkeypatch.setenv("BRAINSCORE_HOME", str(home))
    monkeypatch.setattr(registry, "load_benchmark", lambda *_: pytest.fail("work started before the home check"))
    with pytest.raises(BrainScoreError, match="BRAINSCORE_HOME"):
        score("pixels", "Cowley2026.210325.V4-pls")


@pytest.mark.parametrize("identifier", [None, "", 3, ["Cowley2026.210325.V4-pls"]])
def test_non_string_benchmark_identifiers(identifier):
    with pytest.raises(UnknownIdentifierError, match="non-empty string"):
        registry.load_benchmark(identifier)


@pytest.mark.parametrize("degrees", [math.nan, math.inf, 0, -8, "8"])
def test_bad_visual_degrees_of_a_model(degrees):
    with pytest.raises(ValidationError, match="visual_degrees must be a finite number"):
        ModelCommitment("m", object(), layers=["a"], visual_degrees=degrees)


@pytest.mark.parametrize("target, source", [(math.nan, 4), (8, math.nan), (math.inf, 4), (8, 0)])
def test_bad_visual_degrees_on_screen(images92, target, source):
    with pytest.raises(ValueError, match="finite number > 0"):
        place_on_screen(images92, target, source)


def test_nan_visual_degrees_for_microsaccades():
    with pytest.raises(ValueError, match="finite"):
        microsaccade_shifts(4, 224, math.nan)


def test_region_map_with_the_wrong_case():
    model = ModelCommitment("m", object(), layers=["a", "b"], region_layer_map={"v4": "b"})
    with pytest.raises(ValidationError, match="case-sensitive") as info:
        model.layer_for("V4")
    assert "'V4': 'b'" in str(info.value)


def test_unmapped_region_suggests_a_cli_form_the_cli_accepts():
    model = ModelCommitment("m", object(), layers=["a", "b", "c"])
    assert model.layer_for("IT") == "c"  # a region the layer rule knows is committed by it
    with pytest.raises(BrainScoreError) as info:
        model.layer_for("MT")  # one it does not know needs a map
    assert "`--layer b`" in str(info.value) and "MT=" not in str(info.value)


def test_cli_score_exits_non_zero_on_a_nan_score(monkeypatch, capsys):
    from brainscore import api
    from brainscore.cli import main
    from brainscore.metrics.score import Score

    nan = Score.of(float("nan"), raw=float("nan"), ceiling=0.8, error=float("nan"))
    monkeypatch.setattr(api, "score", lambda *a, **k: nan)
    code = main(["score", "--model", "pixels", "--benchmark", "Kiani2007.IT-rdm", "--no-record", "--json"])
    captured = capsys.readouterr()
    assert code != 0 and '"score": null' not in captured.out
    assert "nan" in captured.err and "raw score is nan" in captured.err


def test_mirror_file_rewritten_with_restored_mtime_is_caught(tmp_path, monkeypatch):
    """Same size, same mtime, other bytes: the ctime changed, so the file is hashed again (item 6)."""
    import hashlib

    from brainscore.data.store import Source, fetch

    mirror = tmp_path / "mirror"
    (mirror / "d").mkdir(parents=True)
    path = mirror / "d" / "responses.npy"
    np.save(path, np.arange(100, dtype=np.float64))
    source = Source("d/responses.npy", hashlib.sha256(path.read_bytes()).hexdigest())
    monkeypatch.setenv("BRAINSCORE_DATA_MIRROR", str(mirror))
    monkeypatch.setenv("BRAINSCORE_HOME", str(tmp_path / "home"))
    assert fetch(source) == path
    stat = path.stat()
    data = bytearray(path.read_bytes())
    data[-8:] = np.float64(1e6).tobytes()
    with open(path, "r+b") as f:  # same inode, same size
        f.write(bytes(data))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert path.stat().st_mtime_ns == stat.st_mtime_ns and path.stat().st_size == stat.st_size
    with pytest.raises(HashMismatchError, match="responses.npy"):
        fetch(source)


def test_empty_stimulus_set_for_extraction(tmp_path, monkeypatch):
    monkeypatch.setenv("BRAINSCORE_HOME", str(tmp_path / "home"))
    extractor = ActivationsExtractor(torch.nn.Sequential(torch.nn.Conv2d(3, 2, 3)), "n", progress=False)
    with pytest.raises(ValidationError, match="no layers"):
        extractor(StimulusSet({"stimulus_id": ["a"], "stimulus_path": [str(tmp_path)]}), [])


def test_data_assembly_rdm_with_one_stimulus_is_refused():
    rdm = DataAssembly(np.zeros((1, 1)), dims=("presentation", "presentation_b"),
                       coords={"stimulus_id": ("presentation", ["a"]), "stimulus_id_b": ("presentation_b", ["a"])})
    with pytest.raises(ValidationError):
        RDMMetric()(rdm, assembly(X[:1]))


# ---- more of the same kind: normalisation and behaviour -------------------------------------------------------
@pytest.mark.parametrize("ceiling", [0.0, -0.2, math.nan, math.inf])
def test_ceilings_that_cannot_normalise(ceiling):
    from brainscore.metrics.normalisation import ceil_score, explained_variance
    from brainscore.metrics.score import Score

    for normalise in (explained_variance, ceil_score):
        with pytest.raises(ValidationError, match="must be finite and > 0"):
            normalise(Score.of(0.5, error=0.01), Score.of(ceiling, error=0.0))


def test_error_consistency_without_errors_is_undefined_not_nan():
    from brainscore.metrics.behavior.error_consistency import _aggregate

    with pytest.raises(ValidationError, match="always right or always wrong"):
        _aggregate(np.full((3, 2), np.nan), ["c1", "c2", "c3"], ["a", "b"], "subject")
