// The view state: everything the page shows is a function of it, and it
// lives in the URL's hash (a deep link restores the view). Filters become
// the query parameters of web/API.md, named as ms-analyze's options.

const DEFAULTS = {
  c: "0",          // capture id
  b: "",           // capture to diff with ("" none)
  by: "function",
  look: "mixed",
  unit: "samples",
  tid: "",         // "12,13"
  module: "",
  focus: "",
  ignore: "",
  time: "",        // "Ans..Bns" (ms-analyze --time)
  hide: "",        // hide-below percent for the trees
  sort: "self",
  fn: "",          // the selected function (callers, callees)
  mode: "flame",   // flame | icicle
  tab: "top",
  q: "",           // search
  zoom: "",        // the zoomed node's path from the root, names joined by "\n"
};

export function defaults() {
  return { ...DEFAULTS };
}

export function fromHash(hash) {
  const s = defaults();
  const p = new URLSearchParams(hash.replace(/^#/, ""));
  for (const k of Object.keys(DEFAULTS)) if (p.has(k)) s[k] = p.get(k);
  return s;
}

export function toHash(s) {
  const p = new URLSearchParams();
  for (const k of Object.keys(DEFAULTS)) if (s[k] !== DEFAULTS[k]) p.set(k, s[k]);
  const t = p.toString();
  return t ? `#${t}` : "";
}

// The filters and counting choices every view takes, as API parameters.
// Values equal to ms-analyze's defaults are left out: the same answer.
export function filterParams(s, { time = true } = {}) {
  const p = [];
  if (s.by !== "function") p.push(["by", s.by]);
  if (s.look !== "mixed") p.push(["look", s.look]);
  if (s.unit !== "samples") p.push(["unit", s.unit]);
  if (s.tid) p.push(["tid", s.tid]);
  if (s.module) p.push(["module", s.module]);
  if (s.focus) p.push(["focus", s.focus]);
  if (s.ignore) p.push(["ignore", s.ignore]);
  if (time && s.time) p.push(["time", s.time]);
  return p;
}

export function url(path, params) {
  const q = new URLSearchParams(params).toString();
  return q ? `${path}?${q}` : path;
}

export function zoomPath(s) {
  return s.zoom ? s.zoom.split("\n") : [];
}

// "Ans..Bns" as numbers (either side may be absent), or null.
export function parseNsRange(t) {
  const m = /^(?:(\d+)ns)?\.\.(?:(\d+)ns)?$/.exec(t || "");
  if (!m || (m[1] === undefined && m[2] === undefined)) return null;
  return { a: m[1] === undefined ? null : Number(m[1]), b: m[2] === undefined ? null : Number(m[2]) };
}
