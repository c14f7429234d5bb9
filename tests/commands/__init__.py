"""Tests of judgewise.commands."""
