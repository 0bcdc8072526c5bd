// The page of microscope serve (web/API.md). Every view is an answer of
// the server to a typed query built from the view state (state.js); the
// page lays out and draws what it is given and never counts samples.
// The state lives in the URL's hash: a link restores the view.

import { getJson } from "./api.js";
import { Flame, warm } from "./flame.js";
import { el, keyOf, matcher, num, pct, signed, where } from "./format.js";
import { defaults, filterParams, fromHash, parseNsRange, toHash, url, zoomPath } from "./state.js";
import { diffTable, problemsView, topTable, treeView } from "./tables.js";
import { Timeline } from "./timeline.js";

const $ = (id) => document.getElementById(id);

let state = fromHash(location.hash);
let captures = [];
const perCapture = new Map(); // id -> {summary, threads}: answers that no filter changes
const memo = new Map(); // resource -> {url, data | error}
let inflight = 0;
let generation = 0;
let controller = null;
let rendered = -1;
const data = {};

const flame = new Flame($("flame"), $("flame-scroll"), {
  hover: (n, e) => showTip(n, e),
  click: (n) => setState({ fn: n.depth === 0 ? "" : n.name, tab: ["callers", "callees"].includes(state.tab) ? state.tab : "callers" }, true),
  zoom: (n, path) => setState({ zoom: n.depth === 0 ? "" : path.join("\n") }, true),
});
const timeline = new Timeline($("timeline"), $("timeline-scroll"), {
  select: (r) => setState({ time: r ? `${r.a}ns..${r.b}ns` : "" }, true),
  toggleThread: (tid, add) => {
    const now = state.tid ? state.tid.split(",") : [];
    const t = String(tid);
    let next;
    if (now.includes(t)) next = now.filter((x) => x !== t);
    else next = add ? [...now, t] : [t];
    setState({ tid: next.join(",") }, true);
  },
});

function setState(patch, push = false) {
  state = { ...state, ...patch };
  const h = toHash(state);
  const target = `${location.pathname}${location.search}${h}`;
  if (push) history.pushState(null, "", target);
  else history.replaceState(null, "", target);
  sync();
  refresh();
}

window.addEventListener("hashchange", () => {
  state = fromHash(location.hash);
  sync();
  refresh();
});
window.addEventListener("popstate", () => {
  state = fromHash(location.hash);
  sync();
  refresh();
});

function capName(id) {
  const c = captures.find((x) => String(x.id) === String(id));
  return c ? c.name : `capture ${id}`;
}

// Controls show the state.
function sync() {
  $("capture").value = state.c;
  $("against").value = state.b;
  for (const k of ["by", "look", "module", "focus", "ignore", "time", "search", "hide"]) {
    const v = k === "search" ? state.q : state[k];
    if (document.activeElement !== $(k)) $(k).value = v;
  }
  const pc = perCapture.get(state.c);
  fillUnits(pc && pc.summary);
  if ($("unit").value !== state.unit) $("unit").value = state.unit;
  fillThreads(pc && pc.threads);
  for (const r of document.querySelectorAll("input[name=mode]")) r.checked = r.value === state.mode;
  for (const b of document.querySelectorAll("#tabs button")) b.setAttribute("aria-selected", String(b.dataset.tab === state.tab));
  $("unzoom").disabled = !state.zoom;
}

function fillUnits(summary) {
  const cap = captures.find((x) => String(x.id) === state.c);
  const units = ["samples"];
  if (summary && summary.cpu_time_ns !== null && summary.cpu_time_ns !== undefined) units.push("cpu-time");
  if (cap && cap.has_off_cpu) units.push("off-cpu");
  if (cap && cap.has_snapshots) units.push("snapshots");
  if (!units.includes(state.unit)) units.push(state.unit); // a link may ask; the server answers
  const sel = $("unit");
  const want = units.join(",");
  if (sel.dataset.units !== want) {
    sel.replaceChildren(...units.map((u) => el("option", { value: u }, u)));
    sel.dataset.units = want;
  }
  $("look-field").hidden = !(cap && cap.has_python) && state.look === "mixed";
}

function fillThreads(threads) {
  const sel = $("thread");
  const opts = [el("option", { value: "" }, "all threads")];
  for (const t of (threads && threads.threads) || [])
    opts.push(el("option", { value: String(t.tid) }, `${t.name} (${t.tid}) ${num(t.total)}`));
  if (state.tid && !opts.some((o) => o.value === state.tid)) opts.push(el("option", { value: state.tid }, `threads ${state.tid}`));
  const key = opts.map((o) => o.value + o.textContent).join("|");
  if (sel.dataset.key !== key) {
    sel.replaceChildren(...opts);
    sel.dataset.key = key;
  }
  sel.value = state.tid;
}

