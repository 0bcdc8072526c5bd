// Build the page: src/ into dist/ (index.html and assets/), with no
// dependencies, so `npm run build` works offline. The C build embeds
// dist/ (scripts/embed-web).
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const src = join(here, "src");
const dist = join(here, "dist");
rmSync(dist, { recursive: true, force: true });
mkdirSync(join(dist, "assets"), { recursive: true });
for (const name of readdirSync(src).sort()) {
  const bytes = readFileSync(join(src, name));
  writeFileSync(name === "index.html" ? join(dist, name) : join(dist, "assets", name), bytes);
}
