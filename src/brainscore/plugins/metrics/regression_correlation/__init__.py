"""Regression + correlation metrics (neural predictivity), under the reference's identifiers.

``*_cv`` (and the bare names, kept as aliases) cross-validate over stimuli; ``*_split`` take fixed
train and test sets (``metric(source_train, source_test, target_train, target_test)``);
``reverse_pls*`` predict the model from the data; ``spantime_*`` fit one regression over all time
bins. Every factory accepts ``crossvalidation_kwargs`` (cross-validated metrics),
``regression_kwargs`` and, directly, the regression's own keyword arguments (``n_components``,
``alpha``, ``alphas``, ``gram_dtype``) and ``device``. See :mod:`brainscore.metrics.neural.regression`.

References: Yamins et al. 2014 (PLS, PNAS 111:8619); Schrimpf et al. 2018 (bioRxiv 407007);
Arend et al. 2018 (neuron_to_neuron, CBMM memo); Muzellec & Kar 2025 (reverse predictivity).
"""
from brainscore.registry import register_metric

_SPLIT_KWARGS = ("crossvalidation_kwargs", "regression_kwargs", "device", "identifier")


def _cv(regression, identifier, reverse=False, **kwargs):
    from brainscore.metrics.neural.regression import CrossRegressedCorrelation
    options = {key: kwargs.pop(key) for key in _SPLIT_KWARGS if key in kwargs}
    regression_kwargs = {**(options.pop("regression_kwargs", None) or {}), **kwargs}
    return CrossRegressedCorrelation(regression, regression_kwargs=regression_kwargs, reverse=reverse,
                                     identifier=options.pop("identifier", identifier), **options)


def _split(regression, identifier, reverse=False, **kwargs):
    from brainscore.metrics.neural.regression import TrainTestSplitCorrelation
    options = {key: kwargs.pop(key) for key in _SPLIT_KWARGS if key in kwargs}
    options.pop("crossvalidation_kwargs", None)  # accepted, as the reference does, and unused
    regression_kwargs = {**(options.pop("regression_kwargs", None) or {}), **kwargs}
    return TrainTestSplitCorrelation(regression, regression_kwargs=regression_kwargs, reverse=reverse,
                                     identifier=options.pop("identifier", identifier), **options)


def _spantime(regression, identifier, **kwargs):
    from brainscore.metrics.neural.regression import SpanTimeCrossRegressedCorrelation
    options = {key: kwargs.pop(key) for key in _SPLIT_KWARGS if key in kwargs}
    regression_kwargs = {**(options.pop("regression_kwargs", None) or {}), **kwargs}
    return SpanTimeCrossRegressedCorrelation(regression, regression_kwargs=regression_kwargs,
                                             identifier=options.pop("identifier", identifier), **options)


@register_metric("pls")
def _pls(**kwargs):
    return _cv("pls", "pls", **kwargs)


@register_metric("pls_cv")
def _pls_cv(**kwargs):
    return _cv("pls", "pls_cv", **kwargs)


@register_metric("pls_split")
def _pls_split(**kwargs):
    return _split("pls", "pls_split", **kwargs)


@register_metric("ridge")
def _ridge(**kwargs):
    return _cv("ridge", "ridge", **kwargs)


@register_metric("ridge_cv")
def _ridge_cv(**kwargs):
    return _cv("ridge", "ridge_cv", **kwargs)


@register_metric("ridge_split")
def _ridge_split(**kwargs):
    return _split("ridge", "ridge_split", **kwargs)


@register_metric("ridgecv")
def _ridgecv(**kwargs):
    return _cv("ridgecv", "ridgecv", **kwargs)


@register_metric("ridgecv_cv")
def _ridgecv_cv(**kwargs):
    return _cv("ridgecv", "ridgecv_cv", **kwargs)


@register_metric("ridgecv_split")
def _ridgecv_split(**kwargs):
    return _split("ridgecv", "ridgecv_split", **kwargs)


@register_metric("linear_predictivity")
def _linear(**kwargs):
    return _cv("linear", "linear_predictivity", **kwargs)


@register_metric("linear_predictivity_cv")
def _linear_cv(**kwargs):
    return _cv("linear", "linear_predictivity_cv", **kwargs)


@register_metric("linear_predictivity_split")
def _linear_split(**kwargs):
    return _split("linear", "linear_predictivity_split", **kwargs)


@register_metric("neuron_to_neuron")
def _neuron_to_neuron(**kwargs):
    return _cv("neuron_to_neuron", "neuron_to_neuron", **kwargs)


@register_metric("neuron_to_neuron_cv")
def _neuron_to_neuron_cv(**kwargs):
    return _cv("neuron_to_neuron", "neuron_to_neuron_cv", **kwargs)


@register_metric("neuron_to_neuron_split")
def _neuron_to_neuron_split(**kwargs):
    return _split("neuron_to_neuron", "neuron_to_neuron_split", **kwargs)


@register_metric("reverse_pls")
def _reverse_pls(**kwargs):
    return _cv("pls", "reverse_pls", reverse=True, **kwargs)


@register_metric("reverse_pls_cv")
def _reverse_pls_cv(**kwargs):
    return _cv("pls", "reverse_pls_cv", reverse=True, **kwargs)


@register_metric("reverse_pls_split")
def _reverse_pls_split(**kwargs):
    return _split("pls", "reverse_pls_split", reverse=True, **kwargs)


@register_metric("spantime_pls")
def _spantime_pls(**kwargs):
    return _spantime("pls", "spantime_pls", **kwargs)


@register_metric("spantime_ridge")
def _spantime_ridge(**kwargs):
    return _spantime("ridge", "spantime_ridge", **kwargs)
