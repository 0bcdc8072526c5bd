#!/usr/bin/env node
// Check Chrome trace files against the Trace Event Format: the JSON object
// form, and the fields each event type requires.
//  - every event: "ph" a string; "pid" and "tid" integers;
//  - "M" (metadata): "name" process_name or thread_name, "args.name" a string;
//  - "X" (complete): "name" a string, "ts" and "dur" numbers (dur >= 0);
//    on each thread complete events nest (one inside another or apart);
//  - "stackFrames": each entry has a "name", and a "parent" that exists;
//  - "samples": "ts" a number, "tid" an integer, "sf" an existing frame,
//    "name" a string, "weight" a number.
// Prints one JSON line per file with counts; exits non-zero on the first
// violation.
'use strict';
const fs = require('fs');

function check(file) {
  const fail = (msg) => { console.error(`chrome-check: ${file}: ${msg}`); process.exit(1); };
  const doc = JSON.parse(fs.readFileSync(file, 'utf8'));
  if (!doc || typeof doc !== 'object' || !Array.isArray(doc.traceEvents)) fail('no traceEvents array');
  if (doc.displayTimeUnit !== undefined && !['ms', 'ns'].includes(doc.displayTimeUnit)) fail('bad displayTimeUnit');
  const isInt = (v) => Number.isInteger(v);
  const counts = { M: 0, X: 0, stackFrames: 0, samples: 0, processes: 0, threads: 0 };
  const byThread = new Map();
  doc.traceEvents.forEach((e, i) => {
    const at = `traceEvents[${i}]`;
    if (typeof e.ph !== 'string') fail(`${at}: no "ph"`);
    if (!isInt(e.pid) || !isInt(e.tid)) fail(`${at}: "pid" and "tid" must be integers`);
    if (e.ph === 'M') {
      if (e.name !== 'process_name' && e.name !== 'thread_name') fail(`${at}: metadata "${e.name}"`);
      if (!e.args || typeof e.args.name !== 'string') fail(`${at}: metadata without args.name`);
      counts[e.name === 'process_name' ? 'processes' : 'threads']++;
    } else if (e.ph === 'X') {
      if (typeof e.name !== 'string') fail(`${at}: no "name"`);
      if (typeof e.ts !== 'number' || typeof e.dur !== 'number' || e.dur < 0) fail(`${at}: "ts"/"dur"`);
      const k = `${e.pid}/${e.tid}`;
      if (!byThread.has(k)) byThread.set(k, []);
      byThread.get(k).push(e);
    } else {
      fail(`${at}: unexpected phase "${e.ph}"`);
    }
    counts[e.ph]++;
  });
  // complete events of a thread must nest: sort by start, longer first
  // ts and dur are microseconds written to the nanosecond: compare to the
  // nanosecond. (A double at ts past 2^33 us, 2.4 hours of uptime, holds
  // them only to 4e-6, so a tighter bound fails on rounding alone.)
  const eps = 1e-3;
  for (const [k, evs] of byThread) {
    evs.sort((a, b) => a.ts - b.ts || b.dur - a.dur);
    const open = [];
    for (const e of evs) {
      while (open.length && open[open.length - 1] <= e.ts + eps) open.pop();
      if (open.length && e.ts + e.dur > open[open.length - 1] + eps)
        fail(`thread ${k}: "${e.name}" at ${e.ts} overlaps its parent without nesting`);
      open.push(e.ts + e.dur);
    }
  }
  if (doc.stackFrames !== undefined) {
    for (const [id, f] of Object.entries(doc.stackFrames)) {
      if (typeof f.name !== 'string') fail(`stackFrames[${id}]: no "name"`);
      if (f.parent !== undefined && !(f.parent in doc.stackFrames)) fail(`stackFrames[${id}]: parent ${f.parent} missing`);
      counts.stackFrames++;
    }
  }
  if (doc.samples !== undefined) {
    if (!Array.isArray(doc.samples)) fail('"samples" is not an array');
    doc.samples.forEach((s, i) => {
      const at = `samples[${i}]`;
      if (typeof s.ts !== 'number' || !isInt(s.tid) || typeof s.name !== 'string' || typeof s.weight !== 'number')
        fail(`${at}: "ts", "tid", "name" and "weight" are required`);
      if (!doc.stackFrames || !(String(s.sf) in doc.stackFrames)) fail(`${at}: stack frame ${s.sf} missing`);
      counts.samples++;
    });
  }
  console.log(JSON.stringify({ file, ...counts }));
}

for (const file of process.argv.slice(2)) check(file);
