#!/usr/bin/env node
// Decode pprof files with the npm package pprof-format (an independent
// decoder) and print what the tests compare, one JSON object per file:
//   {"sampleTypes": [["samples","count"], ...], "totals": [...],
//    "samples": N, "locations": N, "functions": N, "mappings": N,
//    "self": {"function": count, ...}}
// "self" sums the first sample type by the function of each sample's leaf
// (line[0] of its first location: the innermost function, an inlined callee
// when there are several, as ms-analyze counts it). Exits non-zero when a file does not decode or
// a reference in it does not resolve.
'use strict';
const fs = require('fs');
const zlib = require('zlib');
const { Profile } = require('pprof-format');

function fail(file, msg) {
  console.error(`pprof-decode: ${file}: ${msg}`);
  process.exit(1);
}

for (const file of process.argv.slice(2)) {
  let bytes = fs.readFileSync(file);
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) bytes = zlib.gunzipSync(bytes);
  const p = Profile.decode(bytes);
  const strings = p.stringTable.strings;
  const str = (i) => {
    i = Number(i);
    if (!(i >= 0 && i < strings.length)) fail(file, `string index ${i} out of range`);
    return strings[i];
  };
  if (strings[0] !== '') fail(file, 'string_table[0] is not empty');
  const byId = (rows, what) => {
    const m = new Map();
    for (const r of rows) {
      const id = Number(r.id);
      if (!id || m.has(id)) fail(file, `${what} id ${id} is zero or repeated`);
      m.set(id, r);
    }
    return m;
  };
  const functions = byId(p.function, 'function');
  const locations = byId(p.location, 'location');
  const mappings = byId(p.mapping, 'mapping');
  for (const l of p.location) {
    if (Number(l.mappingId) && !mappings.has(Number(l.mappingId))) fail(file, `location ${l.id}: no mapping ${l.mappingId}`);
    for (const ln of l.line)
      if (!functions.has(Number(ln.functionId))) fail(file, `location ${l.id}: no function ${ln.functionId}`);
  }
  for (const f of p.function) { str(f.name); str(f.systemName); str(f.filename); }
  for (const m of p.mapping) { str(m.filename); str(m.buildId); }
  const totals = p.sampleType.map(() => 0);
  const self = {};
  for (const s of p.sample) {
    if (s.value.length !== p.sampleType.length) fail(file, 'a sample has the wrong number of values');
    s.value.forEach((v, i) => { totals[i] += Number(v); });
    for (const lab of s.label) { str(lab.key); str(lab.str); }
    for (const id of s.locationId)
      if (!locations.has(Number(id))) fail(file, `a sample names location ${id}`);
    if (!s.locationId.length) continue;
    const leaf = locations.get(Number(s.locationId[0]));
    if (!leaf.line.length) continue;
    const fn = functions.get(Number(leaf.line[0].functionId));
    const name = str(fn.name);
    self[name] = (self[name] || 0) + Number(s.value[0]);
  }
  console.log(JSON.stringify({
    file,
    sampleTypes: p.sampleType.map((t) => [str(t.type), str(t.unit)]),
    periodType: p.periodType ? [str(p.periodType.type), str(p.periodType.unit)] : null,
    period: Number(p.period),
    durationNanos: Number(p.durationNanos),
    totals,
    samples: p.sample.length,
    locations: p.location.length,
    functions: p.function.length,
    mappings: p.mapping.length,
    self,
  }));
}
