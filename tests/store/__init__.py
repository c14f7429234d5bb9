"""Tests of judgewise.store."""
