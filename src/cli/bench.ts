/**
 * Benchmarks the model on every tfjs backend that starts in Node (wasm, cpu), then in headless
 * Chromium (webgpu, webgl, wasm, cpu: the bench.html page from dist/), and prints one table per
 * place: each backend's plain 2-D matmul ceiling, decoding (a small batch and a whole wave),
 * scoring and training tokens/s, each as a fraction of that ceiling, and the kernels (GPU
 * dispatches) per decoding step and per training micro-batch. Then, in Node, one whole LOOP
 * iteration from the shipped base, its time split (prefill, decode, environment, scoring,
 * backward, optimizer).
 *   npm run bench -- [--checkpoint DIR | --preset default|small|tiny --vocab V]
 *     [--batch 8] [--wave 36] [--context 1000] [--new 16] [--train-tokens 2048] [--agent-share 0.12]
 *     [--reps 2] [--backends wasm,cpu] [--iterations demo,6x6 | none] [--json]
 *     [--no-browser] [--browser-backends webgpu,webgl,wasm,cpu] [--browser-batch 4]
 *     [--browser-wave 8] [--browser-context 128] [--browser-new 8] [--browser-train-tokens 256]
 *     [--browser-reps 1] [--browser-timeout 1800] [--url http://host:port/] [--build]
 * The model is the shipped base's architecture (public/checkpoints/base) unless --preset is given.
 * Iterations: demo = the page's two-task demo (seed 22, 2 tasks of a pool of 2, K = 4); 6x6 = six
 * tasks x six rollouts (seed 0); both from the shipped base's weights, on the first Node backend.
 * Figures are for comparison within one run (these machines are shared and noisy).
 */

import * as tf from "@tensorflow/tfjs";
import { build } from "vite";
import type { BackendName } from "../model/backend";
import { type BenchOptions, type BenchResult, benchModel } from "../model/bench";
import { modelFromCheckpoint } from "../model/checkpoint";
import { readCheckpointDir } from "../model/checkpointFs";
import { type ModelConfig, PRESETS, type PresetName, presetConfig } from "../model/config";
import { emptyTimeSplit, type TimeSplit } from "../model/timeSplit";
import { Trainer } from "../rl/trainer";
import { chosenDecoding, commaList, exitOnError, num, parseCli } from "./args";
import {
  type BrowserBenchResults,
  benchPageBuilt,
  PROJECT_ROOT,
  runBrowserBench,
} from "./benchBrowser";
import { selectCliBackend } from "./nodeGpu";

const v = parseCli(import.meta.url, {
  checkpoint: { type: "string", default: "public/checkpoints/base" },
  preset: { type: "string" },
  vocab: { type: "string", default: "1200" },
  batch: { type: "string", default: "8" },
  wave: { type: "string", default: "36" },
  context: { type: "string", default: "1000" },
  new: { type: "string", default: "16" },
  "train-tokens": { type: "string", default: "2048" },
  "agent-share": { type: "string", default: "0.12" },
  reps: { type: "string", default: "2" },
  backends: { type: "string", default: "wasm,cpu" },
  iterations: { type: "string", default: "demo,6x6" },
  json: { type: "boolean", default: false },
  "no-browser": { type: "boolean", default: false },
  "browser-backends": { type: "string", default: "webgpu,webgl,wasm,cpu" },
  "browser-batch": { type: "string", default: "4" },
  "browser-wave": { type: "string", default: "8" },
  "browser-context": { type: "string", default: "128" },
  "browser-new": { type: "string", default: "8" },
  "browser-train-tokens": { type: "string", default: "256" },
  "browser-reps": { type: "string", default: "1" },
  "browser-timeout": { type: "string", default: "1800" },
  url: { type: "string" },
  build: { type: "boolean", default: false },
});

type Where = "node" | "chromium";

interface Row extends BenchResult {
  where: Where;
  opts: BenchOptions;
  detail?: string;
}

interface Unavailable {
  where: Where;
  backend: string;
  reason: string;
}

/** One LOOP iteration's figures. */
interface IterationRow {
  name: string;
  backend: string;
  tasks: number;
  k: number;
  seconds: number;
  time: TimeSplit;
  tokens: number;
}

/** On webgpu: dispatches per decoding and training step, fused and with stock ops, and the cut. */
function gpuDetail(r: BenchResult): string {
  if (r.dispatchesPerDecodeStep === undefined) return "";
  const d = `dispatches ${r.dispatchesPerDecodeStep.toFixed(0)}/step, ${r.dispatchesPerTrainStep?.toFixed(0)}/train`;
  if (r.stockDispatchesPerDecodeStep === undefined) return ` (${d})`;
  const cut = (stock: number, fused: number) => `${(stock / Math.max(fused, 1)).toFixed(1)}x`;
  return ` (${d}; stock ops: ${r.stockKernelsPerDecodeStep?.toFixed(0)} kernels and ${r.stockDispatchesPerDecodeStep.toFixed(0)} dispatches/step, ${r.stockKernelsPerTrainStep?.toFixed(0)} and ${r.stockDispatchesPerTrainStep?.toFixed(0)}/train; dispatches cut ${cut(r.stockDispatchesPerDecodeStep, r.dispatchesPerDecodeStep)} decoding, ${cut(r.stockDispatchesPerTrainStep ?? 0, r.dispatchesPerTrainStep ?? 0)} training)`;
}

