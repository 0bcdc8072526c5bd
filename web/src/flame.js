// The flame graph (root at the bottom) or icicle (root at the top) of a
// call tree as /api/view/tree gives it, drawn on a canvas by hand. The
// tree is laid out, never re-counted: a node's width is its total as
// given, its children placed side by side from its left edge in the
// order given (by total, widest first).

const ROW = 18;
const MIN_WIDTH = 0.5; // px: narrower nodes (and their subtrees) are not drawn

function hash(s) {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}

// Warm colours, one hue band per module, varied by name: a stable picture.
export function warm(node) {
  const m = hash(node.module || "");
  const n = hash(node.name || "");
  const kernel = (node.module || "").startsWith("[kernel");
  const hue = kernel ? 190 + (m % 30) : 8 + (m % 42);
  return `hsl(${hue} ${kernel ? 45 : 78}% ${58 + (n % 16)}%)`;
}

// Flatten the nested tree given into arrays, iteratively (deep trees).
function flatten(root) {
  const nodes = [];
  const stack = [{ j: root, parent: -1, depth: 0, start: 0 }];
  while (stack.length) {
    const { j, parent, depth, start } = stack.pop();
    const idx = nodes.length;
    nodes.push({
      name: j.name, module: j.module || "", file: j.file || "", line: j.line || 0,
      self: j.self, total: j.total, depth, parent, start, children: [],
    });
    if (parent >= 0) nodes[parent].children.push(idx);
    const kids = j.children || [];
    let at = start;
    const placed = kids.map((k) => {
      const s = at;
      at += k.total;
      return { j: k, parent: idx, depth: depth + 1, start: s };
    });
    for (let i = placed.length - 1; i >= 0; i--) stack.push(placed[i]);
  }
  // children were pushed in the order popped, which is the order given
  return nodes;
}

export class Flame {
  constructor(canvas, box, handlers) {
    this.canvas = canvas;
    this.box = box;
    this.h = handlers;
    this.nodes = [];
    this.rows = [];
    this.opts = { inverted: false, zoom: [], color: warm, match: null, selected: "" };
    this.hover = -1;
    canvas.addEventListener("mousemove", (e) => this.onMove(e));
    canvas.addEventListener("mouseleave", () => { this.hover = -1; this.h.hover(null, null); });
    canvas.addEventListener("click", (e) => {
      const i = this.hit(e);
      if (i >= 0) this.h.click(this.nodes[i], this.pathOf(i));
    });
    canvas.addEventListener("dblclick", (e) => {
      const i = this.hit(e);
      if (i >= 0) this.h.zoom(this.nodes[i], this.pathOf(i));
    });
    new ResizeObserver(() => this.draw()).observe(box);
  }

  setTree(rootJson) {
    this.nodes = rootJson ? flatten(rootJson) : [];
  }

  set(opts) {
    Object.assign(this.opts, opts);
  }

  // Names from the root's child down to node i.
  pathOf(i) {
    const p = [];
    for (let n = i; n > 0; n = this.nodes[n].parent) p.push(this.nodes[n].name);
    return p.reverse();
  }

  // The node the zoom path names, following the first child of each name; 0 when none.
  zoomNode() {
    let at = 0;
    for (const name of this.opts.zoom) {
      const next = (this.nodes[at] ? this.nodes[at].children : []).find((c) => this.nodes[c].name === name);
      if (next === undefined) return at;
      at = next;
    }
    return at;
  }

  layout(width) {
    const out = [];
    if (!this.nodes.length) return { out, depth: 0 };
    const z = this.zoomNode();
    const zn = this.nodes[z];
    const scale = zn.total > 0 ? width / zn.total : 0;
    // the zoomed node's ancestors: full width
    for (let a = this.nodes[z].parent; a >= 0; a = this.nodes[a].parent) out.push({ i: a, x: 0, w: width });
    let depth = zn.depth;
    const stack = [z];
    while (stack.length) {
      const i = stack.pop();
      const n = this.nodes[i];
      const w = n.total * scale;
      if (w < MIN_WIDTH) continue;
      out.push({ i, x: (n.start - zn.start) * scale, w });
      if (n.depth > depth) depth = n.depth;
      for (const c of n.children) stack.push(c);
    }
    return { out, depth };
  }

  draw() {
    const width = Math.max(200, this.box.clientWidth);
    const { out, depth } = this.layout(width);
    const height = Math.max(ROW * 3, (depth + 1) * ROW);
    const dpr = window.devicePixelRatio || 1;
    const c = this.canvas;
    c.style.width = `${width}px`;
    c.style.height = `${height}px`;
    c.width = Math.round(width * dpr);
    c.height = Math.round(height * dpr);
    const ctx = c.getContext("2d");
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, width, height);
    ctx.font = "12px system-ui, sans-serif";
    ctx.textBaseline = "middle";
    const charW = ctx.measureText("abcdefghijklmnopqrstuvwxyz").width / 26;
    const { match, selected, inverted } = this.opts;
    this.rows = [];
    this.drawn = [];
    for (const r of out) {
      const n = this.nodes[r.i];
      const y = inverted ? n.depth * ROW : (depth - n.depth) * ROW;
      const hit = match ? match(n.name) : true;
      ctx.fillStyle = n.depth === 0 ? "hsl(220 10% 82%)" : hit ? this.opts.color(n) : "hsl(0 0% 88%)";
      if (match && hit && n.depth > 0) ctx.fillStyle = "hsl(300 75% 62%)";
      ctx.fillRect(r.x, y, Math.max(r.w - 1, 0.5), ROW - 1);
      if (selected && n.name === selected) {
        ctx.strokeStyle = "#111";
        ctx.lineWidth = 2;
        ctx.strokeRect(r.x + 1, y + 1, Math.max(r.w - 3, 0.5), ROW - 3);
      }
      if (r.w > 24) {
        const label = n.depth === 0 ? `all (${n.total})` : n.name;
        const max = Math.floor((r.w - 6) / charW);
        const text = label.length > max ? `${label.slice(0, Math.max(max - 1, 1))}…` : label;
        ctx.fillStyle = "#111";
        ctx.fillText(text, r.x + 3, y + ROW / 2);
      }
      (this.rows[n.depth] ||= []).push(r);
      this.drawn.push({ ...r, y });
    }
    for (const row of this.rows) if (row) row.sort((a, b) => a.x - b.x);
    this.depth = depth;
  }

  hit(e) {
    const rect = this.canvas.getBoundingClientRect();
    const x = e.clientX - rect.left;
    const y = e.clientY - rect.top;
    const row = Math.floor(y / ROW);
    const d = this.opts.inverted ? row : this.depth - row;
    const list = this.rows[d];
    if (!list) return -1;
    for (const r of list) if (x >= r.x && x < r.x + r.w) return r.i;
    return -1;
  }

  onMove(e) {
    const i = this.hit(e);
    if (i === this.hover) return;
    this.hover = i;
    this.h.hover(i >= 0 ? this.nodes[i] : null, e);
  }

  // What is drawn, for tests and tools: each node with its box in CSS pixels.
  drawnNodes() {
    return (this.drawn || []).map((r) => {
      const n = this.nodes[r.i];
      return {
        name: n.name, module: n.module, file: n.file, line: n.line, self: n.self, total: n.total,
        depth: n.depth, path: this.pathOf(r.i), x: r.x, y: r.y, width: r.w, height: ROW,
      };
    });
  }
}
