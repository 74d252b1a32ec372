"""From a network to a brain model: commit layers to regions and read out behaviour.

A :class:`ModelCommitment` (Schrimpf et al. 2020, Brain-Score's model-to-brain commitment) wraps an
activations model (an :class:`~brainscore.models.extraction.ActivationsExtractor`) as a
:class:`~brainscore.models.interface.BrainModel`:

- *recording*: ``start_recording("V4", time_bins)`` then ``look_at(stimuli)`` returns the features
  of the layer committed to V4, ``presentation x neuroid x time_bin``. A static network answers
  every time bin with the same response; a network whose activations carry a ``time_bin`` dim is
  aligned to the requested bins by an overlap-weighted average (:func:`~brainscore.models.time_bins.align_time_bins`);
- *layer selection*: a region missing from ``region_layer_map`` is mapped by calling
  ``layer_scorer(region, candidates)`` (supplied by the caller, e.g. a benchmark-based scorer;
  this layer does not import benchmarks) and taking the best-scoring layer. The choice is stored
  in the cache by (weights, preprocessing, candidate layers, region, scorer identity), so it is
  computed once. A region the scorer has no selection data for (it raises
  :class:`~brainscore.errors.NoSelectionDataError`), or any region when there is no scorer, is
  committed by the relative-depth rule of :mod:`brainscore.models.layer_rule`, which never looks at
  a benchmark. How each region's layer was chosen is kept in ``layer_methods``;
- *candidate layers*: given by the plugin, or (``layers=None``) the outputs of the network's
  top-level blocks (:func:`brainscore.models.structure.structural_candidates`);
- *behaviour*: ``start_task("label" | "probabilities" | "odd_one_out" | "passive", ...)`` with
  the readouts of :mod:`brainscore.models.readouts`.

During layer selection, layers with more than 1000 features are reduced to their first 1000
principal components, as the reference does (fitted on the selection stimuli themselves, a
documented deviation): :mod:`brainscore.models.candidates`.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

import numpy as np

from brainscore.caching import Cache, callable_identity, content_key
from brainscore.data.assemblies import BehavioralAssembly, NeuroidAssembly
from brainscore.data.blocks import NeuroidBlocks
from brainscore.data.stimuli import StimulusSet
from brainscore.errors import BrainScoreError, NoSelectionDataError, ValidationError
from brainscore.models import layer_rule, readouts
from brainscore.models.candidates import SELECTION_PCA_COMPONENTS, SELECTION_PCA_METHOD, LayerCandidates
from brainscore.models.extraction.core import LOGITS
from brainscore.models.structure import CANDIDATE_DEFINITION, structural_candidates
from brainscore.models.time_bins import DEFAULT_TIME_BINS, checked_time_bins, on_time_bins
from brainscore.models.interface import BrainModel, Task
from brainscore.progress import stage



def _rows_of(stimuli: StimulusSet, shown: StimulusSet, features: NeuroidAssembly) -> np.ndarray | None:
    """The rows of ``features`` (of the images ``shown``) that belong to ``stimuli``, in ``stimuli``'s order, or None
    when a stimulus is missing from ``shown``, has another file there, or ``features`` hold several presentations
    of an image."""
    from brainscore.data.stimuli import file_sha256

    shown_ids = np.asarray(features["stimulus_id"].values).astype(str) if "stimulus_id" in features.coords else None
    if shown_ids is None or len(np.unique(shown_ids)) != len(shown_ids):
        return None
    position = {sid: i for i, sid in enumerate(shown_ids)}
    rows = []
    for sid in stimuli["stimulus_id"].astype(str):
        if sid not in position or sid not in shown.stimulus_paths:
            return None
        mine, theirs = stimuli.get_stimulus(sid), shown.get_stimulus(sid)
        if mine != theirs and file_sha256(mine) != file_sha256(theirs):
            return None
        rows.append(position[sid])
    return np.asarray(features.transpose("presentation", "neuroid").values)[rows]


def _scorer_identity(scorer: Callable) -> dict[str, Any]:
    identifier = getattr(scorer, "identifier", None)
    if identifier is None:
        identifier = callable_identity(getattr(scorer, "func", scorer), line=False)  # a partial: its function
    return {"identifier": str(identifier), "version": str(getattr(scorer, "version", ""))}


# ------------------------------------------------------------------------------------------------
# the commitment
# ------------------------------------------------------------------------------------------------
class ModelCommitment(BrainModel):
    """A network committed to brain regions and behavioural readouts.

    Parameters
    ----------
    identifier : str
        The model's name, e.g. ``"efficientnet-lite0"``.
    activations_model : ActivationsExtractor
        Computes layer activations (``extract`` and ``__call__``; see
        :class:`~brainscore.models.extraction.ActivationsExtractor`).
    layers : sequence of str, optional
        Candidate layers for regions, in depth order. None: the outputs of the network's top-level
        blocks (:func:`~brainscore.models.structure.structural_candidates` of
        ``activations_model.model``), recorded as ``candidates_source``.
    region_layer_map : dict of str to str, optional
        Region (``V1``, ``V2``, ``V4``, ``IT``) -> committed layer (method ``declared``). Missing
        regions are selected with ``layer_scorer`` on first use (method ``selection``), or, where
        it has no selection data or there is no scorer, committed by the layer rule (``rule``).
    visual_degrees : float
        Field of view in degrees (8 as the reference).
    behavioral_readout_layer : str, optional
        Layer read by the probabilities and odd-one-out tasks (default: the last of ``layers``).
    layer_scorer : callable (region, LayerCandidates) -> dict of str to float, optional
        Scores candidate layers for a region; the best is committed. ``brainscore.load_model``
        supplies the standard benchmark-based one.

    Attributes
    ----------
    region_layer_map : dict of str to str
        The committed layers (grows as regions are selected).
    layer_scores : dict of str to dict of str to float
        Per selected region, the scores of the candidates.
    layer_methods : dict of str to dict
        Per committed region, how its layer was chosen: ``{"method": "declared"}``,
        ``{"method": "selection", "scorer": ..., "benchmarks": [...]}`` (scores in ``layer_scores``)
        or ``{"method": "rule", "rule", "relative_depth", "maps", "index", "n_candidates"}``.
    candidates_source : str
        ``"declared"`` (the plugin listed them) or the structural definition used
        (:data:`~brainscore.models.structure.CANDIDATE_DEFINITION`).
    """

    #: how the odd-one-out task compares two images' features: ``"dot"`` product (the reference's default) or ``"cosine"``
    similarity_measure = "dot"

    def __init__(self, identifier: str, activations_model, layers: Sequence[str] | None = None,
                 region_layer_map: Mapping[str, str] | None = None, visual_degrees: float = 8,
                 behavioral_readout_layer: str | None = None,
                 layer_scorer: Callable[[str, LayerCandidates], Mapping[str, float]] | None = None):
        self._identifier = identifier
        self.activations_model = activations_model
        if layers is None:
            network = getattr(activations_model, "model", None)
            if network is None:
                raise ValidationError(f"model {identifier!r} lists no candidate layers and its activations model "
                                      f"has no network to take them from; give layers=[...]")
            self.layers = structural_candidates(network)
            self.candidates_source = CANDIDATE_DEFINITION
        else:
            self.layers = list(layers)
            self.candidates_source = "declared"
        if not self.layers:
            raise ValidationError(f"model {identifier!r} needs at least one candidate layer")
        self.region_layer_map: dict[str, str] = dict(region_layer_map or {})
        self.layer_methods: dict[str, dict[str, Any]] = {region: {"method": "declared"}
                                                         for region in self.region_layer_map}
        if not isinstance(visual_degrees, (int, float, np.integer, np.floating)) or isinstance(visual_degrees, bool) \
                or not np.isfinite(visual_degrees) or visual_degrees <= 0:
            raise ValidationError(f"visual_degrees must be a finite number of degrees > 0 (the model's field of "
                                  f"view, 8 by default), got {visual_degrees!r}")
        self._visual_degrees = float(visual_degrees)
        self.behavioral_readout_layer = behavioral_readout_layer or self.layers[-1]
        self.layer_scorer = layer_scorer
        self.layer_scores: dict[str, dict[str, float]] = {}
        self.recording_target: str | None = None
        self.time_bins: list[tuple[int, int]] = list(DEFAULT_TIME_BINS)
        self.task: str | None = None
        self._labels: Any = None
        self._classifier: readouts.ProbabilitiesClassifier | None = None
        self._fitting: StimulusSet | None = None
        if hasattr(activations_model, "set_visual_degrees"):
            activations_model.set_visual_degrees(self._visual_degrees)

    # ---- BrainModel ---------------------------------------------------------------------------
    @property
    def identifier(self) -> str:
        return self._identifier

    def visual_degrees(self) -> float:
        """Width of the model's field of view in degrees (the side of its square input)."""
        return self._visual_degrees

    @property
    def weights_hash(self) -> str | None:
        """sha256 of the weights of the activations model, or None when it is not a torch network."""
        return getattr(self.activations_model, "weights_hash", None)

    @property
    def parameter_count(self) -> int | None:
        """Parameters of the activations model's network once it is loaded (None before, or not a torch network)."""
        return getattr(self.activations_model, "parameter_count", None)

    @property
    def architecture_fingerprint(self) -> str | None:
        """sha256 of the network's architecture and forward code (see
        :func:`brainscore.models.fingerprint.architecture_fingerprint`), or None when the activations
        model is not a torch network."""
        return getattr(self.activations_model, "architecture_fingerprint", None)

    def start_recording(self, recording_target: str, time_bins: Sequence[tuple[int, int]] | None = None) -> None:
        """Record from ``recording_target`` in ``time_bins`` ((start, end) ms; default 70-170) from now on.

        The region's layer is resolved (and selected, if needed) at the next :meth:`look_at`.
        """
        self.recording_target = str(recording_target)
        self.time_bins = checked_time_bins(time_bins) if time_bins is not None else list(DEFAULT_TIME_BINS)
        self.task = None

    def start_task(self, task: str, fitting_stimuli=None) -> None:
        """Prepare to answer ``task`` from now on.

        Parameters
        ----------
        task : {"passive", "label", "probabilities", "odd_one_out"}
        fitting_stimuli
            ``label``: ``"imagenet"`` or a list of labels among the 16 categories of Geirhos et al.
            (2019); ``probabilities``: a StimulusSet with an ``image_label`` column to fit the readout
            on (fitted at the next :meth:`look_at`, or loaded from the cache of readouts fitted on the
            same features and labels); otherwise ignored.

        Raises
        ------
        ValidationError
            For an unknown task or missing fitting stimuli.
        """
        if task == Task.passive:
            self.task = None
            return
        if task == Task.label:
            if fitting_stimuli is None:
                raise ValidationError("the label task needs fitting_stimuli='imagenet' or a list of labels")
            if isinstance(fitting_stimuli, str):
                if fitting_stimuli != "imagenet":
                    raise ValidationError(f"label task: fitting_stimuli must be 'imagenet' or a list of labels, "
                                          f"got {fitting_stimuli!r}")
                self._labels = "imagenet"
            else:
                self._labels = list(fitting_stimuli)
                readouts.category_probabilities(np.zeros((1, 1000)), self._labels)  # validates labels
        elif task == Task.probabilities:
            if not isinstance(fitting_stimuli, StimulusSet) or "image_label" not in fitting_stimuli.columns:
                raise ValidationError("the probabilities task needs fitting_stimuli: a StimulusSet with an "
                                      "'image_label' column")
            # loaded now if cached, else fitted at the next look_at (from its features, when it shows the fitting
            # images too: see _fit_readout)
            self._fitting = fitting_stimuli
            key = self._readout_key(fitting_stimuli)
            self._classifier = self._readout_cache().load(key) if key is not None else None
        elif task != Task.odd_one_out:
            raise ValidationError(f"unknown task {task!r}; expected one of passive, label, probabilities, "
                                  f"odd_one_out")
        self.task = task

    def look_at(self, stimuli: StimulusSet, number_of_trials: int = 1, require_variance: bool = False):
        """Show ``stimuli`` and answer the current task or recording.

        Returns
        -------
        NeuroidAssembly
            When recording: ``presentation x neuroid x time_bin`` features of the region's layer.
        BehavioralAssembly
            ``label``: one label per presentation (ImageNet synset ids, with ``label_name`` and ``synset``; or
            categories); ``probabilities``: ``presentation x choice``; ``odd_one_out``: per triplet
            (consecutive rows of ``stimuli``), the index 0, 1 or 2 of the odd one out.

        Raises
        ------
        BrainScoreError
            If neither a task nor a recording was started.
        """
        if self.task == Task.label:
            return self._look_label(stimuli, number_of_trials, require_variance)
        if self.task == Task.probabilities:
            features = self._features(stimuli, self.behavioral_readout_layer, number_of_trials, require_variance)
            if self._classifier is None:
                self._classifier = self._fit_readout(stimuli, features)
            probabilities = self._classifier.predict_proba(features.values)
            coords = {n: c for n, c in features.coords.items() if c.dims == ("presentation",)}
            return BehavioralAssembly(probabilities, dims=("presentation", "choice"),
                                      coords={**coords, "choice": np.asarray(self._classifier.labels_, dtype=object)})
        if self.task == Task.odd_one_out:
            return self._look_odd_one_out(stimuli, number_of_trials)
        if self.recording_target is None:
            raise BrainScoreError(f"model {self.identifier!r}: call start_recording(region, time_bins) or "
                                  f"start_task(task) before look_at")
        layer = self.layer_for(self.recording_target)
        features = self._features(stimuli, layer, number_of_trials, require_variance)
        features = features.assign_coords(region=("neuroid", np.full(features.sizes["neuroid"],
                                                                     self.recording_target, dtype=object)))
        return on_time_bins(features, self.time_bins)

    def look_at_blocks(self, stimuli: StimulusSet, number_of_trials: int = 1) -> NeuroidBlocks | None:
        """The recording :meth:`look_at` would return, as blocks of neuroids read from the features on disk.

        For a per-neuroid analysis of a layer that may not fit in memory (issue 22): the region's
        layer is extracted (or found in the cache) exactly as :meth:`look_at` extracts it, but not
        loaded; :meth:`~brainscore.data.blocks.NeuroidBlocks.read` gives the values :meth:`look_at`
        would hold (its single time bin dropped), bit for bit, a block at a time.

        Returns
        -------
        NeuroidBlocks or None
            None where the recording cannot be read in blocks (the caller then uses :meth:`look_at`):
            a task is set instead of a recording, more than one time bin was asked for, or the
            activations model keeps no features files (no ``extract`` giving
            :class:`~brainscore.models.extraction.core.LayerFeatures`).

        Raises
        ------
        BrainScoreError
            If neither a task nor a recording was started.
        """
        if self.task is not None:
            return None
        if self.recording_target is None:
            raise BrainScoreError(f"model {self.identifier!r}: call start_recording(region, time_bins) before "
                                  f"look_at_blocks")
        extract = getattr(self.activations_model, "extract", None)
        if extract is None or len(self.time_bins) != 1:
            return None
        layer = self.layer_for(self.recording_target)
        features = extract(stimuli, [layer], number_of_trials=number_of_trials, require_variance=False)[layer]
        if not hasattr(features, "blocks"):
            return None
        return features.blocks(stimuli, self.identifier,
                               {"region": np.full(features.n_features, self.recording_target, dtype=object)})

    # ---- layers -------------------------------------------------------------------------------
    def candidates(self) -> LayerCandidates:
        """The candidate layers as a scorer sees them (one pass, PCA-reduced)."""
        return LayerCandidates(self, self.layers)

    def layer_for(self, region: str) -> str:
        """The layer committed to ``region``: declared, else selected by ``layer_scorer`` (once, then
        cached), else (no scorer, or no selection data for the region) by the layer rule.

        Raises
        ------
        BrainScoreError
            If the scorer returns no finite score; ValidationError for a region the rule does not
            know (the reference maps V1, V2, V4 and IT) when it cannot be selected either.
        """
        if region in self.region_layer_map:
            self.layer_methods.setdefault(region, {"method": "declared"})
            return self.region_layer_map[region]
        near = [key for key in self.region_layer_map if str(key).casefold() == str(region).casefold()]
        if near:
            raise ValidationError(f"model {self.identifier!r} has a layer for region {near[0]!r} but is asked for "
                                  f"{region!r}: region names are case-sensitive; use "
                                  f"region_layer_map={{{region!r}: {self.region_layer_map[near[0]]!r}}}")
        if self.layer_scorer is not None:
            try:
                selection = self._select(region)
            except NoSelectionDataError:
                pass
            else:
                self.region_layer_map[region] = selection["layer"]
                self.layer_scores[region] = dict(selection["scores"])
                benchmarks = getattr(self.layer_scorer, "benchmarks", None)
                self.layer_methods[region] = {"method": "selection", "scorer": dict(selection["scorer"]),
                                              "benchmarks": list(benchmarks(region)) if callable(benchmarks) else []}
                return selection["layer"]
        return self.commit_by_rule(region)

    def commit_by_rule(self, region: str) -> str:
        """Commit ``region`` by the relative-depth rule (:func:`brainscore.models.layer_rule.rule_layer`).

        Returns
        -------
        str
            The committed layer; ``layer_methods[region]`` records the rule and its parameters.

        Raises
        ------
        ValidationError
            For a region the rule has no data for.
        """
        if region not in layer_rule.load()["rule"]["relative_depth"]:
            middle = self.layers[len(self.layers) // 2]
            raise ValidationError(
                f"model {self.identifier!r} has no layer committed to region {region!r}, no selection data for it "
                f"and no layer rule for region {region!r} (the rule knows {layer_rule.REGIONS}). Give a map, e.g. "
                f"region_layer_map={{{region!r}: {middle!r}}} (candidates: {self.layers}), or `--layer {middle}` on "
                f"the command line (it commits the benchmark's region).")
        layer, parameters = layer_rule.rule_layer(region, self.layers)
        self.region_layer_map[region] = layer
        self.layer_methods[region] = {"method": "rule", **parameters, "candidates": self.candidates_source}
        return layer

    def layer_commitments(self) -> dict[str, dict[str, Any]]:
        """Region -> ``{"layer", "method", ...}`` for every committed region: the layer and how it was chosen.

        ``selection`` entries carry ``scores`` (every candidate's selection score, depth order).
        """
        table: dict[str, dict[str, Any]] = {}
        for region, layer in self.region_layer_map.items():
            entry = {"layer": layer, **self.layer_methods.get(region, {"method": "declared"})}
            if entry["method"] == "selection" and region in self.layer_scores:
                entry["scores"] = [[candidate, float(self.layer_scores[region][candidate])] for candidate in self.layers
                                   if candidate in self.layer_scores[region]]
            table[str(region)] = entry
        return table

    def _selection_key(self, region: str) -> str:
        model = self.activations_model
        preprocessing = getattr(model, "preprocessing", None)
        model_key = getattr(model, "model_key", None)  # a video model's content key (weights and plugin code)
        model_key = {"model_key": model_key()} if callable(model_key) else {}
        return content_key(kind="layer_selection", weights=getattr(model, "weights_hash", self.identifier), **model_key,
                           architecture=getattr(model, "architecture_fingerprint", None),
                           numerics=model.numerics() if hasattr(model, "numerics") else None,
                           preprocessing=(preprocessing.key() if hasattr(preprocessing, "key") else
                                          callable_identity(preprocessing) if preprocessing is not None else None),
                           layers=self.layers, region=region, visual_degrees=self._visual_degrees,
                           scorer=_scorer_identity(self.layer_scorer),
                           pca=[SELECTION_PCA_COMPONENTS, SELECTION_PCA_METHOD])

    def _selection_cache(self) -> Cache:
        # keyed on this module's code and the scorer's (its module and what that imports)
        return Cache("layer_selection", code=[self.layer_scorer])

    def selection_cached(self, region: str) -> bool:
        """Whether the layer choice for ``region`` is in the cache (so committing it runs no selection)."""
        if not getattr(self.activations_model, "cacheable", True):
            return False
        return self._selection_cache().load(self._selection_key(region)) is not None

    def _select(self, region: str) -> dict[str, Any]:
        if not getattr(self.activations_model, "cacheable", True):  # nothing identifies its code: nothing stored
            return self._score_layers(region)
        return self._selection_cache().get_or_compute(self._selection_key(region), lambda: self._score_layers(region))

    def _score_layers(self, region: str) -> dict[str, Any]:
        candidates = self.candidates()
        with stage(f"{self.identifier}: layer selection for {region} among {len(candidates.layers)} candidate layers"):
            scores = self.layer_scorer(region, candidates)
        scores = {str(layer): float(score) for layer, score in dict(scores).items()}
        unknown = [layer for layer in scores if layer not in self.layers]
        if unknown:
            raise BrainScoreError(f"layer scorer returned scores for layers {unknown} that are not candidates "
                                  f"of {self.identifier!r}: {self.layers}")
        ordered = [layer for layer in self.layers if layer in scores and np.isfinite(scores[layer])]
        if not ordered:
            raise BrainScoreError(f"layer scorer gave no finite score for region {region!r} of "
                                  f"{self.identifier!r} (scores: {scores})")
        best = max(ordered, key=lambda layer: scores[layer])  # first of equal maxima, in depth order
        return {"layer": best, "scores": scores, "region": region, "scorer": _scorer_identity(self.layer_scorer)}

    # ---- the probabilities readout ------------------------------------------------------------
    def _readout_key(self, fitting: StimulusSet) -> str | None:
        """Content key of the readout fitted on ``fitting``: the features' cache name (weights, architecture,
        preprocessing, fitting images, layer), each image's label, the classifier's settings and scikit-learn's
        version. None when the activations model names no features cache (then nothing is cached)."""
        cache_paths = getattr(self.activations_model, "cache_paths", None)
        if cache_paths is None or not getattr(self.activations_model, "cacheable", True):
            return None
        import sklearn

        layer = self.behavioral_readout_layer
        labels = sorted(zip(fitting["stimulus_id"].astype(str), fitting["image_label"].astype(str)))
        return content_key(kind="probabilities_readout", features=cache_paths(fitting, [layer])[layer].name,
                           labels=labels, C=readouts.ProbabilitiesClassifier().C, sklearn=sklearn.__version__)

    def _readout_cache(self) -> Cache:
        # keyed on this module's code and the readout's
        return Cache("readouts", code=[readouts])

    def _fit_readout(self, shown: StimulusSet, shown_features: NeuroidAssembly) -> readouts.ProbabilitiesClassifier:
        """Fit (or load) the readout of :meth:`start_task`'s fitting stimuli.

        Their features are the rows of ``shown_features`` when the images :meth:`look_at` shows include
        every fitting image (same id, same file, one presentation each), so a benchmark that fits on a
        subset of the images it shows (cross-validation folds) runs the network once; otherwise they
        are extracted.
        """
        fitting = self._fitting
        labels = fitting["image_label"].to_numpy()

        def fit() -> readouts.ProbabilitiesClassifier:
            rows = _rows_of(fitting, shown, shown_features)
            values = rows if rows is not None else self._features(fitting, self.behavioral_readout_layer).values
            return readouts.ProbabilitiesClassifier().fit(values, labels)

        key = self._readout_key(fitting)
        return fit() if key is None else self._readout_cache().get_or_compute(key, fit)

    # ---- helpers ------------------------------------------------------------------------------
    def _features(self, stimuli: StimulusSet, layer: str, number_of_trials: int = 1,
                  require_variance: bool = False) -> NeuroidAssembly:
        kwargs = dict(number_of_trials=number_of_trials, require_variance=require_variance)
        if require_variance:
            kwargs["visual_degrees"] = self._visual_degrees
        return self.activations_model(stimuli, layers=[layer], **kwargs)

    def _look_label(self, stimuli, number_of_trials, require_variance) -> BehavioralAssembly:
        logits = self._features(stimuli, LOGITS, number_of_trials, require_variance)
        coords = {n: c for n, c in logits.coords.items() if c.dims == ("presentation",)}
        values = logits.transpose("presentation", "neuroid").values
        if self._labels == "imagenet":
            choices = readouts.imagenet_labels(values)
            names = np.asarray(readouts.imagenet_class_names(), dtype=object)[np.argmax(values, axis=1)]
            coords["label_name"] = ("presentation", names)
            coords["synset"] = ("presentation", np.asarray(choices, dtype=object))  # the reference's name for them
        else:
            choices = readouts.choose_labels(values, self._labels)
        return BehavioralAssembly(np.asarray(choices, dtype=object), dims=("presentation",), coords=coords)

    def _look_odd_one_out(self, stimuli: StimulusSet, number_of_trials: int) -> BehavioralAssembly:
        ids = stimuli["stimulus_id"].astype(str).to_numpy()
        if len(ids) % 3:
            raise ValidationError(f"odd_one_out: stimuli must list triplets as consecutive rows (a multiple of 3), "
                                  f"got {len(ids)} rows")
        unique = stimuli.drop_duplicates(subset="stimulus_id")
        unique = StimulusSet(unique, identifier=stimuli.identifier, stimulus_paths=stimuli.stimulus_paths)
        features = self._features(unique, self.behavioral_readout_layer, number_of_trials)
        order = {sid: i for i, sid in enumerate(features["stimulus_id"].values)}
        triplets = np.array([order[sid] for sid in ids]).reshape(-1, 3)
        similarity = readouts.similarity_matrix(features.transpose("presentation", "neuroid").values,
                                                self.similarity_measure)
        choice = readouts.odd_one_out(similarity, triplets)
        grid = ids.reshape(-1, 3)
        coords = {"stimulus_id": ("presentation", np.array(["|".join(t) for t in grid], dtype=object)),
                  "stimulus_id_0": ("presentation", grid[:, 0].astype(object)),
                  "stimulus_id_1": ("presentation", grid[:, 1].astype(object)),
                  "stimulus_id_2": ("presentation", grid[:, 2].astype(object)),
                  "odd_one_out_id": ("presentation", grid[np.arange(len(grid)), choice].astype(object))}
        return BehavioralAssembly(choice, dims=("presentation",), coords=coords)

    def __repr__(self) -> str:
        return f"<ModelCommitment {self.identifier} layers={len(self.layers)} map={self.region_layer_map}>"


# ------------------------------------------------------------------------------------------------
# helpers for model plugins
# ------------------------------------------------------------------------------------------------
def load_region_layer_map(plugin_dir, identifier: str) -> dict[str, str]:
    """The stored map ``<plugin_dir>/region_layer_map/<identifier>.json`` (region -> layer), or {}.

    Raises
    ------
    ValidationError
        If the file is not a JSON object of strings.
    """
    import json
    from pathlib import Path

    path = Path(plugin_dir) / "region_layer_map" / f"{identifier}.json"
    if not path.is_file() or not path.read_text(encoding="utf-8").strip():
        return {}
    mapping = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(mapping, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in mapping.items()):
        raise ValidationError(f"{path} must hold a JSON object mapping regions to layer names, e.g. "
                              f'{{"V4": "_blocks.5"}}')
    return mapping


def pytorch_commitment(identifier: str, model, layers: Sequence[str] | None = None, preprocessing=None,
                       weights_hash: str | None = None, region_layer_map: Mapping[str, str] | None = None,
                       plugin_dir=None, visual_degrees: float = 8, behavioral_readout_layer: str | None = None,
                       layer_scorer=None, batch_size: int | None = None, device=None) -> ModelCommitment:
    """A :class:`ModelCommitment` of a PyTorch network: the usual body of a model plugin's factory.

    The committed map is the plugin's stored ``region_layer_map/<identifier>.json`` (when
    ``plugin_dir`` is given) updated with ``region_layer_map`` (explicit entries win).

    Parameters
    ----------
    identifier : str
    model : torch.nn.Module or NetworkRecipe
        The network, or a :class:`~brainscore.models.identity.NetworkRecipe` that builds it only
        when an activation is not cached.
    layers : sequence of str, optional
        Candidate layers in depth order (None: the outputs of the network's top-level blocks).
    preprocessing : Preprocessing, optional
    weights_hash : str, optional
        sha256 of the weights file (default: hash of the state dict).
    region_layer_map : dict, optional
    plugin_dir : path, optional
        Folder of the plugin (``Path(__file__).parent``).
    visual_degrees, behavioral_readout_layer, layer_scorer : see :class:`ModelCommitment`
    batch_size : int, optional
        Default: :data:`~brainscore.models.extraction.DEFAULT_BATCH_SIZE` on the CPU,
        :data:`~brainscore.models.extraction.DEFAULT_GPU_BATCH_SIZE` on a GPU.
    device : str, optional
    """
    from brainscore.models.extraction import ActivationsExtractor

    mapping = load_region_layer_map(plugin_dir, identifier) if plugin_dir is not None else {}
    mapping.update(region_layer_map or {})
    extractor = ActivationsExtractor(model, identifier, preprocessing, weights_hash=weights_hash,
                                     batch_size=batch_size, device=device)
    return ModelCommitment(identifier, extractor, layers, region_layer_map=mapping, visual_degrees=visual_degrees,
                           behavioral_readout_layer=behavioral_readout_layer, layer_scorer=layer_scorer)
