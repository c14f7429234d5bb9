"""The labelling page keeps working whatever the labels and whatever a browser or script sends: real HTTP on
127.0.0.1, a real SQLite store. Agreement that is not defined yet (every shared item has the same label) is JSON
null, never NaN and never a 500; a hostile body is a 400 with a message; the store holds exactly the labels the page
confirmed (property tests over random sequences of labels and undos from 2–4 labellers)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judgewise.commands.labels import label_task
from judgewise.errors import ConfigError
from judgewise.store.labels import current_labels
from judgewise.store.opening import open_store, open_store_readonly

from tests.support.bad_inputs.cases_labelling import HOSTILE_BODIES, HOSTILE_NAMES, VALUE_ONLY
from tests.support.labelling import make_label_inputs, page_token, request, serving

NAMES = ["ann", "<i>bob</i>", "Zoë Ünal", "d a n", "=HYPERLINK(\"http://x\")"]


def _strict(text: str):
    """JSON as a browser's ``JSON.parse`` reads it: NaN or Infinity is an error, not a number."""
    def refuse(constant):
        raise AssertionError(f"{constant} in a JSON answer: {text[:300]}")
    return json.loads(text, parse_constant=refuse)


def _task(folder: Path, n_items: int = 4, *, pointwise: bool = False):
    """A labelling task of ``n_items`` pairwise items (or pointwise ones, one response each, scale 1-5)."""
    scores, responses, items = make_label_inputs(folder, n_items=n_items)
    if pointwise:
        responses = folder / "one-response.jsonl"
        responses.write_text("".join(json.dumps({"prompt_id": f"item-{k:02d}", "model": "m", "text": f"answer {k}",
                                                 "instruction": f"grade {k}"}) + "\n" for k in range(n_items)))
    return label_task(scores, str(folder / "labels.sqlite"), target="judge-x", items=items, responses=responses)


def _state(url: str, labeller: str) -> dict:
    status, text = request(url, "GET", f"/state?labeller={quote(labeller)}")
    assert status == 200, text
    return _strict(text)


def _label(url: str, token: str, labeller: str, item: str, key) -> tuple[int, dict]:
    status, text = request(url, "POST", "/label", {"labeller": labeller, "item": item, "value": key},
                           {"X-Judgewise-Token": token})
    return status, _strict(text)


@pytest.mark.parametrize("n_labellers", [2, 3])
def test_labellers_agreeing_on_every_shared_item_keep_the_page_working(tmp_path, n_labellers):
    task = _task(tmp_path, n_items=6)
    names = NAMES[:n_labellers]
    with serving(task) as (url, _):
        token = page_token(url)
        for item in task.items[:5]:
            for name in names:  # everyone presses the key of "the same response is better": one category
                shown = task.shown_order(name, item)
                status, answer = _label(url, token, name, item.item_id, 1 if shown == "AB" else 2)
                assert status == 200, answer
                if name != names[0]:  # an item now has two labels, all the same: κ (or α) not defined yet
                    assert answer["summary"]["agreement"]["value"] is None
            for name in names:
                assert _state(url, name)["summary"]["agreement"]["value"] is None
        last = task.items[5]  # one disagreement: the statistic is defined from then on
        for k, name in enumerate(names):
            status, answer = _label(url, token, name, last.item_id, 3 if k == 0 else 1)
            assert status == 200, answer
        value = _state(url, names[0])["summary"]["agreement"]["value"]
    assert isinstance(value, float) and -1 <= value <= 1


@pytest.mark.parametrize("width", [float("inf"), float("nan"), 0.0, -1.0])
def test_a_stop_width_that_is_no_positive_finite_number_is_refused(tmp_path, width):
    scores, responses, items = make_label_inputs(tmp_path)
    with pytest.raises(ConfigError, match="stop_width"):
        label_task(scores, str(tmp_path / "l.sqlite"), target="judge-x", items=items, responses=responses,
                   stop_width=width)


