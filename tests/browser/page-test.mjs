// Drive the page of microscope serve in Debian's Chromium, headless,
// through playwright-core (which never downloads a browser of its own),
// and print what the page shows as one JSON object for
// tests/0965-web.bats to compare with ms-analyze.
//
//   node page-test.mjs SCENARIO URL OUTDIR
//
// SCENARIO: flame, time, diff or link (see each function). A screenshot
// of every page is written to OUTDIR/SCENARIO*.png. Exit 1 with a
// message on stderr when the page cannot be driven.
import { chromium } from "playwright-core";
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";

const [scenario, base, outdir] = process.argv.slice(2);
if (!scenario || !base || !outdir) {
  process.stderr.write("usage: node page-test.mjs flame|time|diff|link URL OUTDIR\n");
  process.exit(2);
}
const CHROMIUM = process.env.MS_CHROMIUM || "/usr/bin/chromium";
const LAPTOP = { width: 1366, height: 768 };
const WIDE = { width: 2560, height: 1440 };

async function idle(page) {
  await page.waitForFunction(() => window.microscope && window.microscope.idle(), null, { timeout: 20000 });
}

async function shot(page, name) {
  await page.screenshot({ path: join(outdir, `${name}.png`), fullPage: false });
}

// The page's error bar, when shown: a scenario fails with it.
async function errorBar(page) {
  return page.evaluate(() => {
    const e = document.getElementById("error");
    return e.hidden ? "" : e.textContent;
  });
}

async function topTable(page) {
  return page.evaluate(() => ({
    head: document.querySelector("#panel .view-head")?.textContent || "",
    rows: [...document.querySelectorAll("#top-table tbody tr")].map((tr) =>
      [...tr.children].map((td) => td.textContent)),
  }));
}

// Under main, down the chain of only children, to the first node with
// several: its widest child (the flame graph's widest child of main's path).
function widestUnderMain(nodes) {
  const main = nodes.find((n) => n.name === "main");
  if (!main) return null;
  const childrenOf = (p) => nodes.filter((n) => n.depth === p.depth + 1 &&
    n.path.length === p.path.length + 1 && p.path.every((x, i) => n.path[i] === x));
  let at = main;
  for (;;) {
    const kids = childrenOf(at);
    if (!kids.length) return null;
    if (kids.length > 1) {
      kids.sort((a, b) => b.width - a.width);
      return { parent: at.name, parentNode: at, widest: kids[0], next: kids[1] };
    }
    at = kids[0];
  }
}

// The flame graph of a capture: the widest child under main; a click on
// it, and the callers the page shows; the same page 2560 wide.
async function flame(page) {
  await page.goto(base);
  await idle(page);
  const nodes = await page.evaluate(() => window.microscope.flame());
  const w = widestUnderMain(nodes);
  if (!w) throw new Error(`no node named main with children in the flame graph: ${JSON.stringify(nodes.map((n) => n.name))}`);
  await shot(page, "flame");
  const box = await page.locator("#flame").boundingBox();
  await page.mouse.click(box.x + w.widest.x + w.widest.width / 2, box.y + w.widest.y + w.widest.height / 2);
  await idle(page);
  const after = await page.evaluate(() => {
    const d = document.getElementById("flame-detail");
    const tree = document.getElementById("callers-tree");
    const first = tree ? tree.querySelector("details > summary .name, .leaf .name") : null;
    return {
      detail: d.textContent,
      name: d.dataset.name || "",
      total_percent: d.dataset.totalPercent || "",
      shown_percent: d.querySelector(".total-percent")?.textContent || "",
      tab: window.microscope.state().tab,
      callers_root: first ? first.textContent : "",
      callers: tree ? [...tree.querySelectorAll(".tnode > .name")].map((e) => e.textContent) : [],
      hash: location.hash,
    };
  });
  await shot(page, "flame-callers");
  // a double-click zooms into the second widest (burn_30): drawn full width; Esc unzooms
  await page.mouse.dblclick(box.x + w.next.x + w.next.width / 2, box.y + w.next.y + w.next.height / 2);
  await idle(page);
  const zoom = await page.evaluate(() => {
    const s = window.microscope.state();
    const all = window.microscope.flame();
    const z = all.find((n) => n.path.join("\n") === s.zoom);
    return { path: s.zoom.split("\n"), width: z ? z.width : 0, full: document.getElementById("flame").getBoundingClientRect().width };
  });
  await shot(page, "flame-zoom");
  await page.locator("body").press("Escape");
  await idle(page);
  zoom.after_escape = await page.evaluate(() => window.microscope.state().zoom);
  await page.setViewportSize(WIDE);
  await idle(page);
  await shot(page, "flame-wide");
  return {
    parent: w.parent, widest: w.widest.name, widest_width: w.widest.width, next_width: w.next.width,
    widest_total: w.widest.total,
    parent_width: w.parentNode.width, parent_total: w.parentNode.total, ...after, zoom, error: await errorBar(page),
  };
}

