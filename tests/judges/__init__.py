"""Tests of judgewise.judges."""
