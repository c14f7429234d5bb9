"""Tests of judgewise.cli."""
