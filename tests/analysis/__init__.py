"""Tests of judgewise.analysis."""
