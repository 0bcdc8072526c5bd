#!/usr/bin/env node
// Load Chrome traces as two real viewers do and print the call trees they
// draw, one JSON line per file:
//   {"file": ...,
//    "speedscope": [{"name": PROFILE, "roots": {NAME: WEIGHT}, "inner": {...},
//                    "leaves": {...}}],
//    "trace_engine": [{"tid": TID, "roots": {NAME: N}, "inner": {...}, "leaves": {...}}]}
// roots are the outermost frames of a thread's tree (what a flame chart
// draws at the top, or the bottom), inner the frames called by another,
// leaves the frames that call nothing.
//  - speedscope (the npm package): its own import of a file, as if dropped
//    on the app, which gives a Chrome trace to its Trace Event importer;
//    the tree is what Profile.forEachCall() walks, weights in its unit.
//  - @paulirish/trace_engine: Chrome DevTools' trace engine, as its
//    Performance panel parses a trace; the tree is each thread's
//    Renderer tree, counted in nodes.
// Exits non-zero when a viewer cannot read a file.
import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import { createRequire } from 'node:module';
import * as Trace from '@paulirish/trace_engine';
import { polyfillDOMRect } from '@paulirish/trace_engine/analyze-trace.mjs';

const require = createRequire(import.meta.url);

function fail(msg) {
  console.error(`chrome-tree: ${msg}`);
  process.exit(1);
}

// speedscope's app bundle, stopped at its import function as
// speedscope-import.js does (that file says how).
function speedscopeImporter() {
  const dir = path.join(path.dirname(require.resolve('speedscope/package.json')), 'dist', 'release');
  const bundle = fs.readdirSync(dir).find((f) => /^speedscope-.*\.js$/.test(f));
  if (!bundle) fail('no app bundle in the speedscope package');
  let src = fs.readFileSync(path.join(dir, bundle), 'utf8');
  const hook = src.match(/async function (\w+)\((\w+),(\w+)\)\{return\(await (\w+)\)\.importProfileGroupFromText\(\2,\3\)\}/);
  if (!hook) fail('this speedscope bundle has no importProfileGroupFromText');
  src = src.replace(hook[0], `${hook[0]}globalThis.__msImport=${hook[1]};throw "__ms_stop";`);
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
  return ctx.__msImport;
}

const add = (m, k, v) => { m[k] = (m[k] || 0) + v; };

async function speedscopeTrees(importer, file, text) {
  const group = await importer(path.basename(file), text);
  if (!group || !group.profiles || !group.profiles.length) fail(`speedscope did not import ${file}`);
  return group.profiles.map((p) => {
    const roots = {}, inner = {}, leaves = {}, stack = [];
    p.forEachCall(
      (node, value) => stack.push({ node, value, calls: false }),
      (node, value) => {
        const open = stack.pop();
        if (stack.length) {
          stack[stack.length - 1].calls = true;
          add(inner, node.frame.name, value - open.value);
        } else {
          add(roots, node.frame.name, value - open.value);
        }
        if (!open.calls) add(leaves, node.frame.name, value - open.value);
      });
    return { name: p.getName(), roots, inner, leaves };
  });
}

async function traceEngineTrees(file, doc) {
  const model = Trace.TraceModel.Model.createWithAllHandlers();
  await model.parse(doc.traceEvents);
  const data = model.parsedTrace() && model.parsedTrace().data;
  if (!data || !data.Renderer) fail(`the trace engine did not parse ${file}`);
  const threads = [];
  for (const [, proc] of data.Renderer.processes) {
    for (const [tid, thread] of proc.threads) {
      if (!thread.tree) continue;
      const roots = {}, inner = {}, leaves = {};
      const todo = [...thread.tree.roots];
      for (const r of todo) add(roots, r.entry.name, 1);
      while (todo.length) {
        const n = todo.pop();
        const children = [...n.children];
        if (!children.length) add(leaves, n.entry.name, 1);
        for (const c of children) add(inner, c.entry.name, 1);
        todo.push(...children);
      }
      threads.push({ tid: Number(tid), roots, inner, leaves });
    }
  }
  if (!threads.length) fail(`the trace engine found no thread with a call tree in ${file}`);
  return threads;
}

polyfillDOMRect();
const importer = speedscopeImporter();
for (const file of process.argv.slice(2)) {
  const text = fs.readFileSync(file, 'utf8');
  const speedscope = await speedscopeTrees(importer, file, text);
  const traceEngine = await traceEngineTrees(file, JSON.parse(text));
  console.log(JSON.stringify({ file, speedscope, trace_engine: traceEngine }));
}
