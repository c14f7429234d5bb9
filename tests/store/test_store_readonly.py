"""Reading a store never writes beside it; planning a run (dry run) creates no store file."""

from __future__ import annotations

from judgewise.store.judgments import GameRecord, JudgmentStore


def _store(path):
    with JudgmentStore(path) as store:
        for i, (a, b, o) in enumerate([("x", "y", 1.0), ("y", "z", 0.0), ("x", "z", 0.5), ("x", "y", 0.0)]):
            store.record(GameRecord(key=f"k{i}", prompt_id=f"p{i}", model_a=a, model_b=b, first=a, swapped=False,
                                    judge="j", template=None, judge_identity="{}", status="ok", outcome=o,
                                    error=None, n_calls=1))
    return path


def test_reading_a_closed_store_leaves_no_wal_or_shm_files(tmp_path):
    from judgewise.report.inputs import load_run

    path = _store(tmp_path / "s.sqlite")
    before = sorted(p.name for p in tmp_path.iterdir())
    with JudgmentStore.open_readonly(path) as store:
        assert len(store.frame()) == 4 and store.meta()["schema_version"]
    run = load_run(path)
    assert len(run.judgments) == 4 and run.store_summary["Games"] == 4
    assert sorted(p.name for p in tmp_path.iterdir()) == before == ["s.sqlite"]


def test_a_store_being_written_is_read_through_its_wal(tmp_path):
    path = _store(tmp_path / "s.sqlite")
    with JudgmentStore(path) as writer:
        writer.record(GameRecord(key="k9", prompt_id="p9", model_a="x", model_b="y", first="x", swapped=False,
                                 judge="j", template=None, judge_identity="{}", status="ok", outcome=1.0, error=None,
                                 n_calls=1))
        with JudgmentStore.open_readonly(path) as reader:
            assert len(reader.frame()) == 5


def test_planning_reads_an_existing_store_and_creates_none(tmp_path):
    with JudgmentStore.open_for_planning(tmp_path / "new" / "s.sqlite") as store:
        assert store.statuses(["k0"]) == {}
    assert list(tmp_path.iterdir()) == []
    path = _store(tmp_path / "s.sqlite")
    with JudgmentStore.open_for_planning(path) as store:
        assert store.statuses(["k0", "nope"]) == {"k0": "ok"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.sqlite"]