// One answer per resource, fetched again only when its URL changes.
function load(name, path, signal) {
  const m = memo.get(name);
  if (m && m.url === path) return Promise.resolve(m);
  inflight++;
  return getJson(path, signal)
    .then((d) => ({ url: path, data: d }), (e) => {
      if (e.name === "AbortError") throw e;
      return { url: path, error: e.message };
    })
    .then((r) => {
      memo.set(name, r);
      return r;
    })
    .finally(() => inflight--);
}

async function captureFacts(id, signal) {
  if (perCapture.has(id)) return perCapture.get(id);
  const [summary, threads] = await Promise.all([
    getJson(url("/api/summary", [["capture", id]]), signal),
    getJson(url("/api/view/threads", [["capture", id]]), signal),
  ]);
  const facts = { summary, threads };
  perCapture.set(id, facts);
  return facts;
}

function resources() {
  const s = state;
  const f = filterParams(s);
  const r = {};
  const flameCap = s.b !== "" ? s.b : s.c;
  const hide = s.hide && Number(s.hide) > 0 ? [["hide-below", s.hide]] : [];
  r.tree = url("/api/view/tree", [["capture", flameCap], ...f, ...hide]);
  r.top = url("/api/view/top", [["capture", s.c], ...f, ...(s.sort !== "self" ? [["sort", s.sort]] : [])]);
  r.timeline = url("/api/view/timeline", [["capture", s.c], ...filterParams(s, { time: false }), ["buckets", String(timeline.bucketsFor())]]);
  if (s.fn && (s.tab === "callers" || s.tab === "callees"))
    r[s.tab] = url(`/api/view/${s.tab}`, [["capture", s.c], ...f, ["function", s.fn], ...hide]);
  if (s.b !== "") r.diff = url("/api/diff", [["a", s.c], ["b", s.b], ...f, ...(s.sort !== "self" ? [["sort", s.sort]] : [])]);
  if (s.tab === "problems") r.problems = url("/api/view/problems", [["capture", s.c]]);
  return r;
}

async function refresh() {
  const gen = ++generation;
  if (controller) controller.abort();
  controller = new AbortController();
  const signal = controller.signal;
  document.body.dataset.busy = "1";
  const errors = [];
  try {
    await captureFacts(state.c, signal).catch((e) => {
      if (e.name === "AbortError") throw e;
      errors.push(e.message);
    });
    sync();
    const res = resources();
    const names = Object.keys(res);
    const got = await Promise.all(names.map((n) => load(n, res[n], signal)));
    if (gen !== generation) return;
    for (const k of Object.keys(data)) delete data[k];
    names.forEach((n, i) => {
      if (got[i].error) errors.push(got[i].error);
      else data[n] = got[i].data;
    });
    render(errors);
    rendered = gen;
    document.body.dataset.busy = "";
    document.body.dataset.generation = String(gen);
  } catch (e) {
    if (e.name !== "AbortError") {
      showError([e.message]);
      rendered = gen;
      document.body.dataset.busy = "";
    }
  }
}

function showError(errors) {
  const box = $("error");
  const uniq = [...new Set(errors)];
  box.hidden = !uniq.length;
  box.textContent = uniq.join("\n");
}

function render(errors) {
  showError(errors);
  renderSummary();
  renderTimeline();
  renderFlame();
  renderPanel();
}

function renderSummary() {
  const pc = perCapture.get(state.c);
  const s = pc && pc.summary;
  const box = $("summary");
  if (!s) {
    box.replaceChildren();
    return;
  }
  const bits = [
    el("b", {}, capName(state.c)), ` ${s.command || ""} · ${num(s.samples)} samples · ${(s.threads || []).length} thread(s)`,
  ];
  if (data.top) bits.push(` · selected ${num(data.top.total)} ${data.top.unit} of ${num(data.top.capture_total)}`);
  if (state.time) bits.push(` · time ${state.time}`);
  const warn = [];
  if (s.incomplete) warn.push("incomplete recording");
  if (s.lost && (s.lost.kernel || s.lost.collector)) warn.push("records lost");
  if (s.unsymbolized && s.unsymbolized.samples) warn.push(`unsymbolized ${pct(s.unsymbolized.percent)}`);
  const broken = (s.stack_ends || []).filter((e) => e.reason !== "outermost");
  if (broken.length) warn.push(`stacks cut short: ${broken.map((e) => `${e.reason} ${pct(e.percent)}`).join(", ")}`);
  if ((s.problems || []).length) warn.push(`${s.problems.length} recording problem(s)`);
  if (warn.length) bits.push(" · ", el("a", { href: "#", class: "warn", onclick: (e) => { e.preventDefault(); setState({ tab: "problems" }, true); } }, warn.join("; ")));
  box.replaceChildren(...bits);
}

