"""Shape bias on cue-conflict images (Geirhos et al. 2019; Hermann et al. 2020).

``shape_bias`` = shape match / (shape match + texture match) on the trials whose shape and
texture categories differ; ``shape_match`` and ``texture_match`` are the two accuracies.
Called as ``metric(choices)`` when the choices carry the ``original_image_category`` and
``conflict_image_category`` coordinates, or ``metric(choices, stimulus_set)``.
"""
from brainscore.registry import lazy, register_metric

BIBTEX = """@inproceedings{geirhos2019imagenet,
  title={ImageNet-trained {CNNs} are biased towards texture; increasing shape bias improves accuracy and robustness},
  author={Geirhos, Robert and Rubisch, Patricia and Michaelis, Claudio and Bethge, Matthias and Wichmann, Felix A and Brendel, Wieland},
  booktitle={International Conference on Learning Representations},
  year={2019}
}
@article{hermann2020origins,
  title={The origins and prevalence of texture bias in convolutional neural networks},
  author={Hermann, Katherine and Chen, Ting and Kornblith, Simon},
  journal={Advances in Neural Information Processing Systems},
  volume={33},
  pages={19000--19015},
  year={2020}
}"""


register_metric("shape_bias", lazy("brainscore.metrics.behavior.shape_bias:ShapeBias"))
register_metric("shape_match", lazy("brainscore.metrics.behavior.shape_bias:ShapeMatch"))
register_metric("texture_match", lazy("brainscore.metrics.behavior.shape_bias:TextureMatch"))
