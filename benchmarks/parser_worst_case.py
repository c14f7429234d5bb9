"""Worst-case time of every verdict parser on hostile answers as large as the HTTP client lets in (issue 26).

An answer up to the client's cap (8 MB by default) reaches the parser. Each text below is built to make a regular
expression backtrack: long runs of spaces, ``*`` or newlines, a word a pattern starts on repeated with spaces after it,
half-written verdicts. Every parser (``judges.parsing.PARSERS``, default options) parses each text; the figure is the
slowest parse. Before the patterns were made linear, clb_confidence took 46 s on 2 MB of ``*`` lines and likert did
not finish in minutes on ``rating`` followed by spaces; the goal is well under a second per MB.
The last line is ``worst_s_per_mb=<float> parser=<name> text=<name>``.

    .venv/bin/python benchmarks/parser_worst_case.py [--mb 2]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from judgewise.judges.parsing import PARSERS, make_parser  # noqa: E402


def hostile_texts(size: int) -> dict[str, str]:
    """Texts of about ``size`` characters, each repeating one piece that a pattern may backtrack on."""
    pieces = {"spaces": " ", "newlines": "\n", "stars": "*", "open brackets": "[[", "verdicts": "[[A>B]] ",
              "star lines": "*" * 1000 + "\n", "blank lines then a digit": "  \n" * 1000 + "1 x\n",
              "hash lines": "# " * 1000 + "1 x\n", "crlf star lines": "** \r\n" * 1000 + "2 no\r\n",
              "rating then spaces": "rating" + " " * 1000, "grade then spaces": "grade" + " " * 1000,
              "answer then spaces": "answer" + " " * 1000, "answer colon spaces": "answer:" + " " * 1000,
              "brackets then spaces": "[[" + " " * 1000, "A then spaces": "[[A" + " " * 1000,
              "A then arrows": "[[A" + " >" * 500, "digit then dots": "1" + "." * 1000 + "x\n",
              "Output (": "Output (", "digits": "1"}
    return {name: piece * max(1, size // len(piece)) for name, piece in pieces.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=2.0, help="size of each hostile text in MB")
    args = ap.parse_args()
    texts = hostile_texts(int(args.mb * (1 << 20)))
    worst = (0.0, "", "")
    for name in PARSERS:
        parser = make_parser(name)
        times = {}
        for label, text in texts.items():
            started = time.perf_counter()
            parser.parse(text)
            times[label] = time.perf_counter() - started
        label = max(times, key=times.get)
        print(f"{name:20s} slowest: {label:26s} {times[label]:.2f} s ({times[label] / args.mb:.2f} s/MB)")
        worst = max(worst, (times[label] / args.mb, name, label))
    print(f"worst_s_per_mb={worst[0]:.3f} parser={worst[1]} text={worst[2].replace(' ', '_')}")


if __name__ == "__main__":
    main()