function renderTimeline() {
  const t = data.timeline;
  timeline.set(t || null, parseNsRange(state.time), state.tid ? state.tid.split(",") : []);
  timeline.draw();
  $("timeline-info").textContent = t ? `${t.lanes.length} lane(s), ${num(t.bucket_ns)} ns per bucket` : "";
}

function diffColour(index) {
  let max = 0;
  for (const v of index.values()) max = Math.max(max, Math.abs(v.change_points));
  return (n) => {
    const d = index.get(keyOf(n));
    if (!d || !max) return "hsl(0 0% 80%)";
    const f = Math.min(1, Math.abs(d.change_points) / max);
    return d.change_points > 0 ? `hsl(0 80% ${92 - 40 * f}%)` : `hsl(215 80% ${92 - 40 * f}%)`;
  };
}

function renderFlame() {
  const tree = data.tree;
  flame.setTree(tree ? tree.root : null);
  let colour = warm;
  let title = `flame graph of ${capName(state.c)}`;
  if (state.b !== "" && data.diff) {
    const idx = new Map(data.diff.functions.map((f) => [keyOf(f), f]));
    colour = diffColour(idx);
    title = `flame graph of B ${capName(state.b)}, coloured by the change from A ${capName(state.c)}: red grew, blue shrank`;
  }
  $("flame-title").textContent = title;
  flame.set({ inverted: state.mode === "icicle", zoom: zoomPath(state), color: colour, match: matcher(state.q), selected: state.fn });
  flame.draw();
  const box = $("flame-detail");
  if (state.fn) detail(box, { name: state.fn }, true);
  else {
    box.textContent = "click a frame: its callers and callees; double-click: zoom into it";
    delete box.dataset.name;
  }
  if (state.q) {
    const hits = flame.drawnNodes().filter((n) => n.depth > 0 && matcher(state.q)(n.name)).length;
    box.append(el("span", { class: "search-count" }, ` · search '${state.q}': ${hits} frame(s) drawn match`));
  }
}

// A function's numbers as the top (or the diff) answer gives them.
function rowOf(name, node) {
  const list = state.b !== "" && data.diff ? data.diff.functions : data.top ? data.top.functions : [];
  if (node && node.module !== undefined) {
    const k = keyOf(node);
    const exact = list.find((f) => keyOf(f) === k);
    if (exact) return exact;
  }
  return list.find((f) => f.name === name);
}

function detail(box, node, pinned) {
  const f = rowOf(node.name, node);
  box.replaceChildren();
  box.dataset.name = node.name;
  const parts = [el("b", { class: "name" }, node.name)];
  if (node.total !== undefined) {
    const root = data.tree ? data.tree.root.total : null;
    parts.push(` · this frame: total ${num(node.total)} of ${num(root)}, self ${num(node.self)}`);
  }
  if (f && f.total_percent !== undefined) {
    box.dataset.totalPercent = String(f.total_percent);
    box.dataset.selfPercent = String(f.self_percent);
    parts.push(" · function: total ", el("span", { class: "total-percent" }, pct(f.total_percent)),
      `, self ${pct(f.self_percent)} (${num(f.total)} and ${num(f.self)} ${data.top.unit})`);
  } else if (f && f.change_points !== undefined) {
    parts.push(` · A total ${num(f.a_total)}, B total ${num(f.b_total)}, ${signed(f.change_points)} points (${f.status})`);
  }
  const w = where(f || node);
  if (w) parts.push(el("span", { class: "where" }, ` · ${w}`));
  if (pinned) parts.push(" ", el("button", { onclick: () => setState({ fn: "" }, true), title: "clear the selection (Esc)" }, "×"));
  box.append(...parts);
}

let tipNode = null;
function showTip(n, e) {
  const tip = $("tip");
  tipNode = n;
  if (!n) {
    tip.hidden = true;
    return;
  }
  detail(tip, n, false);
  tip.hidden = false;
  const x = Math.min(e.clientX + 14, window.innerWidth - tip.offsetWidth - 8);
  tip.style.left = `${Math.max(4, x)}px`;
  tip.style.top = `${e.clientY + 16}px`;
}
$("flame").addEventListener("mousemove", (e) => {
  if (!tipNode) return;
  const tip = $("tip");
  tip.style.left = `${Math.max(4, Math.min(e.clientX + 14, window.innerWidth - tip.offsetWidth - 8))}px`;
  tip.style.top = `${e.clientY + 16}px`;
});

