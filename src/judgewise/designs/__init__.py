"""Comparison designs: which (prompt, model_a, model_b) comparisons to pay for."""
