// Numbers are shown as the JSON gives them: counts and percentages are
// never recomputed or rounded again here.

export function num(n) {
  return n === null || n === undefined ? "-" : String(n);
}

export function pct(p) {
  return p === null || p === undefined ? "-" : `${p}%`;
}

// A signed change as given ("+1.54", "-0.7").
export function signed(n) {
  return n > 0 ? `+${n}` : String(n);
}

// A length of time for an axis or a label (not a measured number).
export function duration(ns) {
  if (ns >= 60e9) return `${(ns / 60e9).toFixed(2)} min`;
  if (ns >= 1e9) return `${(ns / 1e9).toFixed(3)} s`;
  if (ns >= 1e6) return `${(ns / 1e6).toFixed(3)} ms`;
  if (ns >= 1e3) return `${(ns / 1e3).toFixed(3)} us`;
  return `${ns} ns`;
}

export function where(f) {
  if (!f) return "";
  const parts = [];
  if (f.module) parts.push(f.module);
  if (f.file) parts.push(f.line ? `${f.file}:${f.line}` : f.file);
  return parts.join("  ");
}

// The identity of a key across views: its name, module, file and line.
export function keyOf(f) {
  return `${f.name}\u0000${f.module || ""}\u0000${f.file || ""}\u0000${f.line || 0}`;
}

// A search: a regex when it compiles, else the plain text; case-insensitive.
export function matcher(q) {
  if (!q) return null;
  try {
    const re = new RegExp(q, "i");
    return (s) => re.test(s);
  } catch {
    const low = q.toLowerCase();
    return (s) => s.toLowerCase().includes(low);
  }
}

export function el(tag, attrs = {}, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(e.dataset, v);
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const kid of kids) if (kid !== null && kid !== undefined) e.append(kid);
  return e;
}