@pytest.mark.parametrize("case", HOSTILE_BODIES)
def test_a_hostile_body_is_a_400_with_a_message_and_stores_nothing(tmp_path, case):
    task = _task(tmp_path)
    body = HOSTILE_BODIES[case]
    assert len(body) <= 64 * 1024  # under the body cap: the parser, not the cap, meets it
    with serving(task) as (url, _):
        token = page_token(url)
        for path in ("/label",) if case in VALUE_ONLY else ("/label", "/undo"):
            status, text = request(url, "POST", path, body, {"X-Judgewise-Token": token})
            assert status == 400, text
            assert _strict(text)["error"]
        assert _state(url, "ann")["summary"]["labels"] == 0
    if Path(task.store).exists():
        with open_store_readonly(task.store) as store:
            assert store.labels().empty


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_a_hostile_labeller_name_is_a_400_on_every_route(tmp_path, name):
    task = _task(tmp_path)
    with serving(task) as (url, _):
        token = page_token(url)
        status, answer = _label(url, token, name, "item-00", 1)
        assert status == 400 and "labeller" in answer["error"]
        query = quote(name.encode("utf-8", "surrogatepass"))
        status, text = request(url, "GET", f"/state?labeller={query}")
        assert status in (200, 400) and _strict(text)  # a query is decoded with replacement characters


JSON_TEXT = st.text(st.characters(exclude_categories=()), max_size=8)  # surrogates and controls included
JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | JSON_TEXT,
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(JSON_TEXT, inner, max_size=3),
                           max_leaves=6)


def test_any_json_a_script_sends_is_answered_2xx_or_4xx_and_only_a_200_stores(tmp_path):
    task = _task(tmp_path)
    open_store(task.store).close()  # as ``judgewise label`` does before serving
    with serving(task) as (url, _):
        token = page_token(url)

        @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
        @given(labeller=st.sampled_from(NAMES) | JSON_VALUES, item=st.sampled_from(["item-00", "item-01"])
               | JSON_VALUES, value=st.sampled_from([1, 2, 3]) | JSON_VALUES, path=st.sampled_from(["/label",
                                                                                                     "/undo"]))
        def check(labeller, item, value, path):
            before = _rows(task)
            body = json.dumps({"labeller": labeller, "item": item, "value": value}).encode()
            status, text = request(url, "POST", path, body, {"X-Judgewise-Token": token})
            assert status in (200, 400), text
            _strict(text)
            assert _rows(task) == before + (status == 200)

        check()


def _rows(task) -> int:
    with open_store_readonly(task.store) as store:
        return len(store.labels())


ACTION = st.tuples(st.integers(0, 3), st.integers(0, 3), st.sampled_from(["label"] * 4 + ["undo"]),
                   st.sampled_from([1, 1, 2, 3, 3, 0, 4, "1"]))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n_labellers=st.integers(2, 4), hostile=st.sampled_from([None, *HOSTILE_NAMES]),
       actions=st.lists(ACTION, min_size=1, max_size=30), pointwise=st.booleans())
@pytest.mark.slow
def test_random_labels_from_two_to_four_labellers_keep_the_page_and_the_store_right(n_labellers, hostile, actions,
                                                                                      pointwise):
    keys = (1, 2, 3, 4, 5) if pointwise else (1, 2, 3)  # on the scale: what the page stores
    with tempfile.TemporaryDirectory() as folder:
        task = _task(Path(folder), pointwise=pointwise)
        names = NAMES[:n_labellers] + ([hostile] if hostile is not None else [])
        confirmed: dict[tuple[str, str], int] = {}  # (labeller, item) -> key pressed, as the page confirmed
        with serving(task) as (url, _):
            token = page_token(url)
            for who, at, op, key in actions:
                name, item = names[who % len(names)], task.items[at]
                body = {"labeller": name, "item": item.item_id, **({"value": key} if op == "label" else {})}
                status, text = request(url, "POST", f"/{op}", body, {"X-Judgewise-Token": token})
                ok = name != hostile and (op == "undo" or key in keys)
                assert status == (200 if ok else 400), text
                if ok and op == "label":
                    confirmed[(name, item.item_id)] = key
                elif ok:
                    confirmed.pop((name, item.item_id), None)
                _check_summary(_strict(text).get("summary"), confirmed, task)
            for name in NAMES[:n_labellers]:
                state = _state(url, name)
                assert {(name, i["id"]): i["key"] for i in state["items"] if i["key"] is not None} == {
                    k: v for k, v in confirmed.items() if k[0] == name}
                _check_summary(state["summary"], confirmed, task)
        stored = {}
        if Path(task.store).exists():
            with open_store_readonly(task.store) as store:
                labels = current_labels(store.labels())
            stored = {(r.labeller, r.item_id): r.value for r in labels.itertuples()}
        assert stored == {(name, i): task.a_view_value(task.item(i), task.shown_order(name, task.item(i)), key)
                          for (name, i), key in confirmed.items()}


