"""Neural metrics: regression-based predictivity (PLS, ridge, ...) and distribution similarity of single-neuron properties."""
