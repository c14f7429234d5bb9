"""The markdown counts (style control's features) take time linear in an answer and count what Arena-Hard counts:
its list patterns (``^\\s*``) let an indent run across blank lines, quadratic in a run of them; judgewise's keep it on
its line and must count the same items in any text."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from judgewise.io.markdown import LISTS, markdown_counts

ARENA_HARD_LISTS = {"ordered": re.compile(r"^\s*\d+\.\s", re.MULTILINE),
                    "unordered": re.compile(r"^\s*[-*+]\s", re.MULTILINE)}
PIECES = ["\n", "\r\n", " ", "\t", "\x0b", "\u00a0", "1", "12", ".", "-", "*", "+", "#", "x", "**", "__", "```"]


@settings(max_examples=800, deadline=None)
@given(text=st.lists(st.sampled_from(PIECES), max_size=50).map("".join))
def test_list_items_are_counted_as_arena_hard_counts_them(text):
    for kind, pattern in LISTS.items():
        assert len(pattern.findall(text)) == len(ARENA_HARD_LISTS[kind].findall(text)), kind


def test_a_hostile_answer_of_blank_lines_is_counted():
    # 200,000 blank lines then an item: Arena-Hard's pattern backtracks over the run from every line start
    counts = markdown_counts("\n" * 200_000 + " 1. item\n- item\n")
    assert counts["list_count"] == {"ordered": 1, "unordered": 1}
