// judgewise label: keyboard-first labelling. Every text is set with textContent (shown as text, never markup).
(function () {
  "use strict";
  const token = document.querySelector("meta[name=judgewise-token]").content;
  const $ = (id) => document.getElementById(id);
  let state = null, at = 0, busy = false;

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function status(text, isError) { $("status").textContent = text; $("status").className = isError ? "error" : ""; }
  function fmt(x) { return x === null || x === undefined ? "–" : Number(x).toFixed(3); }

  function showSummary(s) {
    let text = `${s.labelled} of ${s.items} items labelled · ${s.metric}(judge, human) = ${fmt(s.reliability)}`;
    if (s.interval) text += ` [${fmt(s.interval[0])}, ${fmt(s.interval[1])}]`;
    const a = s.agreement;  // null: no item has two labels yet; a.value null: not yet defined (no disagreement)
    if (a) text += ` · ${a.statistic} between ${a.labellers} labellers = ` + (a.value === null ?
      "not yet defined (every shared item has the same label)" : fmt(a.value)) + ` on ${a.n_items} items`;
    $("summary").textContent = text;
    if (s.enough) status(`the interval is at most ${s.stop_width} wide: enough labels for this estimate`, false);
  }

  function render() {
    const items = state.items, item = items[at];
    const done = items.filter((i) => i.key !== null).length;
    $("progress").textContent = `item ${at + 1} / ${items.length} · ${done} labelled by ${state.labeller}`;
    $("progress").dataset.done = String(done);
    $("item-id").textContent = item.id;
    $("instruction").textContent = item.instruction;
    const box = $("responses");
    box.replaceChildren();
    box.dataset.item = item.id;
    box.dataset.shown = item.shown;
    item.responses.forEach((text, k) => {
      const card = el("div", "card");
      card.dataset.slot = String(k + 1);
      const title = item.pairwise ? `Response ${k + 1}` : "Response";
      card.append(el("h3", "", title), el("pre", "", text));
      if (item.pairwise && item.key === k + 1) card.classList.add("chosen");
      box.append(card);
    });
    const [low, high] = state.scale;
    const keys = $("keys");
    keys.replaceChildren();
    const parts = item.pairwise ? [["1", "response 1 better"], ["2", "response 2 better"], ["3", "tie"]]
      : [[`${low}…${high}`, "score"]];
    parts.concat([["←/→", "move"], ["u", "undo"]]).forEach(([k, what]) => {
      keys.append(el("kbd", "", k), document.createTextNode(` ${what}   `));
    });
    if (item.key !== null) keys.append(el("span", "done", `labelled: ${item.key}`));
    if (done === items.length) status("every item is labelled: thank you", false);
  }

  async function call(path, body) {
    const res = await fetch(path, { method: "POST", headers: { "Content-Type": "application/json",
      "X-Judgewise-Token": token }, body: JSON.stringify(body), credentials: "same-origin" });
    const data = await res.json().catch(() => ({ error: `HTTP ${res.status}` }));
    if (!res.ok) throw new Error(data.error || `HTTP ${res.status}`);
    return data;
  }

  async function answer(key) {
    const item = state.items[at];
    busy = true;
    try {
      const data = await call("/label", { labeller: state.labeller, item: item.id, value: key });
      item.key = key;  // kept in the store: only now the next item shows
      const next = data.next ? state.items.findIndex((i) => i.id === data.next)  // --order informative
        : state.items.findIndex((i, k) => k > at && i.key === null);
      at = next >= 0 ? next : Math.min(at + 1, state.items.length - 1);
      status(`saved ${item.id}`, false);
      render();
      showSummary(data.summary);
    } catch (e) { status(`not saved: ${e.message}`, true); } finally { busy = false; }
  }

  async function undo() {
    let k = state.items[at].key !== null ? at : at - 1;
    if (k < 0 || state.items[k].key === null) { status("nothing to undo here", true); return; }
    busy = true;
    try {
      const data = await call("/undo", { labeller: state.labeller, item: state.items[k].id });
      state.items[k].key = null; at = k; showSummary(data.summary); status("label withdrawn", false); render();
    } catch (e) { status(`not undone: ${e.message}`, true); } finally { busy = false; }
  }

  document.addEventListener("keydown", (ev) => {
    if (!state || busy || ev.target.tagName === "INPUT" || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const item = state.items[at];
    if (ev.key === "ArrowRight") { at = Math.min(at + 1, state.items.length - 1); render(); return; }
    if (ev.key === "ArrowLeft") { at = Math.max(at - 1, 0); render(); return; }
    if (ev.key === "u" || ev.key === "Backspace") { ev.preventDefault(); undo(); return; }
    if (!/^[0-9]$/.test(ev.key)) return;
    let key = Number(ev.key);
    const [low, high] = state.scale;
    if (!item.pairwise && key === 0 && high === 10) key = 10;
    const ok = item.pairwise ? key >= 1 && key <= 3 : key >= low && key <= high;
    if (ok) answer(key); else status(`${ev.key} is not on the scale`, true);
  });

  async function start(name) {
    let res, data;
    try {
      res = await fetch(`/state?labeller=${encodeURIComponent(name)}`, { credentials: "same-origin" });
      data = await res.json().catch(() => ({ error: `HTTP ${res.status}` }));
    } catch (e) { status(`cannot load the labels of this name: ${e.message}`, true); return; }
    if (!res.ok) { status(data.error || `HTTP ${res.status}`, true); return; }
    state = data;
    try { localStorage.setItem("judgewise-labeller", name); } catch (e) { /* private mode */ }
    const first = state.next ? state.items.findIndex((i) => i.id === state.next)  // --order informative
      : state.items.findIndex((i) => i.key === null);  // resume where this labeller stopped
    at = first >= 0 ? first : 0;
    $("main").hidden = false;
    showSummary(state.summary);
    render();
    document.activeElement.blur();
  }

  $("who").addEventListener("submit", (ev) => { ev.preventDefault(); start($("name").value.trim()); });
  try { $("name").value = localStorage.getItem("judgewise-labeller") || ""; } catch (e) { /* private mode */ }
  document.documentElement.dataset.labelReady = "1";
})();
