#!/usr/bin/env node
// Run speedscope's own importers (the npm package speedscope: its built
// app, in node's vm with a stub DOM) on each file, as if it were dropped
// on speedscope in a browser, and print one JSON line per file:
//   {"file": ..., "profiles": [{"name": ..., "total": N, "unit": ...}]}
// Exits non-zero when speedscope does not recognize or cannot read a file.
//
// The app bundle is an esbuild IIFE with no exports. Its function that
// imports a profile from text is found by what it calls
// (importProfileGroupFromText), published on globalThis, and the bundle
// stops right there, before it would render the UI. The version is pinned
// by package-lock.json.
'use strict';
const fs = require('fs');
const path = require('path');
const vm = require('vm');

const dir = path.join(path.dirname(require.resolve('speedscope/package.json')), 'dist', 'release');
const bundle = fs.readdirSync(dir).find((f) => /^speedscope-.*\.js$/.test(f));
if (!bundle) {
  console.error('speedscope-import: no app bundle in the speedscope package');
  process.exit(2);
}
let src = fs.readFileSync(path.join(dir, bundle), 'utf8');
const hook = src.match(/async function (\w+)\((\w+),(\w+)\)\{return\(await (\w+)\)\.importProfileGroupFromText\(\2,\3\)\}/);
if (!hook) {
  console.error('speedscope-import: this speedscope bundle has no importProfileGroupFromText');
  process.exit(2);
}
src = src.replace(hook[0], `${hook[0]}globalThis.__msImport=${hook[1]};throw "__ms_stop";`);

// Whatever the bundle touches before the hook: a DOM that answers anything.
const stub = new Proxy(function () {}, {
  get: (t, k) => (k === Symbol.toPrimitive ? () => '' : stub),
  apply: () => stub,
  construct: () => stub,
});
const ctx = {
  console: { log() {}, warn() {}, error() {} },
  TextDecoder, TextEncoder, URL, Promise, Math, JSON, Array, Map, Set, WeakMap, Object, Error,
  TypeError, String, Number, Symbol, RegExp, Date, Reflect, Proxy, parseInt, parseFloat, isFinite,
  isNaN, ArrayBuffer, DataView, Uint8Array, Int8Array, Uint16Array, Int16Array, Uint32Array,
  Int32Array, Float32Array, Float64Array, Uint8ClampedArray, BigInt, atob, btoa, setTimeout,
  clearTimeout, queueMicrotask,
  document: stub, localStorage: stub, navigator: { userAgent: 'node' },
  location: { hash: '', href: 'file:///speedscope', protocol: 'file:' },
  matchMedia: () => stub, addEventListener() {}, removeEventListener() {},
  requestAnimationFrame: () => 0,
};
ctx.window = ctx;
ctx.self = ctx;
ctx.globalThis = ctx;
vm.createContext(ctx);
try {
  vm.runInContext(src, ctx);
} catch (e) {
  if (e !== '__ms_stop') throw e;
}

(async () => {
  for (const file of process.argv.slice(2)) {
    const group = await ctx.__msImport(path.basename(file), fs.readFileSync(file, 'utf8'));
    if (!group || !group.profiles || !group.profiles.length) {
      console.error(`speedscope-import: speedscope did not import ${file}`);
      process.exit(1);
    }
    console.log(JSON.stringify({
      file,
      profiles: group.profiles.map((p) => ({
        name: p.getName(), total: p.getTotalWeight(), unit: p.getWeightUnit(),
      })),
    }));
  }
})().catch((e) => {
  console.error(`speedscope-import: ${e && e.stack ? e.stack : e}`);
  process.exit(1);
});
