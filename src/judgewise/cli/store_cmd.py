"""``judgewise store export|stats|copy``: read a judgment store (a SQLite file or a postgresql:// URL), or move one.

Readers open the store read-only (a file that is not a store is refused and never written to); ``copy`` writes
only to its target.
"""

from __future__ import annotations


import typer

from judgewise.cli.console import err, out
from judgewise.cli.options import Json, Output
from judgewise.commands.text import copy_line, export_line, json_text, store_stats_lines

STORE_HELP = "Store file or postgresql://user@host/db URL."


def register(app: typer.Typer) -> None:
    """Add the ``store`` group to the app."""
    store_app = typer.Typer(help="Inspect, export and copy a judgment store.", no_args_is_help=True)
    app.add_typer(store_app, name="store")

    @store_app.command("export")
    def export(store: str = typer.Argument(..., help=STORE_HELP),
               output: Output = ...,
               only_ok: bool = typer.Option(False, "--only-ok", help="Leave out games stored as failed."),
               table: str = typer.Option("games", "--table", help="games or human_labels (`judgewise label`).")) -> None:
        """Export the store's games as the canonical judgments table (+ store columns) or its human_labels."""
        from judgewise.commands.stores import export_labels, export_store  # loads pandas (and with it pyarrow)

        if table != "games":
            info = export_labels(store, output, table=table)
            return err().print(f"exported {info['rows']} label rows ({info['labellers']} labellers, {info['items']} "
                               f"items) to {info['output']}", highlight=False, markup=False, soft_wrap=True)
        info = export_store(store, output, only_ok=only_ok)
        err().print(export_line(info, only_ok), highlight=False, markup=False, soft_wrap=True)

    @store_app.command("stats")
    def stats(store: str = typer.Argument(..., help=STORE_HELP),
              as_json: Json = False) -> None:
        """Counts ok/failed, calls, tokens and cost, by judge and by model."""
        from judgewise.commands.stores import store_stats  # the commands layer loads pandas (and with it pyarrow)

        s = store_stats(store)
        if as_json:
            print(json_text(s, indent=None))
            return
        for line in store_stats_lines(s):
            out().print(line, markup=False)

    @store_app.command("copy")
    def copy(source: str = typer.Argument(..., help=f"The store to read. {STORE_HELP}"),
             target: str = typer.Argument(..., help=f"The store to write (made when missing). {STORE_HELP}"),
             as_json: Json = False) -> None:
        """Copy every game, run fact, journaled answer and batch (open ones too) from one store to another
        (SQLite <-> PostgreSQL); games already judged ok in the target are kept."""
        from judgewise.commands.stores import copy_store  # the commands layer loads pandas (and with it pyarrow)

        info = copy_store(source, target)
        if as_json:
            print(json_text(info, indent=None))
            return
        out().print(copy_line(info), markup=False)
