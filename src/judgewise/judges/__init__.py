"""Judging engine: backends, prompt templates, verdict parsing, durable store and scheduler."""
