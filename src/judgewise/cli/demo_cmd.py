"""CLI commands (placeholder until its issue lands)."""

import typer


def register(app: typer.Typer) -> None:
    """Add this module's commands to the app."""

    @app.command()
    def version() -> None:
        """Print the judgewise version."""
        from judgewise import __version__

        typer.echo(__version__)
