"""Tests of judgewise.report."""