// A drag across the timeline from 25% to 65% of its plot: the time range
// the page then asks for, and its top table before and after.
async function time(page) {
  await page.goto(base);
  await idle(page);
  const before = await topTable(page);
  const t = await page.evaluate(() => window.microscope.timeline());
  const box = await page.locator("#timeline").boundingBox();
  const y = box.y + 18 + 8; // the first lane, under the axis
  const x0 = box.x + t.labelWidth + t.plotWidth * 0.25;
  const x1 = box.x + t.labelWidth + t.plotWidth * 0.65;
  await page.mouse.move(x0, y);
  await page.mouse.down();
  await page.mouse.move((x0 + x1) / 2, y, { steps: 4 });
  await page.mouse.move(x1, y, { steps: 4 });
  await page.mouse.up();
  await idle(page);
  const after = await topTable(page);
  await shot(page, "time");
  return {
    time: await page.evaluate(() => window.microscope.state().time),
    before, after, summary: await page.locator("#summary").textContent(), error: await errorBar(page),
  };
}

// Two captures: choose the second in 'diff with'; the diff table shown.
async function diff(page) {
  await page.goto(base);
  await idle(page);
  await page.selectOption("#against", "1");
  await idle(page);
  const shown = await page.evaluate(() => ({
    tab: window.microscope.state().tab,
    head: document.querySelector("#panel .view-head")?.textContent || "",
    title: document.getElementById("flame-title").textContent,
    rows: [...document.querySelectorAll("#diff-table tbody tr")].map((tr) =>
      [...tr.children].slice(0, 8).map((td) => td.textContent)),
    hash: location.hash,
  }));
  await shot(page, "diff");
  return { ...shown, error: await errorBar(page) };
}

// A deep link (URL + the hash given in MS_LINK) restores the view; '/'
// then searches, and Esc clears the search.
async function link(page) {
  await page.goto(base + (process.env.MS_LINK || ""));
  await idle(page);
  const restored = await page.evaluate(() => ({
    state: window.microscope.state(),
    controls: {
      time: document.getElementById("time").value,
      focus: document.getElementById("focus").value,
      mode: document.querySelector("input[name=mode]:checked").value,
      tab: document.querySelector("#tabs button[aria-selected=true]").dataset.tab,
    },
    callees: [...document.querySelectorAll("#callees-tree .tnode > .name")].map((e) => e.textContent),
    detail: document.getElementById("flame-detail").dataset.name || "",
  }));
  await shot(page, "link");
  await page.locator("#tabs button[data-tab=top]").click();
  await idle(page);
  await page.locator("body").press("/");
  const focused = await page.evaluate(() => document.activeElement.id);
  await page.keyboard.type("burn_1");
  const matched = await page.evaluate(() => [...document.querySelectorAll("#top-table tr.match")].map((r) => r.dataset.name));
  await shot(page, "link-search");
  await page.keyboard.press("Escape");
  await idle(page);
  const cleared = await page.evaluate(() => ({ q: window.microscope.state().q, matched: document.querySelectorAll("#top-table tr.match").length }));
  return { ...restored, search_focus: focused, matched, cleared, error: await errorBar(page) };
}

const scenarios = { flame, time, diff, link };
if (!scenarios[scenario]) {
  process.stderr.write(`page-test: no scenario '${scenario}': use flame, time, diff or link\n`);
  process.exit(2);
}

// A fresh profile per run, in OUTDIR: nothing shared, nothing left elsewhere.
const profile = mkdtempSync(join(outdir, "chromium-"));
let context;
try {
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: LAPTOP,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  const page = context.pages()[0] || await context.newPage();
  const logs = [];
  page.on("pageerror", (e) => logs.push(`page error: ${e.message}`));
  page.on("console", (m) => m.type() === "error" && logs.push(`console: ${m.text()}`));
  const result = await scenarios[scenario](page);
  result.logs = logs;
  process.stdout.write(`${JSON.stringify(result)}\n`);
} catch (e) {
  process.stderr.write(`page-test ${scenario}: ${e.stack || e.message}\n`);
  process.exitCode = 1;
} finally {
  if (context) await context.close();
  rmSync(profile, { recursive: true, force: true });
}
