"""Tests of the project as a whole: layering, docs, public API, every command on every input, security."""
