"""Layer selection inside a Dask worker whose memory limit is far below the machine's (issue 24).

Layer selection used to hold candidate layers in memory up to a quarter of the *machine's*
available memory; in a worker limited to less than that, the nanny killed the worker again and
again (``KilledWorker``). Its budget now comes from the worker's limit
(:func:`brainscore.config.usable_memory`), and the rest of the layers stream to temporary files.
"""
from __future__ import annotations

import pytest

from model_fixtures import make_stimuli

GIB = 1 << 30
#: ResNet-18's ten candidate layers hold 5.9 MiB per image (float32): 300 images are 1.7 GiB,
#: more than the worker's whole limit and less than a quarter of this machine's memory (24 GiB).
IMAGES = 300


def _select(stimuli):
    """In the worker: every candidate layer's PCA features; returns (layer, features) sizes and the budget."""
    import brainscore
    from brainscore import config

    model = brainscore.load_model("torchvision:resnet18-untrained")
    limit = config.usable_memory()
    features = model.candidates().look_at_layers(stimuli)
    return {layer: features[layer].shape for layer in features}, limit


@pytest.mark.slow
def test_resnet18_layer_selection_finishes_in_a_worker_of_1_5_gib(tmp_path, monkeypatch):
    import dask
    import psutil
    from distributed import Client

    from brainscore.runner import clusters

    assert psutil.virtual_memory().total / 4 > 1.5 * GIB  # the old budget would not have fitted the worker
    stimuli = make_stimuli(tmp_path / "images", IMAGES)
    # one kill is a failure: no retry on a fresh worker hides it
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        cluster = clusters.local_cluster(1, memory_per_worker=3 * GIB // 2)
        try:
            with Client(cluster) as client:
                pids = client.run(lambda: __import__("os").getpid())
                shapes, usable = client.submit(_select, stimuli, pure=False).result()
                assert client.run(lambda: __import__("os").getpid()) == pids  # the same process: never restarted
        finally:
            cluster.close()
    assert 0 < usable < 1.5 * GIB  # the worker's limit less what it already holds, not the machine's memory
    assert len(shapes) == 10
    assert shapes["conv1"] == (IMAGES, IMAGES)  # 802,816 features reduced to every one of the 300 components
    assert shapes["avgpool"] == (IMAGES, 512)  # 512 features: kept as they are
