"""Canonical tables, readers and importers of foreign formats, and row validation."""
