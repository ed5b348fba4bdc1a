/**
 * The browser bench page (bench.html): measures the model on each tfjs backend in turn, in this
 * browser, with options from the query string:
 *   bench.html?preset=small&vocab=1200&batch=4&wave=8&context=128&new=8&trainTokens=256
 *     &agentShare=0.12&reps=1&backends=webgpu,webgl,wasm,cpu  (or &config=<a ModelConfig as JSON>)
 * and &threads=N: the wasm backend's threads (default and cap: half the logical cores, at most 8;
 * more than one needs the page cross-origin isolated, as vite.config.ts serves it). The wasm
 * backend reads it once, when it starts: compare thread counts across page loads.
 * Progress goes to the page and the console ("[bench] ..."); the results go to
 * window.__benchResults and, as JSON, into the element with data-testid="bench-results".
 */
import * as tf from "@tensorflow/tfjs";
import wasmPlain from "@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm?url";
import wasmSimd from "@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm?url";
import wasmThreadedSimd from "@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-threaded-simd.wasm?url";
import { type BackendName, selectBackend } from "../../model/backend";
import { type BenchOptions, type BenchResult, benchModel } from "../../model/bench";
import {
  type ModelConfig,
  PRESETS,
  type PresetName,
  presetConfig,
  validateConfig,
} from "../../model/config";
import { describeThreads, threadsFromQuery, type WasmThreads } from "../../model/wasmThreads";

/** One backend measured in the browser, with what it ran on. */
export interface BrowserBenchRow extends BenchResult {
  /** E.g. the WebGPU adapter, the WebGL version, the wasm binary's features. */
  detail?: string;
  seconds: number;
}

export interface BrowserBenchResults {
  userAgent: string;
  preset: PresetName;
  config: ModelConfig;
  opts: BenchOptions;
  results: BrowserBenchRow[];
  /** Backends that did not start, or failed while measuring, and why. */
  unavailable: { backend: BackendName; reason: string }[];
  /** Set when the page itself failed (bad options, ...). */
  error?: string;
}

declare global {
  interface Window {
    __benchResults?: BrowserBenchResults;
  }
}

const WASM_PATHS = {
  "tfjs-backend-wasm.wasm": wasmPlain,
  "tfjs-backend-wasm-simd.wasm": wasmSimd,
  "tfjs-backend-wasm-threaded-simd.wasm": wasmThreadedSimd,
};

const progressEl = document.querySelector<HTMLElement>("[data-testid=bench-progress]");
const resultsEl = document.querySelector<HTMLElement>("[data-testid=bench-results]");
const t0 = performance.now();

function progress(line: string): void {
  const stamped = `[${((performance.now() - t0) / 1000).toFixed(1)}s] ${line}`;
  console.log(`[bench] ${stamped}`);
  if (progressEl) progressEl.textContent += `${stamped}\n`;
}

function backendDetail(
  name: BackendName,
  adapter?: string,
  threads?: WasmThreads,
): string | undefined {
  const env = tf.env();
  const flag = (f: string) => {
    try {
      return env.get(f);
    } catch {
      return undefined;
    }
  };
  if (name === "webgpu") return adapter;
  if (name === "webgl") return `WebGL ${flag("WEBGL_VERSION")}`;
  if (name === "wasm")
    return `simd ${flag("WASM_HAS_SIMD_SUPPORT")}, threads ${flag("WASM_HAS_MULTITHREAD_SUPPORT")}${
      threads ? `, ${describeThreads(threads)}` : ""
    }`;
  return undefined;
}

function num(q: URLSearchParams, key: string, fallback: number): number {
  const raw = q.get(key);
  const n = raw === null ? fallback : Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`?${key} must be a positive integer`);
  return n;
}

async function run(): Promise<BrowserBenchResults> {
  const q = new URLSearchParams(location.search);
  const preset = (q.get("preset") ?? "small") as PresetName;
  if (!(preset in PRESETS))
    throw new Error(`?preset must be one of ${Object.keys(PRESETS).join(", ")}`);
  // ?config=<JSON>: a whole model config (npm run bench passes the shipped base's).
  const rawConfig = q.get("config");
  const config = rawConfig
    ? validateConfig(JSON.parse(rawConfig) as ModelConfig)
    : presetConfig(preset, num(q, "vocab", 1200));
  const share = Number(q.get("agentShare") ?? 0.12);
  if (!(share > 0 && share <= 1)) throw new Error("?agentShare must be in (0, 1]");
  const opts: BenchOptions = {
    batch: num(q, "batch", 4),
    wave: num(q, "wave", 8),
    contextTokens: num(q, "context", 128),
    newTokens: num(q, "new", 8),
    trainTokens: num(q, "trainTokens", 256),
    agentShare: share,
    reps: num(q, "reps", 1),
  };
  const wasmThreads = threadsFromQuery(location.search);
  const backends = (q.get("backends") ?? "webgpu,webgl,wasm,cpu")
    .split(",")
    .filter(Boolean) as BackendName[];
  const out: BrowserBenchResults = {
    userAgent: navigator.userAgent,
    preset,
    config,
    opts,
    results: [],
    unavailable: [],
  };
  progress(
    `preset ${preset}, batch ${opts.batch}, context ${opts.contextTokens}, new ${opts.newTokens}, reps ${opts.reps}; backends ${backends.join(", ")}`,
  );
  for (const name of backends) {
    const start = performance.now();
    let info: Awaited<ReturnType<typeof selectBackend>>;
    try {
      info = await selectBackend({
        force: name,
        wasmPaths: WASM_PATHS,
        ...(wasmThreads ? { wasmThreads } : {}),
      });
    } catch (e) {
      const reason = (e as Error).message;
      progress(`${name}: unavailable (${reason})`);
      out.unavailable.push({ backend: name, reason });
      continue;
    }
    const detail = backendDetail(name, info.adapter, info.threads);
    progress(`${name}: started${detail ? ` (${detail})` : ""}; measuring...`);
    try {
      const r = await benchModel(config, opts);
      const seconds = (performance.now() - start) / 1000;
      out.results.push({ ...r, ...(detail ? { detail } : {}), seconds });
      progress(
        `${name}: done in ${seconds.toFixed(1)}s: decode ${r.decodeTokensPerSecond.toFixed(0)} tok/s, train ${r.trainTokensPerSecond.toFixed(0)} tok/s`,
      );
    } catch (e) {
      const reason = `failed while measuring: ${(e as Error).message}`;
      progress(`${name}: ${reason}`);
      out.unavailable.push({ backend: name, reason });
    }
  }
  return out;
}

function finish(results: BrowserBenchResults): void {
  window.__benchResults = results;
  if (resultsEl) resultsEl.textContent = JSON.stringify(results, null, 2);
  progress("finished");
}

run()
  .then(finish)
  .catch((e: Error) => {
    progress(`error: ${e.message}`);
    finish({
      userAgent: navigator.userAgent,
      preset: "small",
      config: presetConfig("small", 1),
      opts: {
        batch: 0,
        wave: 0,
        contextTokens: 0,
        newTokens: 0,
        trainTokens: 0,
        agentShare: 0,
        reps: 0,
      },
      results: [],
      unavailable: [],
      error: e.message,
    });
  });
