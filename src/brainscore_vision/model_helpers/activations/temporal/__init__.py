"""The reference's temporal (video) activations helpers, so far its inputs (:mod:`.inputs`: ``Video``, ``Image``)
and ``batch_2d_resize`` (:mod:`.utils`), over :mod:`brainscore.data.video` and :mod:`brainscore.data.resize`.

Importing this package imports nothing heavy (no torch; PyAV only when a video is read).
"""