function renderPanel() {
  const panel = $("panel");
  const match = matcher(state.q);
  const pick = (name) => setState({ fn: name, tab: ["callers", "callees"].includes(state.tab) ? state.tab : "callers" }, true);
  const name = capName(state.c);
  let view;
  switch (state.tab) {
  case "callers":
  case "callees":
    if (!state.fn) view = el("p", { class: "note" }, `click a function in the flame graph or the top table to see its ${state.tab}`);
    else if (data[state.tab]) view = treeView(data[state.tab], { capName: name, match, onPick: pick });
    else view = el("p", { class: "note" }, `no ${state.tab} of ${state.fn}: see the message above`);
    break;
  case "diff":
    if (state.b === "") view = el("p", { class: "note" }, captures.length > 1 ? "choose a capture in 'diff with' to compare with this one" : "start microscope serve with two captures to compare them");
    else if (data.diff) view = diffTable(data.diff, { match, onPick: pick });
    else view = el("p", { class: "note" }, "no diff: see the message above");
    break;
  case "problems": {
    const pc = perCapture.get(state.c);
    view = data.problems && pc ? problemsView(data.problems, pc.summary) : el("p", { class: "note" }, "no problems list: see the message above");
    break;
  }
  default:
    view = data.top ? topTable(data.top, { capName: name, match, selected: state.fn, sort: state.sort, onPick: pick, onSort: (k) => setState({ sort: k }, true) })
      : el("p", { class: "note" }, "no top table: see the message above");
  }
  const had = panel.contains(document.activeElement) && document.activeElement.dataset.name;
  panel.replaceChildren(view);
  if (had) {
    const again = [...panel.querySelectorAll("tr[tabindex]")].find((r) => r.dataset.name === had);
    if (again) again.focus();
  }
}

// Controls change the state.
function wire() {
  $("capture").addEventListener("change", (e) => setState({ c: e.target.value, b: state.b === e.target.value ? "" : state.b, tid: "", zoom: "", fn: "" }, true));
  $("against").addEventListener("change", (e) => setState({ b: e.target.value, tab: e.target.value !== "" ? "diff" : state.tab === "diff" ? "top" : state.tab }, true));
  for (const k of ["by", "look", "unit"]) $(k).addEventListener("change", (e) => setState({ [k]: e.target.value, zoom: "" }, true));
  $("thread").addEventListener("change", (e) => setState({ tid: e.target.value }, true));
  for (const k of ["module", "focus", "ignore", "time", "hide"]) {
    const apply = (e) => {
      if (e.target.value !== state[k]) setState({ [k]: e.target.value.trim() }, true);
    };
    $(k).addEventListener("change", apply);
    $(k).addEventListener("keydown", (e) => e.key === "Enter" && apply(e));
  }
  $("search").addEventListener("input", (e) => {
    state = { ...state, q: e.target.value };
    history.replaceState(null, "", `${location.pathname}${location.search}${toHash(state)}`);
    renderFlame();
    renderPanel();
  });
  for (const r of document.querySelectorAll("input[name=mode]")) r.addEventListener("change", (e) => setState({ mode: e.target.value }, true));
  for (const b of document.querySelectorAll("#tabs button")) b.addEventListener("click", () => setState({ tab: b.dataset.tab }, true));
  $("unzoom").addEventListener("click", () => setState({ zoom: "" }, true));
  $("reset").addEventListener("click", () => setState({ ...defaults(), c: state.c }, true));
  document.addEventListener("keydown", (e) => {
    const inField = e.target.matches("input, select, textarea");
    if (e.key === "/" && !inField) {
      $("search").focus();
      $("search").select();
      e.preventDefault();
    } else if (e.key === "Escape") {
      if (inField) {
        if (e.target.id === "search") $("search").value = "";
        e.target.blur();
        if (e.target.id === "search") setState({ q: "" });
        return;
      }
      // the selection first (zoom, function, search), then the time range
      if (state.zoom || state.fn || state.q) setState({ zoom: "", fn: "", q: "" }, true);
      else if (state.time) setState({ time: "" }, true);
    }
  });
  let resize = null;
  window.addEventListener("resize", () => {
    clearTimeout(resize);
    resize = setTimeout(refresh, 150); // the timeline's buckets follow the width
  });
}

async function start() {
  wire();
  try {
    const j = await getJson("/api/captures");
    captures = j.captures;
  } catch (e) {
    showError([e.message]);
    return;
  }
  $("capture").replaceChildren(...captures.map((c) => el("option", { value: String(c.id) }, `${c.name} (${c.samples})`)));
  $("against").replaceChildren(el("option", { value: "" }, "none"),
    ...captures.map((c) => el("option", { value: String(c.id) }, c.name)));
  $("against").disabled = captures.length < 2;
  sync();
  await refresh();
}

// For tests and tools: the state and what is drawn.
window.microscope = {
  state: () => ({ ...state }),
  idle: () => inflight === 0 && rendered === generation && document.body.dataset.busy === "",
  flame: () => flame.drawnNodes(),
  timeline: () => ({ labelWidth: timeline.labelW, plotWidth: timeline.plotW, start: data.timeline && data.timeline.start, end: data.timeline && data.timeline.end }),
};

start();
