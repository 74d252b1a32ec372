"""Behavioural metrics: accuracy, error consistency, I1/I2 and shape bias, with their ceilings."""
