"""Tests of judgewise.designs."""
