"""Identities and keys of games: canonical JSON, the judge's labels, each game's store key, and the games planned
from comparisons (one or both answer orders) in the order a prompt cache rewards."""

from __future__ import annotations

import hashlib
import json
from typing import Iterable

from judgewise.errors import ConfigError
from judgewise.judges.base import Comparison, Game

ORDERS = ("both", "one")

_CANONICAL = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


def canonical_json(obj) -> str:
    """Stable JSON text (sorted keys) used for hashing and the stored judge identity (one encoder made once: a
    game key is planned for every game of a run)."""
    return _CANONICAL.encode(obj)


def judge_name(identity: dict) -> str:
    """The short judge label of the judgments table: ``identity["name"]`` or model|template."""
    if identity.get("name"):
        return str(identity["name"])
    backend = identity.get("backend")
    model = identity.get("model") or (backend.get("model") if isinstance(backend, dict) else None)
    parts = [str(p) for p in (model, template_name(identity)) if p]
    if parts:
        return "|".join(parts)
    kind = identity.get("kind") or identity.get("backend") or "judge"
    return f"{kind}-{hashlib.sha256(canonical_json(identity).encode()).hexdigest()[:8]}"


def template_name(identity: dict) -> str | None:
    """``name@version`` of the identity's template (LLMJudge: ``template`` + ``template_version``)."""
    t = identity.get("template")
    if isinstance(t, dict):
        t, version = t.get("name"), t.get("version")
    else:
        version = identity.get("template_version")
    if t is None:
        return None
    return f"{t}@{version}" if version is not None else str(t)


def game_key(identity: dict, game: Game, judge=None, identity_json: str | None = None) -> str:
    """Content hash of (judge identity with its parameters and template, prompt, both responses, order), and of
    the parameters the judge reads for this game only (``judge.game_parameters(game)`` when it has them: the
    simulated judge's true ratings of the two models, too many to be in its identity): sha256 of the canonical JSON
    of ``{"judge": identity, "prompt_id", "prompt", "reference", "model_a", "model_b", "response_a", "response_b",
    "swapped"[, "turns"][, "parameters"]}``. ``identity_json``: the identity's :func:`canonical_json` when the caller
    has it (planning a run encodes it once: :func:`keyed_games`)."""
    head = canonical_json(identity) if identity_json is None else identity_json
    parameters = judge.game_parameters(game) if hasattr(judge, "game_parameters") else None
    return _key_of(head, _comparison_json(game.comparison, parameters), game)


def keyed_games(identity: dict, games: Iterable[Game], judge=None) -> dict[str, Game]:
    """Store key (:func:`game_key`) → game, each game once (a repeated one collapses into the first): the
    identity encoded once, and each comparison's part of the key once for both its orders."""
    head, per_game = canonical_json(identity), hasattr(judge, "game_parameters")
    bodies: dict[Comparison, str] = {}
    out: dict[str, Game] = {}
    for g in games:
        c = g.comparison
        if per_game:
            body = _comparison_json(c, judge.game_parameters(g))
        elif (body := bodies.get(c)) is None:
            body = bodies[c] = _comparison_json(c, None)
        out.setdefault(_key_of(head, body, g), g)
    return out


def _comparison_json(c: Comparison, parameters) -> str:
    """The canonical JSON of a game's key payload but its order and turns ("swapped" and "turns" sort after
    every other key), without the closing brace."""
    payload = {"prompt_id": c.prompt_id, "prompt": c.prompt, "reference": c.reference,
               "model_a": c.model_a, "model_b": c.model_b, "response_a": c.response_a, "response_b": c.response_b}
    if parameters is not None:
        payload["parameters"] = parameters
    return canonical_json(payload)[:-1]


def _key_of(head: str, body: str, game: Game) -> str:
    """sha256 of the key payload's canonical JSON, its identity (``head``, which sorts first as "judge") and its
    order and turns (which sort last) put around ``body``."""
    tail = ',"swapped":true' if game.swapped else ',"swapped":false'
    if game.comparison.turns:  # a multi-turn conversation (single-turn keys are as they always were)
        tail += ',"turns":' + canonical_json([list(t) for t in game.comparison.turns])
    return hashlib.sha256(f'{{"judge":{head},{body[1:]}{tail}}}'.encode("utf-8")).hexdigest()


def _coin(seed: int, c: Comparison) -> bool:
    digest = hashlib.sha256(canonical_json([seed, c.prompt_id, c.model_a, c.model_b]).encode()).digest()
    return bool(digest[0] & 1)


def plan_games(comparisons: Iterable[Comparison], *, orders: str = "both", seed: int = 0) -> list[Game]:
    """Both orders per comparison, or one order chosen by a seeded coin per (prompt, pair); in the order the judge
    API's prompt cache rewards (:func:`cache_order`)."""
    if orders not in ORDERS:
        raise ConfigError(f'orders: expected one of {list(ORDERS)}, found "{orders}"')
    games = []
    for c in comparisons:
        if orders == "both":
            games += [Game(c, swapped=False), Game(c, swapped=True)]
        else:
            games.append(Game(c, swapped=_coin(seed, c)))
    return cache_order(games)


def cache_order(games: list[Game]) -> list[Game]:
    """``games`` grouped for a prompt cache (OpenAI's caches a prompt's prefix, 1,024 tokens or more, for a few
    minutes): a prompt's games together, and among them those showing the same answer first back to back, so that
    they share the prefix system prompt → instruction → first answer (the templates put the shared parts first).
    Stable: prompts, and first answers within a prompt, keep the order of their first game."""
    prompts: dict[str, int] = {}
    firsts: dict[tuple[str, str], int] = {}

    def place(g: Game) -> tuple[int, int]:
        prompt = g.comparison.prompt_id
        return prompts.setdefault(prompt, len(prompts)), firsts.setdefault((prompt, g.first_model), len(firsts))
    return sorted(games, key=place)

