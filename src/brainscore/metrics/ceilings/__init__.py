"""Ceilings: how well data agree with themselves (split-half internal consistency, the RSA noise ceiling)."""
