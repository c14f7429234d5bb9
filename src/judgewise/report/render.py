"""Turn report sections into one self-contained HTML file or a Markdown file with SVG figures beside it."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import re
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from judgewise import __version__
from judgewise.errors import InputError
from judgewise.io.atomic import write_text_atomic
from judgewise.report.document import OK, Section

if TYPE_CHECKING:
    import jinja2


def asset(name: str) -> str:
    """Text of a packaged file under ``report/assets`` or ``report/templates``."""
    return resources.files("judgewise.report").joinpath(name).read_text(encoding="utf-8")


def environment() -> jinja2.Environment:
    """Jinja2 environment over the packaged templates, autoescaping everything (model text is untrusted)."""
    import jinja2  # lazy: a Markdown report needs no template engine

    return jinja2.Environment(loader=jinja2.PackageLoader("judgewise.report", "templates"),
                              autoescape=True, undefined=jinja2.StrictUndefined,
                              trim_blocks=False, lstrip_blocks=False)


def script_hash(js: str) -> str:
    """CSP source for one inline script, so only the report's own script may run."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(js.encode("utf-8")).digest()).decode() + "'"


def render_html(sections: list[Section], *, title: str) -> str:
    """The report as one HTML document: CSS, script and SVG charts inline; nothing fetched from anywhere."""
    js = asset("assets/report.js")
    return environment().get_template("report.html.j2").render(
        title=title, sections=sections, css=asset("assets/report.css"), js=js, script_src=script_hash(js),
        version=__version__, generated=_now(), n_ok=sum(s.status == OK for s in sections))


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


_MD_PUNCT = re.compile(r"([\\`*_\[\]#~|$])")
_MD_AUTOLINK = re.compile(r"(?i)(?<=[a-z0-9])(:)(?=//)|(?<=www)(\.)")


def _md_escape(text) -> str:
    """Plain text for a Markdown line or table cell, shown literally on any CommonMark/GFM renderer: HTML
    characters become entities, Markdown punctuation (links, images, code, emphasis, pipes) is backslash-escaped,
    URL-looking text is broken so no renderer auto-links it, and line breaks become spaces."""
    s = " ".join(str(text).splitlines())
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    s = _MD_PUNCT.sub(r"\\\1", s)
    return _MD_AUTOLINK.sub(lambda m: "\\" + m.group(0), s)


def _file_stem(text: str) -> str:
    """A safe file name stem (letters, digits, ``._-``; never a path or a hidden file) for a figure."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", str(text)).lstrip(".") or "figure"


def render_markdown(sections: list[Section], *, title: str, out_dir: Path, fig_dir: str = "figures") -> str:
    """Markdown text; writes each figure to ``out_dir/fig_dir/<section>-<name>.svg`` and links it."""
    try:
        (out_dir / fig_dir).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create the figures folder ({exc.strerror or exc})", file=str(out_dir / fig_dir)) \
            from None
    lines = [f"# {_md_escape(title)}", "", f"_judgewise {__version__} · generated {_now()}_", ""]
    for s in sections:
        lines += [f"## {_md_escape(s.title)}", ""]
        if s.is_slot:
            lines += [f"> **{s.status}** — {_md_escape(s.note)}", ""]
        lines += [_md_escape(p) + "\n" for p in s.paragraphs]
        lines += [f"- **{_md_escape(k)}**: {_md_escape(v)}" for k, v in s.facts] + ([""] if s.facts else [])
        for f in s.figures:
            rel = f"{fig_dir}/{_file_stem(f'{s.key}-{f.name}')}.svg"
            write_text_atomic(out_dir / rel, f.svg)
            lines += [f"![{_md_escape(f.caption)}]({rel})", "", f"*{_md_escape(f.caption)}*", ""]
        for t in s.tables:
            lines += [f"*{_md_escape(t.caption)}*", "", "| " + " | ".join(map(_md_escape, t.columns)) + " |",
                      "|" + "---|" * len(t.columns)]
            lines += ["| " + " | ".join(map(_md_escape, row)) + " |" for row in t.rows] + [""]
        if s.source:
            lines += [f"<sub>numbers from: {_md_escape(s.source)}</sub>", ""]
    return "\n".join(lines)
