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
from brainscore.registry import lazy, register_metric

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


# identifier: how it is built (cross-validated, fixed split or over time), the regression, and reverse
register_metric("pls", lazy(_cv, "pls", "pls"))
register_metric("pls_cv", lazy(_cv, "pls", "pls_cv"))
register_metric("pls_split", lazy(_split, "pls", "pls_split"))
register_metric("ridge", lazy(_cv, "ridge", "ridge"))
register_metric("ridge_cv", lazy(_cv, "ridge", "ridge_cv"))
register_metric("ridge_split", lazy(_split, "ridge", "ridge_split"))
register_metric("ridgecv", lazy(_cv, "ridgecv", "ridgecv"))
register_metric("ridgecv_cv", lazy(_cv, "ridgecv", "ridgecv_cv"))
register_metric("ridgecv_split", lazy(_split, "ridgecv", "ridgecv_split"))
register_metric("linear_predictivity", lazy(_cv, "linear", "linear_predictivity"))
register_metric("linear_predictivity_cv", lazy(_cv, "linear", "linear_predictivity_cv"))
register_metric("linear_predictivity_split", lazy(_split, "linear", "linear_predictivity_split"))
register_metric("neuron_to_neuron", lazy(_cv, "neuron_to_neuron", "neuron_to_neuron"))
register_metric("neuron_to_neuron_cv", lazy(_cv, "neuron_to_neuron", "neuron_to_neuron_cv"))
register_metric("neuron_to_neuron_split", lazy(_split, "neuron_to_neuron", "neuron_to_neuron_split"))
register_metric("reverse_pls", lazy(_cv, "pls", "reverse_pls", reverse=True))
register_metric("reverse_pls_cv", lazy(_cv, "pls", "reverse_pls_cv", reverse=True))
register_metric("reverse_pls_split", lazy(_split, "pls", "reverse_pls_split", reverse=True))
register_metric("spantime_pls", lazy(_spantime, "pls", "spantime_pls"))
register_metric("spantime_ridge", lazy(_spantime, "ridge", "spantime_ridge"))
