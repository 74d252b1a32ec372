"""``place_on_screen``: :func:`brainscore.benchmarks.screen.place_on_screen` itself.

``place_on_screen(stimulus_set, target_visual_degrees=candidate.visual_degrees(), source_visual_degrees=8)``
shrinks (or pads with grey) every image so that it spans, on a screen of the model's field of view,
the degrees it spanned in the experiment; the converted images are cached by content.
"""
from brainscore.benchmarks.screen import place_on_screen

__all__ = ["place_on_screen"]
