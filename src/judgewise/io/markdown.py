"""Markdown elements of an answer, counted as Arena-Hard-Auto counts them: the one definition of style counts.

Arena-Hard-Auto's ``utils/add_markdown_info.py`` (``remove_pattern`` then ``count_markdown_elements``): the
contents of fenced code blocks (``` ```…``` ``` with no backtick inside) are removed first, then it counts headers by
level (a line starting with exactly k ``#`` and a space, k = 1…6), ordered (``1.``) and unordered (``-``, ``*``,
``+``) list items, and bold spans (``**x**`` and ``__x__``). Its style control (CLB §3.2.1 "Bias correction";
``utils_math.py`` ``construct_style_matrices``) sums each kind over its levels, as
:func:`judgewise.ratings.features.style_counts` does.
"""

from __future__ import annotations

import re

CODE_BLOCK = re.compile(r"```([^`]*)```")
HEADERS = {f"h{k}": re.compile(rf"^#{{{k}}}\s", re.MULTILINE) for k in range(1, 7)}
# a list item's indent stays on its line ([^\S\n]: whitespace but newlines): Arena-Hard's ``^\s*`` counts the same items
# but lets the indent run across blank lines, which takes time quadratic in a run of them (a hostile answer)
LISTS = {"ordered": re.compile(r"^[^\S\n]*\d+\.\s", re.MULTILINE),
         "unordered": re.compile(r"^[^\S\n]*[-*+]\s", re.MULTILINE)}
BOLD = {"**": re.compile(r"\*\*[^*\n]+\*\*"), "__": re.compile(r"__[^_\n]+__")}


def without_code_blocks(answer: str) -> str:
    """``answer`` with its fenced code blocks' contents removed, as ``add_markdown_info.remove_pattern`` does."""
    text = answer
    for block in CODE_BLOCK.findall(answer):
        text = text.replace(block, "")
    return text


def markdown_counts(answer: str) -> dict:
    """Arena-Hard's markdown metadata of an answer (module docstring): ``{"header_count": {h1…h6},
    "list_count": {ordered, unordered}, "bold_count": {"**", "__"}}``."""
    text = without_code_blocks(answer or "")
    return {"header_count": {name: len(rx.findall(text)) for name, rx in HEADERS.items()},
            "list_count": {name: len(rx.findall(text)) for name, rx in LISTS.items()},
            "bold_count": {name: len(rx.findall(text)) for name, rx in BOLD.items()}}

