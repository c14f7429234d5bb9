"""CLI commands (placeholder until its issue lands)."""

import typer


def register(app: typer.Typer) -> None:
    """Add this module's commands to the app."""
