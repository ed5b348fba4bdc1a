/**
 * Benchmarks the model on every tfjs backend that starts in Node (wasm, cpu), then in headless
 * Chromium (webgpu, webgl, wasm, cpu: the bench.html page from dist/), and prints one table:
 *   npm run bench -- [--preset default|small|tiny] [--vocab V] [--batch B] [--context T] [--new N]
 *     [--reps R] [--backends wasm,cpu] [--json]
 *     [--no-browser] [--browser-backends webgpu,webgl,wasm,cpu] [--browser-batch 4]
 *     [--browser-context 128] [--browser-new 8] [--browser-reps 1] [--browser-timeout 1800]
 *     [--url http://host:port/] [--build]
 * Both places run the same model (preset, vocab); the browser gets a smaller workload by default
 * (SwiftShader is slow), so compare ratios within a place, or pass the same --browser-* sizes.
 * dist/ is built (vite build) when it has no bench page, or with --build.
 * Figures are for comparison within one run (these machines are shared and noisy).
 */

import { build } from "vite";
import type { BackendName } from "../model/backend";
import { type BenchResult, benchModel } from "../model/bench";
import { PRESETS, type PresetName, presetConfig } from "../model/config";
import { commaList, exitOnError, num, parseCli } from "./args";
import {
  type BrowserBenchResults,
  benchPageBuilt,
  PROJECT_ROOT,
  runBrowserBench,
} from "./benchBrowser";
import { selectCliBackend } from "./nodeGpu";

const v = parseCli(import.meta.url, {
  preset: { type: "string", default: "default" },
  vocab: { type: "string", default: "1200" },
  batch: { type: "string", default: "8" },
  context: { type: "string", default: "256" },
  new: { type: "string", default: "16" },
  reps: { type: "string", default: "2" },
  backends: { type: "string", default: "wasm,cpu" },
  json: { type: "boolean", default: false },
  "no-browser": { type: "boolean", default: false },
  "browser-backends": { type: "string", default: "webgpu,webgl,wasm,cpu" },
  "browser-batch": { type: "string", default: "4" },
  "browser-context": { type: "string", default: "128" },
  "browser-new": { type: "string", default: "8" },
  "browser-reps": { type: "string", default: "1" },
  "browser-timeout": { type: "string", default: "1800" },
  url: { type: "string" },
  build: { type: "boolean", default: false },
});

type Where = "node" | "chromium";

interface Row extends BenchResult {
  where: Where;
  batch: number;
  contextTokens: number;
  newTokens: number;
  reps: number;
  /** Training tokens/s over the cpu row's of the same place (null without one). */
  trainVsCpu: number | null;
  detail?: string;
}

interface Unavailable {
  where: Where;
  backend: string;
  reason: string;
}

const log = (line: string) => console.error(line);

function withRatios(rows: Omit<Row, "trainVsCpu">[]): Row[] {
  return rows.map((r) => {
    const cpu = rows.find((c) => c.where === r.where && c.backend === "cpu");
    return { ...r, trainVsCpu: cpu ? r.trainTokensPerSecond / cpu.trainTokensPerSecond : null };
  });
}

function printTable(rows: Row[], unavailable: Unavailable[]): void {
  const f = (x: number) => x.toFixed(0).padStart(9);
  console.log(
    "where     backend  workload     decode+KV  decode-KV  KV speedup     score     train  train vs cpu  detail",
  );
  for (const r of rows) {
    const work = `${r.batch}x${r.contextTokens}+${r.newTokens}`;
    const ratio = r.trainVsCpu === null ? "-" : `${r.trainVsCpu.toFixed(1)}x`;
    console.log(
      `${r.where.padEnd(10)}${r.backend.padEnd(9)}${work.padEnd(11)}${f(r.decodeCachedTokensPerSecond)}  ${f(r.decodeNoCacheTokensPerSecond)}  ${`${r.cacheSpeedup.toFixed(1)}x`.padStart(10)} ${f(r.scoreTokensPerSecond)} ${f(r.trainTokensPerSecond)}  ${ratio.padStart(12)}  ${r.detail ?? ""}`,
    );
  }
  for (const u of unavailable)
    console.log(`${u.where.padEnd(10)}${u.backend.padEnd(9)}unavailable: ${u.reason}`);
}

