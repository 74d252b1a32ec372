"""The Kriegeskorte 2008 data plugin on the real files: stimuli, human/monkey IT and judgement RDMs."""
from __future__ import annotations

import shutil

import numpy as np
import pytest
import scipy.io as sio
from PIL import Image
from scipy.spatial.distance import squareform
from scipy.stats import spearmanr

import brainscore
from brainscore.errors import DataNotFoundError

SUPPLEMENT = "Kriegeskorte_Neuron2008_supplementalData.mat"


@pytest.fixture(scope="module")
def human_it():
    return brainscore.load_dataset("Kriegeskorte2008.IT")


def test_stimulus_set_is_the_92_images_in_rdm_order(shared_data):
    stimuli = brainscore.load_stimulus_set("Kriegeskorte2008")
    assert list(stimuli["stimulus_id"]) == [f"img{i:02d}" for i in range(1, 93)]
    assert stimuli["category"].value_counts().to_dict() == {
        "natural inanimate": 23, "artificial inanimate": 21, "human bodypart": 12, "human face": 12,
        "nonhuman bodypart": 12, "nonhuman face": 12}
    assert stimuli["animate"].sum() == 48 and stimuli["face"].sum() == 24
    # image 50 is the 50th image of the supplemental data, pixel for pixel
    mat = sio.loadmat(shared_data / "kriegeskorte2008" / SUPPLEMENT)["stimuli_92objs"][0]
    np.testing.assert_array_equal(np.asarray(Image.open(stimuli.get_stimulus("img50"))), mat[49]["image"])
    assert stimuli.set_index("stimulus_id").loc["img50", "category"] == str(mat[49]["category"][0])
    stimuli.validate()


def test_human_it_rdms_are_4_subjects_by_2_sessions(human_it, shared_data):
    assert human_it.dims == ("rdm", "presentation", "presentation_b")
    assert human_it.shape == (8, 92, 92)
    assert list(human_it["subject"].values) == ["BE", "BE", "KO", "KO", "SN", "SN", "TI", "TI"]
    assert list(human_it["session"].values) == [1, 2] * 4
    np.testing.assert_array_equal(human_it["stimulus_id"].values, human_it["stimulus_id_b"].values)
    assert human_it.attrs["stimulus_set"].identifier == "Kriegeskorte2008"
    # the values are the .mat file's, read independently (struct array of shape 1 x 4 subjects x 2 sessions)
    raw = sio.loadmat(shared_data / "kriegeskorte2008" / "92_brainRDMs.mat")["RDMs"]
    assert str(raw[0, 2, 1]["name"][0]) == "hIT | SN | Session: 2"
    np.testing.assert_allclose(human_it.values[5], raw[0, 2, 1]["RDM"], rtol=0, atol=1e-7)
    for rdm in human_it.values:
        np.testing.assert_allclose(rdm, rdm.T)
        assert np.all(np.diag(rdm) == 0)


def test_between_session_agreement_is_as_documented(human_it):
    """The data README: Spearman between the two sessions of a subject is about 0.10-0.38."""
    iu = np.triu_indices(92, 1)
    rho = {s: spearmanr(*(human_it.values[i][iu] for i in np.flatnonzero(human_it["subject"].values == s))).statistic
           for s in ("BE", "KO", "SN", "TI")}
    assert rho == pytest.approx({"BE": 0.28, "KO": 0.10, "SN": 0.38, "TI": 0.12}, abs=0.006)


def test_monkey_it_rdm_matches_the_papers_figure_1_data(shared_data):
    monkey = brainscore.load_dataset("Kiani2007.IT")
    assert monkey.shape == (1, 92, 92) and monkey["species"].item() == "macaque"
    # the supplemental data keep the same RDM (mIT_674neurons) as a condensed vector: two files agree
    figure = sio.loadmat(shared_data / "kriegeskorte2008" / SUPPLEMENT)["RDMs_mIT_hIT_fig1"][0, 0]
    assert str(figure["name"][0]) == "mIT_674neurons"
    np.testing.assert_allclose(monkey.values[0], squareform(figure["RDM"].ravel()), atol=1e-12)


def test_judgement_rdms_of_16_subjects():
    judgements = brainscore.load_dataset("Mur2013.judgements")
    assert judgements.shape == (16, 92, 92)
    assert list(judgements["subject"].values) == [f"subject{i:02d}" for i in range(1, 17)]
    assert set(judgements["region"].values) == {"behavior"}
    assert np.isfinite(judgements.values).all()


def test_images_are_rendered_from_the_supplement_when_missing(shared_data, tmp_path, monkeypatch):
    """Only the .mat file in the mirror: the 92 images are rendered into the store, same bytes as the mirror's."""
    mirror = tmp_path / "mirror" / "kriegeskorte2008"
    mirror.mkdir(parents=True)
    shutil.copy(shared_data / "kriegeskorte2008" / SUPPLEMENT, mirror / SUPPLEMENT)
    monkeypatch.setenv("BRAINSCORE_DATA_MIRROR", str(tmp_path / "mirror"))
    monkeypatch.setenv("BRAINSCORE_HOME", str(tmp_path / "home"))
    stimuli = brainscore.load_stimulus_set("Kriegeskorte2008")
    path = stimuli.get_stimulus("img07")
    assert str(path).startswith(str(tmp_path / "home"))
    assert path.read_bytes() == (shared_data / "kriegeskorte2008" / "images92" / "img07.png").read_bytes()


def test_missing_data_names_the_file_and_the_mirror_variable(tmp_path, monkeypatch):
    monkeypatch.setenv("BRAINSCORE_DATA_MIRROR", str(tmp_path / "empty"))
    monkeypatch.setenv("BRAINSCORE_HOME", str(tmp_path / "home"))
    with pytest.raises(DataNotFoundError) as error:
        brainscore.load_dataset("Kriegeskorte2008.IT")
    message = str(error.value)
    assert "kriegeskorte2008/92_brainRDMs.mat" in message and "BRAINSCORE_DATA_MIRROR" in message