def _check_summary(summary: dict | None, confirmed: dict, task) -> None:
    """The agreement the page shows: none until an item has two labels; a finite number in [-1, 1] once the
    labels on shared items differ; null (not yet defined) while they are all the same."""
    if summary is None:  # a refused write answers an error, not a summary
        return
    values: dict[str, list[float]] = {}
    for (name, i), key in confirmed.items():
        values.setdefault(i, []).append(task.a_view_value(task.item(i), task.shown_order(name, task.item(i)), key))
    shared = {i: v for i, v in values.items() if len(v) >= 2}
    agreement = summary["agreement"]
    if not shared:
        assert agreement is None
        return
    assert agreement["n_items"] == len(shared)
    if len({v for vs in shared.values() for v in vs}) == 1:
        assert agreement["value"] is None
    else:
        assert -1 - 1e-9 <= agreement["value"] <= 1 + 1e-9


def test_four_labellers_writing_at_once_are_all_kept(tmp_path):
    """The server answers each request in its own thread: four labellers pressing keys at the same moment (every
    label the same, agreement not defined) each get their 200 and every label is in the store."""
    from concurrent.futures import ThreadPoolExecutor

    task = _task(tmp_path, n_items=6)
    names = NAMES[:4]
    with serving(task) as (url, _):
        token = page_token(url)

        def label_all(name: str) -> list[int]:
            return [_label(url, token, name, item.item_id, 1 if task.shown_order(name, item) == "AB" else 2)[0]
                    for item in task.items]

        with ThreadPoolExecutor(max_workers=4) as pool:
            statuses = [s for got in pool.map(label_all, names) for s in got]
        assert statuses == [200] * 24
        assert _state(url, names[0])["summary"]["agreement"]["value"] is None
    with open_store_readonly(task.store) as store:
        labels = current_labels(store.labels())
    assert len(labels) == 24 and set(labels["value"]) == {1.0}


@pytest.mark.parametrize("ends", ["stalls", "closes its side"])
def test_a_body_shorter_than_its_content_length_is_a_400_not_a_held_thread(tmp_path, monkeypatch, ends):
    """A script that sends fewer bytes than it announced, then waits (or closes its side), gets its 400 once the
    server's read timeout passes (1 s here, 30 s served): no thread waits forever for the rest."""
    import socket

    monkeypatch.setattr("judgewise.report.explorer._QuietHandler.timeout", 1.0)
    task = _task(tmp_path)
    with serving(task) as (url, _):
        token = page_token(url)
        host = url.removeprefix("http://")
        name, port = host.rsplit(":", 1)
        with socket.create_connection((name, int(port)), timeout=20) as sock:
            sock.sendall(f"POST /label HTTP/1.1\r\nHost: {host}\r\nOrigin: {url}\r\nX-Judgewise-Token: {token}\r\n"
                         f"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n".encode() + b'{"labeller"')
            if ends == "closes its side":
                sock.shutdown(socket.SHUT_WR)
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
        assert answer.startswith(b"HTTP/1.0 400"), answer[:200]
        said = b"did not arrive" if ends == "stalls" else b"ended after 11 of the 100 bytes"
        assert said in answer, answer[-300:]
        assert _state(url, "ann")["summary"]["labels"] == 0
