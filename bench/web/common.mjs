// What the web benches share: the source tree, their --flags, playwright-core's chromium
// (from web/node_modules), and the median.
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** The value after --name on the command line, else def. */
export function arg(name, def) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : def;
}

export const { chromium } = createRequire(path.join(SRC, "web/package.json"))("playwright-core");

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}
