"""A panel of judges as the command line names and shows it: ``--panel a,b,c`` parsed, the panel flags checked,
and the lines that say what a panel's verdicts rest on (light: no numpy, so the CLI may import it at start-up).

``rank``, ``diagnose`` and ``report`` take the same flags: their options dataclasses declare the fields ``panel,
panel_rule, panel_split, panel_reference`` with :func:`panel_option` (default, flag and help declared once, here),
beside ``judge`` (and ``pool_judges``); the panel itself is derived by
:func:`judgewise.analysis.panel.panel_of_options`.
"""

from __future__ import annotations

from dataclasses import dataclass

from judgewise.errors import ConfigError
from judgewise.flags import option

PANEL_FLAGS = {
    "panel": (None, "--panel", "A panel of judges of the input (comma-separated, e.g. gpt-4,claude,llama) whose "
              "derived verdicts are used: one per comparison from the members' verdicts; members' agreement "
              "(Fleiss' kappa) and comparisons not every member judged are reported."),
    "panel_rule": ("majority", "--panel-rule", "majority (of labels) | mean (of outcomes, soft preferences "
                   "included) | weighted (a vote weighted by each member's agreement with --panel-reference)."),
    "panel_split": ("tie", "--panel-split", "A split vote (no single most common label): tie | drop."),
    "panel_reference": (None, "--panel-reference", "--panel-rule weighted: the judge of the input (e.g. human "
                        "labels) each member's reliability is measured against."),
}
"""Each panel field of a command's options: its default, flag and help."""


def panel_option(name: str):
    """The dataclass field of the panel option ``name`` (a key of :data:`PANEL_FLAGS`), as
    :func:`judgewise.flags.option` declares it: ``panel: str | None = panel_option("panel")``."""
    default, flag, help_text = PANEL_FLAGS[name]
    return option(default, flag, help=help_text)


@dataclass(frozen=True)
class PanelFlags:
    """The panel fields alone, for a command whose other settings are its own parameters (``serve``: the
    explorer's panel, as ``report --panel``)."""

    panel: str | None = panel_option("panel")
    panel_rule: str = panel_option("panel_rule")
    panel_split: str = panel_option("panel_split")
    panel_reference: str | None = panel_option("panel_reference")


def panel_members(text: str) -> list[str]:
    """The members ``--panel a,b,c`` names, in order (blank names dropped)."""
    return [m.strip() for m in str(text).split(",") if m.strip()]


def check_panel_options(options) -> None:
    """Raise :class:`ConfigError` for panel flags that contradict each other or the judge flags (``options``: any
    command's options with the panel fields: ``RankOptions``, ``DiagnoseOptions``, ``ReportOptions``)."""
    if options.judge is not None or getattr(options, "pool_judges", False):
        raise ConfigError("--panel uses the verdicts its members make together; it excludes --judge and "
                          "--pool-judges")
    if (options.panel_rule == "weighted") != (options.panel_reference is not None):
        raise ConfigError("--panel-rule weighted weighs each member by its agreement with --panel-reference JUDGE "
                          "(e.g. the human labels in the same input); give both or neither")


def panel_lines(panel: dict) -> list[str]:
    """What a panel's verdicts rest on (``Panel.as_dict()``): members and rule, comparisons judged by every member
    or by some only, split votes, the members' agreement (Fleiss' κ), weights and each member's cost."""
    rule = {"majority": "majority of labels", "mean": "mean outcome", "weighted": "weighted vote"}[panel["rule"]]
    members = ", ".join(f"{m} ({panel['member_rows'][m]:,} verdicts)" for m in panel["members"])
    lines = [f"panel ({rule}) of {len(panel['members'])} judges: {members}; {panel['n_comparisons']:,} comparisons, "
             f"{panel['n_complete']:,} judged by every member"]
    if panel["n_incomplete"]:
        missing = ", ".join(f"{m} {n:,}" for m, n in panel["missing_by_member"].items() if n)
        lines.append(f"  {panel['n_incomplete']:,} judged by some members only, decided by those (not judged by: "
                     f"{missing})")
    if panel["rule"] != "mean" and panel["n_split"]:
        fate = "ties" if panel["split"] == "tie" else "left out (--panel-split drop)"
        lines.append(f"  {panel['n_split']:,} split votes (no single most common label): {fate}")
    kappa = "—" if panel["kappa"] is None else f"{panel['kappa']:.3f}"
    lines.append(f"  members' agreement: Fleiss' κ {kappa} over the {panel['n_complete']:,} comparisons every "
                 "member judged")
    if panel.get("weights"):
        accuracy = panel.get("accuracy") or {}
        lines.append(f"  weights (log-odds of agreement with {panel.get('reference')}): " + ", ".join(
            f"{m} {w:.2f} ({accuracy.get(m, float('nan')):.1%})" for m, w in panel["weights"].items()))
    if panel.get("member_cost"):
        lines.append("  cost per member: " + ", ".join(f"{m} ${c:,.4f}" for m, c in panel["member_cost"].items()))
    return lines
