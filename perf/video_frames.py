"""Decoding for a causal video model: every clip read from the file's start, against the remembered decoded frames.

A causal model (:class:`brainscore.models.extraction.temporal.CausalInferencer`) runs one clip per frame time, the
clip ending at that time; each clip's frames are read from the video file. Without remembered frames each read
decodes the file from its start (the reference's way), ``n (n + 1) / 2`` frames for ``n`` clips; with them
(:func:`brainscore.data.video.read_frames`) fewer than ``3 n``. Side by side in one run, on a video written here
(H.264, CRF 23, ``--width`` x ``--height``, ``--seconds`` at ``--fps``):

- (a) the reads alone: ``read_frames`` of the clip ending at frame ``k`` (``--context`` ms long, as a causal model
  with that temporal context reads it) for every frame ``k``;
- (b) a whole ``CausalInferencer`` call at the video's frame rate with that context, with a model that is only a mean
  per frame (so decoding and preprocessing are what is timed), its activations compared bit for bit.

(a) and (b) are each run without the memo (``SETTLE_NS`` set past any file's age, so no file counts as settled)
and with it::

    python perf/video_frames.py                      # 4 s, 30 fps, 640 x 360, a context of 500 ms
    python perf/video_frames.py --seconds 8 --fps 60
"""
from __future__ import annotations

import argparse
import hashlib
import tempfile
import time
from collections import OrderedDict
from pathlib import Path

import numpy as np


def write_video(path: Path, seconds: float, fps: int, width: int, height: int) -> Path:
    import av

    rng = np.random.default_rng(0)
    n = int(round(seconds * fps))
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=fps, options={"crf": "23"})
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        base = rng.integers(0, 256, size=(height // 8, width // 8, 3), dtype=np.uint8)
        for index in range(n):  # a moving texture (so frames differ), upsampled blocks
            frame = np.roll(np.kron(base, np.ones((8, 8, 1), dtype=np.uint8)), 4 * index, axis=1)
            container.mux(stream.encode(av.VideoFrame.from_ndarray(frame, format="rgb24")))
        container.mux(stream.encode(None))
    return path


def model(inputs, layers):
    return OrderedDict([("frames", [x.reshape(x.shape[0], -1).mean(axis=1) for x in inputs])])


def preprocess(video):
    return video.to_numpy().astype(np.float32)


def timed(function, memo: bool):
    from brainscore.caching import files
    from brainscore.data import video

    saved = files.SETTLE_NS
    files.SETTLE_NS = 0 if memo else 1 << 62
    video.forget_decoded_frames()
    try:
        start = time.perf_counter()
        result = function()
        return time.perf_counter() - start, result
    finally:
        files.SETTLE_NS = saved
        video.forget_decoded_frames()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--context", type=float, default=500.0, help="the model's temporal context (ms)")
    parser.add_argument("--fps", type=int, default=30)
    parser.add_argument("--width", type=int, default=640)
    parser.add_argument("--height", type=int, default=360)
    args = parser.parse_args(argv)

    from brainscore.data.clips import Video
    from brainscore.data.video import probe_video, read_frames
    from brainscore.models.extraction.temporal import CausalInferencer

    with tempfile.TemporaryDirectory() as folder:
        path = write_video(Path(folder) / "clip.mp4", args.seconds, args.fps, args.width, args.height)
        n = probe_video(path).n_frames
        print(f"video: {n} frames, {args.fps} fps, {args.width} x {args.height}, H.264 CRF 23; context "
              f"{args.context:g} ms")

        width = max(1, int(round(args.context * args.fps / 1000)))

        def reads():  # digests, not the frames: holding every clip would time the allocator
            return [hashlib.sha256(read_frames(path, np.arange(max(0, k + 1 - width), k + 1))).hexdigest()
                    for k in range(n)]

        def causal():
            inferencer = CausalInferencer(model, preprocess, {"frames": "T"}, Video, fps=args.fps, max_workers=1,
                                          duration=(0, args.context), temporal_context_strategy="fix",
                                          fixed_temporal_context=args.context)
            return np.asarray(inferencer([str(path)], ["frames"]).values)

        rows = []
        for name, function in (("(a) reads of the clip ending at frame k, every k", reads), ("(b) CausalInferencer call", causal)):
            before, first = timed(function, memo=False)
            after, second = timed(function, memo=True)
            same = first == second if isinstance(first, list) else np.array_equal(first, second, equal_nan=True)
            rows.append((name, before, after, same))
        print("| | from the file's start (s) | remembered frames (s) | speed-up | identical |")
        print("|---|---:|---:|---:|---|")
        for name, before, after, same in rows:
            print(f"| {name} | {before:.2f} | {after:.2f} | {before / after:.1f}x | {same} |")
        return 0 if all(row[3] for row in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
