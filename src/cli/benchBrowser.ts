/**
 * Runs the bench page (bench.html, built into dist/) in this machine's headless Chromium and returns
 * its results: the same model measured on webgpu, webgl, wasm and cpu in the browser.
 * Builds nothing: it serves dist/ with `vite preview` on a free port (or uses a given URL).
 */
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "@playwright/test";
import { preview } from "vite";
import type { ModelConfig } from "../model/config";
import type { BrowserBenchResults } from "../ui/bench/main";
import { CHROMIUM_LAUNCH } from "./chromium";

export type { BrowserBenchResults, BrowserBenchRow } from "../ui/bench/main";

export interface BrowserBenchOptions {
  /** The model: a whole config (passed as JSON), or a preset and vocabulary. */
  config?: ModelConfig;
  preset: string;
  vocab: number;
  batch: number;
  wave: number;
  context: number;
  newTokens: number;
  trainTokens: number;
  agentShare: number;
  reps: number;
  backends: string[];
  /** Where bench.html is served (a server already running); otherwise dist/ is served here. */
  url?: string;
  /** For the whole page, all backends together. */
  timeoutMs: number;
  /** Progress lines from the page. */
  log?: (line: string) => void;
}

/** The project's root (where vite.config.ts and dist/ are). */
export const PROJECT_ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** Whether dist/ holds a built bench page. */
export function benchPageBuilt(): boolean {
  return existsSync(resolve(PROJECT_ROOT, "dist", "bench.html"));
}

function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.on("error", rej);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => res(port));
    });
  });
}

export async function runBrowserBench(o: BrowserBenchOptions): Promise<BrowserBenchResults> {
  let server: Awaited<ReturnType<typeof preview>> | undefined;
  let base = o.url;
  if (!base) {
    if (!benchPageBuilt()) throw new Error("dist/bench.html is missing: run `npm run build` first");
    const port = await freePort();
    server = await preview({
      root: PROJECT_ROOT,
      logLevel: "warn",
      preview: { port, strictPort: true, host: "127.0.0.1", open: false },
    });
    base = `http://127.0.0.1:${port}/`;
  }
  const browser = await chromium.launch(CHROMIUM_LAUNCH);
  try {
    const page = await browser.newPage();
    page.on("console", (m) => {
      const text = m.text();
      if (text.startsWith("[bench] ")) o.log?.(text.slice(8));
    });
    page.on("pageerror", (e) => o.log?.(`page error: ${e.message}`));
    const q = new URLSearchParams({
      preset: o.preset,
      vocab: String(o.vocab),
      ...(o.config ? { config: JSON.stringify(o.config) } : {}),
      batch: String(o.batch),
      wave: String(o.wave),
      context: String(o.context),
      new: String(o.newTokens),
      trainTokens: String(o.trainTokens),
      agentShare: String(o.agentShare),
      reps: String(o.reps),
      backends: o.backends.join(","),
    });
    const url = new URL(`bench.html?${q}`, base.endsWith("/") ? base : `${base}/`).href;
    o.log?.(`opening ${url}`);
    await page.goto(url);
    await page.waitForFunction(() => window.__benchResults !== undefined, null, {
      timeout: o.timeoutMs,
      polling: 500,
    });
    const results = await page.evaluate(() => window.__benchResults as BrowserBenchResults);
    if (results.error) throw new Error(`bench page: ${results.error}`);
    return results;
  } finally {
    await browser.close();
    await server?.close();
  }
}
