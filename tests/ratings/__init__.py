"""Tests of judgewise.ratings."""
