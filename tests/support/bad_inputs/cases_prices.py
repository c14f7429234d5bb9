"""Bad prices and plan counts (issue 32, part 5): price tables read without the run config's guards (aliases,
size, repeated models), prices too large to be true, a generate config's ``prices.file`` found in the working
folder instead of the config's, and ``plan`` token counts beyond any context window or sizes past any float."""

from __future__ import annotations

from pathlib import Path

from tests.support.bad_inputs.cases_others import LAUGHS, judge
from tests.support.bad_inputs.inputs import Case, write

PRICES = "prices (judges/prices.py, judges/config_schema.py)"
#: a judge config whose model is priced by the table ``p.yaml`` beside it (the judge never runs: --dry-run)
PRICED = """responses: r.jsonl
judge: {backend: openai, model: m, base_url: "http://127.0.0.1:9/v1", prices: {file: p.yaml}}
design: all_pairs
store: ROOT/s.sqlite
"""
TABLE = "as_of: 2026-01-31\nmodels:\n"


def priced(name: str, table: str | bytes, names: tuple[str, ...]) -> Case:
    return judge(name, PRICED, files={"p.yaml": table}, names=("p.yaml", *names), owner=PRICES)


def _huge_table(root: Path) -> list:
    """A 300 MB price table (sparse: no disk used); the run config beside it names it."""
    with (root / "p.yaml").open("wb") as fh:
        fh.truncate(300 * 1024 * 1024)
    return judge("", PRICED).build(root)


def _generate_prices_beside_the_config(root: Path) -> list:
    """A generate config in cfg/ names ``prices.file: p.yaml``; only the working folder has a p.yaml (the config's
    folder does not): the table is looked for beside the config, not where the command runs."""
    write(root, "p.yaml", TABLE + "  m: {input_per_mtok: 1.0, output_per_mtok: 1.0}\n")
    write(root, "cfg/q.jsonl", '{"question_id": 1, "turns": ["Hello?"]}\n')
    config = write(root, "cfg/gen.yaml", "prompts: q.jsonl\nstore: s.sqlite\nmodels:\n  - name: m\n    model: m\n"
                   "    base_url: http://127.0.0.1:9/v1\n    prices: {file: p.yaml}\n")
    return ["generate", "--config", config, "--dry-run"]


def plan_option(flag: str, value: str) -> Case:
    """``plan`` with one option whose plan would need more prompts than a float holds."""
    return Case(f"plan_{flag[2:]}_{value}_past_any_float", lambda root: ["plan", "--models", "8", flag, value],
                (flag,), PRICES)


PRICE_CASES = [
    priced("prices_file_billion_laughs", "as_of: 2026-01-31\n" + LAUGHS + "models: {m: {input_per_mtok: 1}}\n",
           ("aliases",)),
    Case("prices_file_300_mb", _huge_table, ("p.yaml", "1,000,000 bytes"), PRICES),
    priced("prices_file_model_named_twice", TABLE + "  m: {input_per_mtok: 1.0}\n  m: {input_per_mtok: 9.0}\n",
           ("line 4", "'m'")),
    priced("prices_file_rate_1e308", TABLE + "  m: {input_per_mtok: 1.0e+308}\n", ("models.m.input_per_mtok",)),
    priced("prices_file_rate_inf", TABLE + "  m: {input_per_mtok: 1.0, output_per_mtok: .inf}\n",
           ("models.m.output_per_mtok",)),
    priced("prices_file_alias_of_two_models",
           TABLE + "  m: {input_per_mtok: 1.0, aliases: [x]}\n  n: {input_per_mtok: 2.0, aliases: [x]}\n",
           ("models.n.aliases", "'x'")),
    priced("prices_file_alias_is_a_model", TABLE + "  m: {input_per_mtok: 1.0, aliases: [n]}\n"
           "  n: {input_per_mtok: 2.0}\n", ("models.m.aliases", "'n'")),
    priced("prices_file_unknown_field", "currency: EUR\n" + TABLE + "  m: {input_per_mtok: 1}\n", ("currency",)),
    judge("prices_inline_rate_1e308", PRICED.replace("{file: p.yaml}", "{input_per_mtok: 1.0e+308}"),
          names=("run.yaml", "judge.prices.input_per_mtok"), owner=PRICES),
    judge("prices_none_known_under_a_cost_cap", PRICED.replace(", prices: {file: p.yaml}", "")
          + "budget: {max_cost: 5.0}\n", names=("run.yaml", "budget.max_cost", "no price known for m"), owner=PRICES),
    Case("generate_prices_file_not_beside_the_config", _generate_prices_beside_the_config,
         (str(Path("cfg") / "p.yaml"), "no such file"), PRICES),
    Case("plan_tokens_in_beyond_any_context", lambda root: ["plan", "--models", "5", "--tokens-in", "1000000001"],
         ("--tokens-in",), PRICES),
    Case("plan_tokens_out_beyond_any_context", lambda root: ["plan", "--models", "5", "--tokens-in", "100",
                                                             "--tokens-out", str(10**12)], ("--tokens-out",), PRICES),
    *[plan_option(flag, value) for flag, value in (("--effect", "1e-200"), ("--informativeness", "1e-320"),
                                                   ("--alpha", "1e-300"), ("--power", "1"))],
    Case("plan_shared_tokens_negative", lambda root: ["plan", "--models", "5", "--tokens-in", "100",
                                                      "--shared-tokens", "-5"], ("--shared-tokens",), PRICES),
]
