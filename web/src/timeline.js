// Timeline lanes as /api/view/timeline gives them: one row per thread,
// one cell per bucket, its shade the bucket's weight against the busiest
// bucket drawn. A drag selects a time range, reported in nanoseconds from
// the recording's start (ms-analyze --time); a click on a lane's name
// toggles that thread in the thread filter.

import { duration, num } from "./format.js";

const LANE = 16;
const AXIS = 18;

export class Timeline {
  constructor(canvas, box, handlers) {
    this.canvas = canvas;
    this.box = box;
    this.h = handlers;
    this.data = null;
    this.range = null; // {a, b} in ns, either may be null
    this.tids = new Set();
    this.drag = null;
    canvas.addEventListener("mousedown", (e) => this.down(e));
    window.addEventListener("mousemove", (e) => this.move(e));
    window.addEventListener("mouseup", (e) => this.up(e));
    canvas.addEventListener("dblclick", (e) => {
      if (this.pos(e).x >= this.labelW) this.h.select(null);
    });
    new ResizeObserver(() => this.draw()).observe(box);
  }

  // Buckets the width can show: about one per 3 pixels.
  bucketsFor() {
    return Math.max(10, Math.min(2000, Math.floor((this.box.clientWidth - this.labelWidth()) / 3)));
  }

  labelWidth() {
    return Math.min(260, Math.max(140, Math.floor(this.box.clientWidth * 0.14)));
  }

  set(data, range, tids) {
    this.data = data;
    this.range = range;
    this.tids = new Set(tids);
  }

  pos(e) {
    const r = this.canvas.getBoundingClientRect();
    return { x: e.clientX - r.left, y: e.clientY - r.top };
  }

  xToNs(x) {
    const d = this.data;
    const f = Math.min(1, Math.max(0, (x - this.labelW) / (this.plotW || 1)));
    return Math.round(d.start + f * (d.end - d.start));
  }

  nsToX(ns) {
    const d = this.data;
    const span = d.end - d.start || 1;
    return this.labelW + ((ns - d.start) / span) * this.plotW;
  }

  down(e) {
    if (!this.data || e.button !== 0) return;
    const p = this.pos(e);
    if (p.x < this.labelW) {
      const lane = this.data.lanes[Math.floor((p.y - AXIS) / LANE)];
      if (lane && p.y >= AXIS) this.h.toggleThread(lane.tid, e.shiftKey || e.ctrlKey || e.metaKey);
      return;
    }
    this.drag = { x0: p.x, x1: p.x };
    e.preventDefault();
  }

  move(e) {
    if (!this.drag) return;
    this.drag.x1 = this.pos(e).x;
    this.draw();
  }

  up(e) {
    if (!this.drag) return;
    const d = this.drag;
    d.x1 = this.pos(e).x;
    this.drag = null;
    if (Math.abs(d.x1 - d.x0) < 3) {
      this.draw();
      return;
    }
    const a = this.xToNs(Math.min(d.x0, d.x1));
    const b = this.xToNs(Math.max(d.x0, d.x1));
    this.h.select(b > a ? { a, b } : null);
  }

  draw() {
    const width = Math.max(300, this.box.clientWidth);
    const lanes = this.data ? this.data.lanes : [];
    const height = AXIS + Math.max(1, lanes.length) * LANE + 2;
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
    this.labelW = this.labelWidth();
    this.plotW = width - this.labelW - 4;
    if (!this.data) return;
    const d = this.data;
    // the axis: ticks of the recording's time
    ctx.fillStyle = "#555";
    const span = d.end - d.start;
    for (let i = 0; i <= 4; i++) {
      const x = this.labelW + (i / 4) * this.plotW;
      ctx.fillRect(x, AXIS - 5, 1, 5);
      const text = duration(d.start + (i / 4) * span);
      const tw = ctx.measureText(text).width;
      ctx.fillText(text, Math.min(Math.max(x - tw / 2, this.labelW), width - tw - 2), 7);
    }
    let max = 0;
    for (const l of lanes) for (const v of l.buckets) if (v > max) max = v;
    lanes.forEach((l, k) => {
      const y = AXIS + k * LANE;
      const picked = this.tids.has(String(l.tid));
      ctx.fillStyle = picked ? "hsl(210 80% 88%)" : k % 2 ? "#f4f4f4" : "#fafafa";
      ctx.fillRect(0, y, width, LANE - 1);
      ctx.fillStyle = "#111";
      const label = `${l.name} (${l.tid}) ${num(l.total)}`;
      ctx.save();
      ctx.beginPath();
      ctx.rect(0, y, this.labelW - 4, LANE);
      ctx.clip();
      ctx.fillText(label, 4, y + LANE / 2);
      ctx.restore();
      const n = l.buckets.length;
      const cw = this.plotW / n;
      l.buckets.forEach((v, i) => {
        if (!v) return;
        ctx.fillStyle = `hsl(18 85% ${88 - Math.round((v / max) * 50)}%)`;
        ctx.fillRect(this.labelW + i * cw, y + 1, Math.max(cw - 0.3, 0.6), LANE - 3);
      });
    });
    // the selected range, or the one being dragged
    let x0 = null;
    let x1 = null;
    if (this.drag) {
      x0 = Math.min(this.drag.x0, this.drag.x1);
      x1 = Math.max(this.drag.x0, this.drag.x1);
    } else if (this.range) {
      x0 = this.range.a === null ? this.labelW : this.nsToX(this.range.a);
      x1 = this.range.b === null ? this.labelW + this.plotW : this.nsToX(this.range.b);
    }
    if (x0 !== null) {
      x0 = Math.max(x0, this.labelW);
      x1 = Math.min(x1, this.labelW + this.plotW);
      ctx.fillStyle = "rgba(30, 90, 200, 0.18)";
      ctx.fillRect(x0, AXIS, x1 - x0, height - AXIS);
      ctx.fillStyle = "rgba(30, 90, 200, 0.9)";
      ctx.fillRect(x0, AXIS, 1.5, height - AXIS);
      ctx.fillRect(x1 - 1.5, AXIS, 1.5, height - AXIS);
    }
  }
}
