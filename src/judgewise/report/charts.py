"""Small inline SVG charts for the report and the explorer (no JavaScript, no CDN, print-friendly).

Charts only draw numbers they are given; every number comes from the library functions the CLI uses.
All labels are escaped: model names and prompt ids are untrusted text.
"""

from __future__ import annotations

import math
from html import escape

import numpy as np

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf",
           "#7f7f7f", "#bcbd22")
FONT = 'font-family="system-ui, sans-serif" font-size="11"'


def _fmt(x: float) -> str:
    """Short tick label."""
    if x == 0:
        return "0"
    mag = abs(x)
    if mag >= 1000:
        return f"{x:,.0f}"
    if mag >= 10:
        return f"{x:.0f}"
    if mag >= 1:
        return f"{x:.1f}".rstrip("0").rstrip(".")
    return f"{x:.2f}".rstrip("0").rstrip(".")


def nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """About ``n`` round tick values covering [lo, hi]."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo]
    raw = (hi - lo) / max(n, 1)
    step = 10 ** math.floor(math.log10(raw))
    for mult in (1, 2, 2.5, 5, 10):
        if raw <= mult * step:
            step *= mult
            break
    start = math.ceil(lo / step) * step
    return [round(v, 10) for v in np.arange(start, hi + step * 1e-9, step)]


def _svg(width: int, height: int, body: list[str], label: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {width} {height}" '
            f'width="{width}" height="{height}" role="img" aria-label="{escape(label)}" {FONT}>'
            + "".join(body) + "</svg>")


class _Scale:
    """Linear map from data [d0, d1] to pixels [p0, p1]."""

    def __init__(self, d0: float, d1: float, p0: float, p1: float):
        if not d1 > d0:
            d0, d1 = d0 - 1, d1 + 1
        self.d0, self.d1, self.p0, self.p1 = d0, d1, p0, p1

    def __call__(self, v: float) -> float:
        return self.p0 + (v - self.d0) / (self.d1 - self.d0) * (self.p1 - self.p0)


def _padded(values, pad: float = 0.05) -> tuple[float, float]:
    arr = np.asarray([v for v in values if v is not None and math.isfinite(v)], dtype=float)
    if arr.size == 0:
        return 0.0, 1.0
    lo, hi = float(arr.min()), float(arr.max())
    span = (hi - lo) or max(abs(hi), 1.0)
    return lo - pad * span, hi + pad * span


def _x_axis(sx: _Scale, y: float, top: float, title: str, ticks=None) -> list[str]:
    out = [f'<line x1="{sx.p0:.1f}" y1="{y:.1f}" x2="{sx.p1:.1f}" y2="{y:.1f}" stroke="#444"/>']
    for t in ticks if ticks is not None else nice_ticks(sx.d0, sx.d1):
        x = sx(t)
        out.append(f'<line x1="{x:.1f}" y1="{top:.1f}" x2="{x:.1f}" y2="{y:.1f}" stroke="#e5e5e5"/>'
                   f'<text x="{x:.1f}" y="{y + 14:.1f}" text-anchor="middle">{escape(_fmt(t))}</text>')
    out.append(f'<text x="{(sx.p0 + sx.p1) / 2:.1f}" y="{y + 30:.1f}" text-anchor="middle">{escape(title)}</text>')
    return out


def _y_axis(sy: _Scale, x: float, right: float, title: str, log: bool = False) -> list[str]:
    """Left axis with grid lines; ``log``: the data are log10 values, ticks at whole powers labelled 10^k."""
    out = [f'<line x1="{x:.1f}" y1="{sy.p0:.1f}" x2="{x:.1f}" y2="{sy.p1:.1f}" stroke="#444"/>']
    lo, hi = min(sy.d0, sy.d1), max(sy.d0, sy.d1)
    ticks = range(math.ceil(lo), math.floor(hi) + 1) if log else nice_ticks(lo, hi)
    for t in ticks:
        y = sy(t)
        label = _fmt(10 ** t) if log else _fmt(t)
        out.append(f'<line x1="{x:.1f}" y1="{y:.1f}" x2="{right:.1f}" y2="{y:.1f}" stroke="#e5e5e5"/>'
                   f'<text x="{x - 5:.1f}" y="{y + 4:.1f}" text-anchor="end">{escape(label)}</text>')
    mid = (sy.p0 + sy.p1) / 2
    out.append(f'<text transform="translate({x - 42:.1f},{mid:.1f}) rotate(-90)" text-anchor="middle">'
               f'{escape(title)}</text>')
    return out


def interval_chart(labels: list[str], scores, lows, highs, *, xlabel: str = "score",
                   ranks=None) -> str:
    """Horizontal leaderboard: one row per model (given order), a dot at the score and a bar over its CI."""
    n = len(labels)
    row_h, left, right, top = 20, 210, 30, 10
    width, height = 720, top + n * row_h + 45
    sx = _Scale(*_padded(list(scores) + list(lows) + list(highs)), left, width - right)
    body = _x_axis(sx, top + n * row_h, top, xlabel)
    for i, name in enumerate(labels):
        y = top + i * row_h + row_h / 2
        rank = f"{ranks[i]}. " if ranks is not None else ""
        tip = f"{rank}{name}: {scores[i]:.4g}"
        if lows[i] is not None and math.isfinite(lows[i]):
            tip += f" [{lows[i]:.4g}, {highs[i]:.4g}]"
            body.append(f'<line class="ci" x1="{sx(lows[i]):.1f}" y1="{y:.1f}" x2="{sx(highs[i]):.1f}" '
                        f'y2="{y:.1f}" stroke="{PALETTE[0]}" stroke-width="4" stroke-opacity="0.45"/>')
        body.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{escape(_short(rank + name, 34))}'
                    f'</text><circle class="point" cx="{sx(scores[i]):.1f}" cy="{y:.1f}" r="4" '
                    f'fill="{PALETTE[0]}"><title>{escape(tip)}</title></circle>')
    return _svg(width, height, body, f"interval chart of {xlabel}")


def _short(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _heat_colour(v: float) -> str:
    """0 → red, 0.5 → white, 1 → blue (NaN grey)."""
    if v is None or not math.isfinite(v):
        return "#eeeeee"
    v = min(max(v, 0.0), 1.0)
    if v >= 0.5:
        t = (v - 0.5) * 2
        r, g, b = 255 - t * (255 - 31), 255 - t * (255 - 119), 255 - t * (255 - 180)
    else:
        t = (0.5 - v) * 2
        r, g, b = 255 - t * (255 - 214), 255 - t * (255 - 39), 255 - t * (255 - 40)
    return f"#{int(r):02x}{int(g):02x}{int(b):02x}"


def heatmap(labels: list[str], matrix, counts=None, *, title: str = "win rate of row vs column") -> str:
    """Square matrix (row model's win rate against column model), cells annotated, NaN where never met."""
    n = len(labels)
    cell = max(18, min(44, 560 // max(n, 1)))
    left, top = 200, 150
    width, height = left + n * cell + 10, top + n * cell + 10
    body = []
    for j, name in enumerate(labels):
        x = left + j * cell + cell / 2
        body.append(f'<text transform="translate({x + 4:.1f},{top - 6}) rotate(-55)">'
                    f'{escape(_short(name, 26))}</text>')
    for i, row in enumerate(labels):
        y = top + i * cell
        body.append(f'<text x="{left - 6}" y="{y + cell / 2 + 4:.1f}" text-anchor="end">'
                    f'{escape(_short(row, 30))}</text>')
        for j, col in enumerate(labels):
            v = float(matrix[i][j])
            tip = f"{row} vs {col}: " + ("no matches" if not math.isfinite(v) else f"{v:.3f}")
            if counts is not None and math.isfinite(v):
                tip += f" (n={int(counts[i][j])})"
            body.append(f'<rect class="cell" x="{left + j * cell}" y="{y}" width="{cell - 1}" height="{cell - 1}" '
                        f'fill="{_heat_colour(v)}"><title>{escape(tip)}</title></rect>')
            if math.isfinite(v) and cell >= 26:
                body.append(f'<text x="{left + j * cell + cell / 2:.1f}" y="{y + cell / 2 + 4:.1f}" '
                            f'text-anchor="middle" font-size="9">{round(v * 100):d}</text>')
    return _svg(width, height, body, title)


def bar_chart(categories: list, values, *, xlabel: str, ylabel: str, width: int = 360,
              height: int = 220, colour: str = PALETTE[0], title: str = "") -> str:
    """Vertical bars (e.g. a histogram of per-prompt win counts)."""
    left, right, top, bottom = 50, 10, 24 if title else 10, 42
    vals = [float(v) for v in values]
    sy = _Scale(0, max(vals + [1e-9]) * 1.08, height - bottom, top)
    body = _y_axis(sy, left, width - right, ylabel)
    if title:
        body.append(f'<text x="{width / 2:.1f}" y="14" text-anchor="middle" font-weight="600">'
                    f'{escape(_short(title, 48))}</text>')
    n = max(len(vals), 1)
    slot = (width - left - right) / n
    for i, (c, v) in enumerate(zip(categories, vals)):
        x, y0 = left + i * slot, sy(v)
        body.append(f'<rect class="bar" x="{x + slot * 0.1:.1f}" y="{y0:.1f}" width="{slot * 0.8:.1f}" '
                    f'height="{sy.p0 - y0:.1f}" fill="{colour}"><title>{escape(f"{c}: {v:g}")}</title></rect>')
        if n <= 30 or i % math.ceil(n / 15) == 0:
            body.append(f'<text x="{x + slot / 2:.1f}" y="{height - bottom + 14}" text-anchor="middle">'
                        f'{escape(str(c))}</text>')
    body.append(f'<text x="{(left + width - right) / 2:.1f}" y="{height - 8}" text-anchor="middle">'
                f'{escape(xlabel)}</text>')
    return _svg(width, height, body, title or f"{ylabel} by {xlabel}")


def line_chart(series: dict[str, tuple], *, xlabel: str, ylabel: str, hlines: dict[str, float] | None = None,
               vlines: dict[str, float] | None = None, width: int = 640, height: int = 300,
               log_y: bool = False) -> str:
    """Lines with markers, one per named series of (xs, ys[, lows, highs]); optional labelled guide lines.
    ``log_y`` plots log10 of the (positive) values with ticks at powers of ten."""
    if log_y:
        series = {k: (s[0], [math.log10(v) if v and v > 0 else float("nan") for v in s[1]], *s[2:])
                  for k, s in series.items()}
    left, right, top, bottom = 60, 150, 10, 45
    xs_all = [x for s in series.values() for x in s[0]] + list((vlines or {}).values())
    ys_all = [y for s in series.values() for y in s[1]] + list((hlines or {}).values())
    for s in series.values():
        if len(s) == 4:
            ys_all += list(s[2]) + list(s[3])
    sx = _Scale(*_padded(xs_all, 0.02), left, width - right)
    sy = _Scale(*_padded(ys_all), height - bottom, top)
    body = _x_axis(sx, height - bottom, top, xlabel) + _y_axis(sy, left, width - right, ylabel, log_y)
    for k, (name, s) in enumerate(series.items()):
        colour = PALETTE[k % len(PALETTE)]
        pts = [(sx(x), sy(y)) for x, y in zip(s[0], s[1]) if math.isfinite(y)]
        if len(s) == 4:
            band = [(sx(x), sy(h)) for x, h in zip(s[0], s[3])] + [(sx(x), sy(lo)) for x, lo in
                                                                   reversed(list(zip(s[0], s[2])))]
            body.append(f'<polygon points="{_pts(band)}" fill="{colour}" fill-opacity="0.12" stroke="none"/>')
        body.append(f'<polyline class="series" points="{_pts(pts)}" fill="none" stroke="{colour}" '
                    f'stroke-width="2"/>')
        body += [f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2.5" fill="{colour}"><title>'
                 f'{escape(f"{name}: {xv:g}, {10 ** yv if log_y else yv:.4g}")}</title></circle>'
                 for (x, y), xv, yv in zip(pts, s[0], [v for v in s[1] if math.isfinite(v)])]
        ly = top + 14 + 16 * k
        body.append(f'<line x1="{width - right + 8}" y1="{ly - 4}" x2="{width - right + 24}" y2="{ly - 4}" '
                    f'stroke="{colour}" stroke-width="2"/><text x="{width - right + 28}" y="{ly}">'
                    f'{escape(_short(name, 20))}</text>')
    body += _guides(sx, sy, hlines, vlines, top, height - bottom, left, width - right)
    return _svg(width, height, body, f"{ylabel} against {xlabel}")


def _pts(points) -> str:
    return " ".join(f"{x:.1f},{y:.1f}" for x, y in points)


def _guides(sx, sy, hlines, vlines, top, bottom, left, right) -> list[str]:
    out = []
    for name, v in (hlines or {}).items():
        y = sy(v)
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}" stroke="#555" '
                   f'stroke-dasharray="4 3"/><text x="{right - 4}" y="{y - 4:.1f}" text-anchor="end">'
                   f'{escape(name)}</text>')
    for name, v in (vlines or {}).items():
        x = sx(v)
        out.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{bottom}" stroke="#555" '
                   f'stroke-dasharray="4 3"/><text x="{x + 4:.1f}" y="{top + 12}">{escape(name)}</text>')
    return out


def scatter_chart(xs, ys, labels: list[str], *, xlabel: str, ylabel: str, connect: bool = False,
                  width: int = 640, height: int = 300) -> str:
    """Labelled points (e.g. ranking quality τ against anchor rank — the inverted U)."""
    left, right, top, bottom = 60, 20, 10, 45
    sx = _Scale(*_padded(xs), left, width - right)
    sy = _Scale(*_padded(ys), height - bottom, top)
    body = _x_axis(sx, height - bottom, top, xlabel) + _y_axis(sy, left, width - right, ylabel)
    pts = [(sx(x), sy(y)) for x, y in zip(xs, ys)]
    if connect:
        body.append(f'<polyline points="{_pts(sorted(pts))}" fill="none" stroke="#999"/>')
    for (x, y), name, xv, yv in zip(pts, labels, xs, ys):
        body.append(f'<circle class="point" cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{PALETTE[0]}"><title>'
                    f'{escape(f"{name}: {xv:g}, {yv:.4g}")}</title></circle>')
    return _svg(width, height, body, f"{ylabel} against {xlabel}")