async function main(): Promise<number> {
  const preset = v.preset as PresetName;
  if (!(preset in PRESETS))
    throw new Error(`--preset must be one of ${Object.keys(PRESETS).join(", ")}`);
  const vocab = num("vocab", v.vocab, true, 1);
  const config = presetConfig(preset, vocab);
  const opts = {
    batch: num("batch", v.batch, true, 1),
    contextTokens: num("context", v.context, true, 1),
    newTokens: num("new", v.new, true, 1),
    reps: num("reps", v.reps, true, 1),
  };
  const browser = !v["no-browser"];
  const browserOpts = {
    batch: num("browser-batch", v["browser-batch"], true, 1),
    contextTokens: num("browser-context", v["browser-context"], true, 1),
    newTokens: num("browser-new", v["browser-new"], true, 1),
    reps: num("browser-reps", v["browser-reps"], true, 1),
  };
  const timeoutMs = num("browser-timeout", v["browser-timeout"], true, 1) * 1000;

  // Build the page first (a few seconds), so that a broken build shows before the long Node part.
  if (browser && !v.url && (v.build || !benchPageBuilt())) {
    log(v.build ? "building dist/ (vite build)..." : "dist/ has no bench page: vite build...");
    await build({ root: PROJECT_ROOT, logLevel: "warn" });
  }

  const rows: Omit<Row, "trainVsCpu">[] = [];
  const unavailable: Unavailable[] = [];
  for (const name of commaList(v.backends) as BackendName[]) {
    try {
      await selectCliBackend(name);
    } catch (e) {
      log(`node ${name}: unavailable (${(e as Error).message})`);
      unavailable.push({ where: "node", backend: name, reason: (e as Error).message });
      continue;
    }
    log(`node ${name}: measuring...`);
    const t = performance.now();
    rows.push({ where: "node", ...opts, ...(await benchModel(config, opts)) });
    log(`node ${name}: done in ${((performance.now() - t) / 1000).toFixed(1)}s`);
  }

  let page: BrowserBenchResults | undefined;
  let browserError: string | undefined;
  if (browser) {
    try {
      page = await runBrowserBench({
        preset,
        vocab,
        batch: browserOpts.batch,
        context: browserOpts.contextTokens,
        newTokens: browserOpts.newTokens,
        reps: browserOpts.reps,
        backends: commaList(v["browser-backends"]),
        url: v.url,
        timeoutMs,
        log: (line) => log(`chromium ${line}`),
      });
      for (const r of page.results) {
        const { seconds: _s, detail, ...result } = r;
        rows.push({ where: "chromium", ...browserOpts, ...result, ...(detail ? { detail } : {}) });
      }
      for (const u of page.unavailable) unavailable.push({ where: "chromium", ...u });
    } catch (e) {
      browserError = (e as Error).message;
      log(`chromium: the browser bench failed: ${browserError}`);
    }
  }

  const all = withRatios(rows);
  if (!v.json) {
    const params = all[0]?.params ?? 0;
    console.log(
      `model: preset ${preset}, vocab ${vocab}, ${params} parameters, ${((params * 4) / 1e6).toFixed(2)} MB float32`,
    );
    console.log(
      "workload: batch x context tokens + new tokens decoded; tokens/s (train vs cpu: the cpu row of the same place):",
    );
    printTable(all, unavailable);
    if (browserError) console.log(`chromium  (all)    failed: ${browserError}`);
  }
  console.log(
    JSON.stringify({
      preset,
      config,
      node: opts,
      ...(browser ? { chromium: { ...browserOpts, userAgent: page?.userAgent } } : {}),
      results: all,
      unavailable,
      ...(browserError ? { browserError } : {}),
    }),
  );
  // A backend that does not start is a result; a browser bench that could not run is a failure.
  return browserError ? 1 : 0;
}

main()
  .then((code) => process.exit(code))
  .catch(exitOnError("bench"));
