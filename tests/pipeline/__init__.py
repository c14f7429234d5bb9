"""Tests of judgewise.pipeline."""
