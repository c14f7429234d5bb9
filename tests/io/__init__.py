"""Tests of judgewise.io."""