/** The iterations --iterations can name. */
const ITERATIONS: Record<string, { seed: number; tasks: number; pool: number; k: number }> = {
  demo: { seed: 22, tasks: 2, pool: 2, k: 4 },
  "6x6": { seed: 0, tasks: 6, pool: 0, k: 6 },
};

const log = (line: string) => console.error(line);

function printTable(rows: Row[], unavailable: Unavailable[]): void {
  const f = (x: number, w = 7) => x.toFixed(0).padStart(w);
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`.padStart(6);
  console.log(
    "where     backend  ceiling GF/s   decode B (frac)     wave W (frac)    score (frac)    train (frac)  kernels/step  kernels/train  detail",
  );
  for (const r of rows) {
    console.log(
      `${r.where.padEnd(10)}${r.backend.padEnd(9)}${r.ceilingGflops.toFixed(1).padStart(12)}  ${`${f(r.decodeTokensPerSecond, 5)} B=${r.opts.batch}`.padEnd(11)}${pct(r.decodeFraction)}  ${`${f(r.decodeWaveTokensPerSecond, 5)} W=${r.opts.wave}`.padEnd(11)}${pct(r.decodeWaveFraction)}  ${f(r.scoreTokensPerSecond)} ${pct(r.scoreFraction)}  ${f(r.trainTokensPerSecond)} ${pct(r.trainFraction)}  ${f(r.kernelsPerDecodeStep, 12)}  ${f(r.kernelsPerTrainStep, 13)}  ${r.detail ?? ""}${gpuDetail(r)}`,
    );
  }
  for (const u of unavailable)
    console.log(`${u.where.padEnd(10)}${u.backend.padEnd(9)}unavailable: ${u.reason}`);
}

function printIterations(rows: IterationRow[]): void {
  if (rows.length === 0) return;
  console.log(
    "iteration  backend  tasks x K  seconds   prefill   decode  environment  scoring  backward  optimizer  sampled tokens",
  );
  for (const r of rows) {
    const t = r.time;
    const s = (x: number, w: number) => x.toFixed(1).padStart(w);
    console.log(
      `${r.name.padEnd(11)}${r.backend.padEnd(9)}${`${r.tasks} x ${r.k}`.padStart(9)}${s(r.seconds, 9)}${s(t.prefill, 10)}${s(t.decode, 9)}${s(t.environment, 13)}${s(t.scoring, 9)}${s(t.backward, 10)}${s(t.optimizer, 11)}${String(r.tokens).padStart(16)}`,
    );
  }
}

/** One LOOP iteration from the checkpoint, on the current backend. */
async function benchIteration(dir: string, name: string): Promise<IterationRow> {
  const spec = ITERATIONS[name];
  if (!spec)
    throw new Error(
      `--iterations: unknown '${name}' (known: ${Object.keys(ITERATIONS).join(", ")})`,
    );
  const parsed = await readCheckpointDir(dir);
  const { model, tokenizer } = modelFromCheckpoint(parsed);
  const trainer = new Trainer(model, tokenizer, {
    algo: "loop",
    seed: spec.seed,
    tasks: spec.tasks,
    pool: spec.pool,
    k: spec.k,
    lr: 3e-4,
    evalEvery: 0,
    grammar: chosenDecoding({}, parsed) === "grammar",
  });
  try {
    const m = await trainer.iterate();
    return {
      name,
      backend: tf.getBackend(),
      tasks: spec.tasks,
      k: spec.k,
      seconds: m.seconds,
      time: m.time ?? emptyTimeSplit(),
      tokens: Math.round(m.sampleTokensPerSecond * m.rolloutSeconds),
    };
  } finally {
    trainer.dispose();
    model.dispose();
  }
}

async function main(): Promise<number> {
  let config: ModelConfig;
  let modelName: string;
  if (v.preset !== undefined) {
    const preset = v.preset as PresetName;
    if (!(preset in PRESETS))
      throw new Error(`--preset must be one of ${Object.keys(PRESETS).join(", ")}`);
    config = presetConfig(preset, num("vocab", v.vocab, true, 1));
    modelName = `preset ${preset}`;
  } else {
    config = (await readCheckpointDir(v.checkpoint as string)).manifest.config;
    modelName = `the architecture of ${v.checkpoint}`;
  }
  const share = num("agent-share", v["agent-share"], false, 1e-6);
  if (share > 1) throw new Error("--agent-share must be at most 1");
  const opts: BenchOptions = {
    batch: num("batch", v.batch, true, 1),
    wave: num("wave", v.wave, true, 1),
    contextTokens: num("context", v.context, true, 1),
    newTokens: num("new", v.new, true, 2),
    trainTokens: num("train-tokens", v["train-tokens"], true, 2),
    agentShare: share,
    reps: num("reps", v.reps, true, 1),
  };
  const browser = !v["no-browser"];
  const browserOpts: BenchOptions = {
    batch: num("browser-batch", v["browser-batch"], true, 1),
    wave: num("browser-wave", v["browser-wave"], true, 1),
    contextTokens: num("browser-context", v["browser-context"], true, 1),
    newTokens: num("browser-new", v["browser-new"], true, 2),
    trainTokens: num("browser-train-tokens", v["browser-train-tokens"], true, 2),
    agentShare: share,
    reps: num("browser-reps", v["browser-reps"], true, 1),
  };
  const timeoutMs = num("browser-timeout", v["browser-timeout"], true, 1) * 1000;
  const iterationNames = v.iterations === "none" ? [] : commaList(v.iterations);
  for (const n of iterationNames)
    if (!ITERATIONS[n])
      throw new Error(
        `--iterations: unknown '${n}' (known: ${Object.keys(ITERATIONS).join(", ")}, none)`,
      );

  // Build the page first (a few seconds), so that a broken build shows before the long Node part.
  if (browser && !v.url && (v.build || !benchPageBuilt())) {
    log(v.build ? "building dist/ (vite build)..." : "dist/ has no bench page: vite build...");
    await build({ root: PROJECT_ROOT, logLevel: "warn" });
  }

  const rows: Row[] = [];
  const unavailable: Unavailable[] = [];
  const iterations: IterationRow[] = [];
  const nodeBackends = commaList(v.backends) as BackendName[];
  for (const name of nodeBackends) {
    try {
      await selectCliBackend(name);
    } catch (e) {
      log(`node ${name}: unavailable (${(e as Error).message})`);
      unavailable.push({ where: "node", backend: name, reason: (e as Error).message });
      continue;
    }
    log(`node ${name}: measuring...`);
    const t = performance.now();
    rows.push({ where: "node", opts, ...(await benchModel(config, opts)) });
    log(`node ${name}: done in ${((performance.now() - t) / 1000).toFixed(1)}s`);
    if (name === nodeBackends[0] && v.preset === undefined)
      for (const it of iterationNames) {
        log(`node ${name}: one LOOP iteration (${it})...`);
        iterations.push(await benchIteration(v.checkpoint as string, it));
      }
  }

  let page: BrowserBenchResults | undefined;
  let browserError: string | undefined;
  if (browser) {
    try {
      page = await runBrowserBench({
        config,
        preset: v.preset ?? "small",
        vocab: config.vocabSize,
        batch: browserOpts.batch,
        wave: browserOpts.wave,
        context: browserOpts.contextTokens,
        newTokens: browserOpts.newTokens,
        trainTokens: browserOpts.trainTokens,
        agentShare: browserOpts.agentShare,
        reps: browserOpts.reps,
        backends: commaList(v["browser-backends"]),
        url: v.url,
        timeoutMs,
        log: (line) => log(`chromium ${line}`),
      });
      for (const r of page.results) {
        const { seconds: _s, detail, ...result } = r;
        rows.push({
          where: "chromium",
          opts: browserOpts,
          ...result,
          ...(detail ? { detail } : {}),
        });
      }
      for (const u of page.unavailable) unavailable.push({ where: "chromium", ...u });
    } catch (e) {
      browserError = (e as Error).message;
      log(`chromium: the browser bench failed: ${browserError}`);
    }
  }

  if (!v.json) {
    const params = rows[0]?.params ?? 0;
    console.log(
      `model: ${modelName}, ${params} parameters, ${((params * 4) / 1e6).toFixed(2)} MB float32`,
    );
    console.log(
      `node: decode B=${opts.batch} and a wave of W=${opts.wave} rows after ${opts.contextTokens} context tokens, ${opts.newTokens} new; score/train one row of ${opts.trainTokens} tokens, ${(100 * share).toFixed(0)}% of them agent tokens (chromium: B=${browserOpts.batch}, W=${browserOpts.wave}, ${browserOpts.contextTokens}, ${browserOpts.newTokens}, ${browserOpts.trainTokens})`,
    );
    console.log(
      "tokens/s, and in brackets the matmul GFLOP/s achieved over the backend's own ceiling:",
    );
    printTable(rows, unavailable);
    if (browserError) console.log(`chromium  (all)    failed: ${browserError}`);
    printIterations(iterations);
  }
  console.log(
    JSON.stringify({
      model: modelName,
      config,
      node: opts,
      ...(browser ? { chromium: { ...browserOpts, userAgent: page?.userAgent } } : {}),
      results: rows,
      iterations,
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
