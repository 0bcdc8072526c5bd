// The side panel's views: the top table, callers/callees trees, the diff
// table and the problems list, each drawn from one answer as given.

import { el, num, pct, signed, where, duration } from "./format.js";

const MAX_ROWS = 2000; // rows drawn at once; the rest are counted, not drawn

// Up/Down move between a table's rows, Enter or Space picks one.
function keyRows(table, pick) {
  table.addEventListener("keydown", (e) => {
    const row = e.target.closest("tr[tabindex]");
    if (!row) return;
    let next = null;
    if (e.key === "ArrowDown") next = row.nextElementSibling;
    else if (e.key === "ArrowUp") next = row.previousElementSibling;
    else if (e.key === "Home") next = row.parentElement.firstElementChild;
    else if (e.key === "End") next = row.parentElement.lastElementChild;
    else if (e.key === "Enter" || e.key === " ") {
      pick(row);
      e.preventDefault();
      return;
    } else return;
    if (next) next.focus();
    e.preventDefault();
  });
}

function headerLine(j, capName) {
  const parts = [`${capName}: ${num(j.total)} ${j.unit} selected of ${num(j.capture_total)}`];
  parts.push(`by ${j.by}, ${j.look} look, ${j.source}`);
  return el("div", { class: "view-head" }, parts.join(" · "));
}

export function topTable(j, { capName, match, selected, sort, onPick, onSort }) {
  const box = el("div", { class: "view", dataset: { view: "top" } });
  box.append(headerLine(j, capName));
  const th = (label, key) =>
    el("th", { class: key ? `num sortable${sort === key ? " sorted" : ""}` : "num",
      title: key ? `order by ${key} (the server sorts)` : null,
      onclick: key ? () => onSort(key) : null }, label);
  const table = el("table", { class: "rows", id: "top-table" },
    el("thead", {}, el("tr", {}, el("th", {}, "function"), el("th", {}, "module"),
      th("self", "self"), th("self %"), th("total", "total"), th("total %"))));
  const body = el("tbody");
  const rows = j.functions || [];
  for (const f of rows.slice(0, MAX_ROWS)) {
    const tr = el("tr", {
      tabindex: "0", title: where(f),
      class: [match && match(f.name) ? "match" : "", selected === f.name ? "selected" : ""].join(" ").trim() || null,
      dataset: { name: f.name },
    },
    el("td", { class: "name" }, f.name), el("td", { class: "module" }, f.module || ""),
    el("td", { class: "num" }, num(f.self)), el("td", { class: "num" }, pct(f.self_percent)),
    el("td", { class: "num" }, num(f.total)), el("td", { class: "num" }, pct(f.total_percent)));
    tr.addEventListener("click", () => onPick(f.name));
    body.append(tr);
  }
  table.append(body);
  keyRows(table, (tr) => onPick(tr.dataset.name));
  box.append(table);
  if (rows.length > MAX_ROWS) box.append(el("p", { class: "note" }, `${rows.length - MAX_ROWS} more rows not drawn: filter to see them`));
  if (!rows.length) box.append(el("p", { class: "note" }, "no function in the selection"));
  return box;
}

// A callers or callees tree: nested, children drawn when opened.
export function treeView(j, { capName, match, onPick }) {
  const box = el("div", { class: "view", dataset: { view: j.view } });
  box.append(headerLine(j, capName));
  box.append(el("div", { class: "view-head" },
    j.view === "callers" ? `who called ${j.root.name}, from it outwards` : `what ${j.root.name} called, from it inwards`));
  const node = (n, depth, open) => {
    const label = el("span", { class: `tnode${match && match(n.name) ? " match" : ""}`, dataset: { name: n.name } },
      el("span", { class: "name" }, n.name), " ",
      el("span", { class: "counts" }, `total ${num(n.total)} · self ${num(n.self)}`),
      n.module ? el("span", { class: "module" }, ` ${n.module}`) : null);
    label.addEventListener("click", (e) => {
      if (e.detail === 2) onPick(n.name);
    });
    label.title = `${where(n)}\ndouble-click: ${j.view} of ${n.name}`;
    const kids = n.children || [];
    if (!kids.length) return el("div", { class: "leaf" }, label);
    const d = el("details", { open: open || null }, el("summary", {}, label));
    let filled = false;
    const fill = () => {
      if (filled) return;
      filled = true;
      // open the chain while a node has one child, and the first levels
      for (const k of kids) d.append(node(k, depth + 1, depth < 2 || kids.length === 1));
    };
    if (open) fill();
    d.addEventListener("toggle", () => d.open && fill());
    return d;
  };
  const tree = el("div", { class: "tree", id: `${j.view}-tree` }, node(j.root, 0, true));
  box.append(tree);
  return box;
}

