"""Command-line interface: one module per command group, registered in app.py."""
