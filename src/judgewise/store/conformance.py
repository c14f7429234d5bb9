"""Each store as its Protocol: mypy (``make test``) checks these assignments; a store that stops satisfying one fails.

Not used at run time (tests/store/test_store_protocol.py checks the same on real stores); the store modules do not import it,
so the Protocols stay free of the classes that satisfy them.
"""

from __future__ import annotations

from judgewise.store.generations import GenerationStore
from judgewise.store.judgments import JudgmentStore
from judgewise.store.postgres import PgJudgmentStore
from judgewise.store.protocol import BatchLedger, HumanLabelStore, JudgmentStoreLike, ResultStore, SharedQueue


def as_protocols(sqlite: JudgmentStore, pg: PgJudgmentStore,
                 answers: GenerationStore) -> tuple[list[JudgmentStoreLike], list[ResultStore], SharedQueue]:
    """The three stores typed as the Protocols they satisfy: the judgment stores, every store the engine runs on,
    the store with a shared queue."""
    judgments: list[JudgmentStoreLike] = [sqlite, pg]
    engine: list[ResultStore] = [sqlite, pg, answers]
    queue: SharedQueue = pg
    labels: list[HumanLabelStore] = [sqlite, pg]
    ledgers: list[BatchLedger] = [sqlite, pg, answers]
    assert labels and ledgers
    return judgments, engine, queue