export function diffTable(j, { match, onPick }) {
  const box = el("div", { class: "view", dataset: { view: "diff" } });
  box.append(el("div", { class: "view-head" },
    `A ${j.a.file}: ${num(j.a.total)} · B ${j.b.file}: ${num(j.b.total)} · ${j.unit}, by ${j.by}, ${j.look} look, ordered by change of ${j.sort}`));
  box.append(el("div", { class: "view-head legend" },
    el("span", { class: "swatch up" }), " grew from A to B ", el("span", { class: "swatch down" }), " shrank (points: change of share)"));
  const rows = j.functions || [];
  let max = 0;
  for (const f of rows) max = Math.max(max, Math.abs(f.change_points));
  const table = el("table", { class: "rows", id: "diff-table" },
    el("thead", {}, el("tr", {}, el("th", {}, "function"), el("th", {}, "status"),
      el("th", { class: "num" }, "A self"), el("th", { class: "num" }, "A total"),
      el("th", { class: "num" }, "B self"), el("th", { class: "num" }, "B total"),
      el("th", { class: "num" }, "delta"), el("th", { class: "num" }, "points"), el("th", {}, ""))));
  const body = el("tbody");
  for (const f of rows.slice(0, MAX_ROWS)) {
    const w = max ? Math.round((Math.abs(f.change_points) / max) * 60) : 0;
    const tr = el("tr", { tabindex: "0", title: where(f), class: match && match(f.name) ? "match" : null, dataset: { name: f.name } },
      el("td", { class: "name" }, f.name), el("td", {}, f.status),
      el("td", { class: "num" }, num(f.a_self)), el("td", { class: "num" }, num(f.a_total)),
      el("td", { class: "num" }, num(f.b_self)), el("td", { class: "num" }, num(f.b_total)),
      el("td", { class: "num" }, signed(f.delta)), el("td", { class: "num" }, signed(f.change_points)),
      el("td", {}, el("span", { class: `bar ${f.change_points > 0 ? "up" : "down"}`, style: `width:${w}px` })));
    tr.addEventListener("click", () => onPick(f.name));
    body.append(tr);
  }
  table.append(body);
  keyRows(table, (tr) => onPick(tr.dataset.name));
  box.append(table);
  if (!rows.length) box.append(el("p", { class: "note" }, "no change in the selection"));
  return box;
}

export function problemsView(p, s) {
  const box = el("div", { class: "view", dataset: { view: "problems" } });
  const list = el("ul", { class: "problems", id: "problems-list" });
  const item = (text, cls) => list.append(el("li", { class: cls || null }, text));
  if (s.incomplete) item("the recording is incomplete: it ended before the program did", "warn");
  if (s.lost && (s.lost.kernel || s.lost.collector))
    item(`records lost: ${num(s.lost.kernel)} by the kernel, ${num(s.lost.collector)} by the collector`, "warn");
  if (s.throttled) item(`sampling throttled by the kernel ${num(s.throttled)} times`, "warn");
  for (const e of s.stack_ends || [])
    item(`stacks ending ${e.reason}: ${num(e.samples)} samples (${pct(e.percent)})`, e.reason === "outermost" ? null : "warn");
  if (p.unsymbolized) item(`samples with an unsymbolized frame: ${num(p.unsymbolized)} (${pct(p.unsymbolized_percent)})`, "warn");
  for (const m of p.modules || []) {
    const li = el("li", { class: "warn" },
      `${m.path || "(no module)"}: ${m.status}${m.reason ? ` (${m.reason})` : ""}, ${num(m.samples)} samples`);
    const addrs = m.addresses || [];
    if (addrs.length) {
      const ul = el("ul");
      for (const a of addrs.slice(0, 50))
        ul.append(el("li", {}, `${a.address}: ${a.reason}, ${num(a.samples)} samples`));
      if (addrs.length > 50) ul.append(el("li", {}, `${addrs.length - 50} more addresses`));
      li.append(ul);
    }
    list.append(li);
  }
  if (p.off_cpu && p.off_cpu.incomplete) item(`off-CPU intervals with an end missing: ${JSON.stringify(p.off_cpu.incomplete)}`, "warn");
  for (const r of p.recording || [])
    item(`${r.stage} ${r.code} ×${num(r.count)}: ${r.detail}${r.meaning ? ` (${r.meaning})` : ""}`, "warn");
  if (!list.children.length) item("no problems: every stack ended at its outermost frame and every frame has a name");
  box.append(el("div", { class: "view-head" },
    `${s.command || "(no command)"} · ${num(s.samples)} samples · ${s.duration_ns !== null ? duration(s.duration_ns) : "-"}`));
  box.append(list);
  return box;
}
