/**
 * Benchmarks the model on every tfjs backend that starts in Node (cpu, wasm), side by side:
 *   npm run bench -- [--preset default|small|tiny] [--batch B] [--context T] [--new N] [--reps R] [--json]
 * Figures are for comparison within one run (these machines are shared and noisy).
 */
import { parseArgs } from "node:util";
import { type BackendName, selectBackend } from "../model/backend";
import { type BenchResult, benchModel } from "../model/bench";
import { PRESETS, type PresetName, presetConfig } from "../model/config";

const { values: v } = parseArgs({
  options: {
    preset: { type: "string", default: "default" },
    vocab: { type: "string", default: "1200" },
    batch: { type: "string", default: "8" },
    context: { type: "string", default: "256" },
    new: { type: "string", default: "16" },
    reps: { type: "string", default: "2" },
    backends: { type: "string", default: "wasm,cpu" },
    json: { type: "boolean", default: false },
  },
});

async function main(): Promise<void> {
  const preset = v.preset as PresetName;
  if (!(preset in PRESETS))
    throw new Error(`--preset must be one of ${Object.keys(PRESETS).join(", ")}`);
  const config = presetConfig(preset, Number(v.vocab));
  const opts = {
    batch: Number(v.batch),
    contextTokens: Number(v.context),
    newTokens: Number(v.new),
    reps: Number(v.reps),
  };
  const results: BenchResult[] = [];
  for (const name of (v.backends as string).split(",") as BackendName[]) {
    try {
      await selectBackend({ force: name });
    } catch (e) {
      if (!v.json) console.log(`${name}: unavailable (${(e as Error).message})`);
      continue;
    }
    results.push(await benchModel(config, opts));
  }
  const base = results.find((r) => r.backend === "cpu") ?? results[0];
  if (v.json) {
    console.log(JSON.stringify({ preset, config, ...opts, results }));
    return;
  }
  const f = (x: number) => x.toFixed(0).padStart(9);
  console.log(
    `model: preset ${preset}, ${results[0]?.params} parameters, ${((results[0]?.bytes ?? 0) / 1e6).toFixed(2)} MB float32`,
  );
  console.log(
    `batch ${opts.batch}, context ${opts.contextTokens} tokens, ${opts.newTokens} new tokens; tokens/s:`,
  );
  console.log("backend   decode+KV  decode-KV  KV speedup     score     train  train vs cpu");
  for (const r of results)
    console.log(
      `${r.backend.padEnd(8)}${f(r.decodeCachedTokensPerSecond)}  ${f(r.decodeNoCacheTokensPerSecond)}  ${r.cacheSpeedup.toFixed(1).padStart(9)}x ${f(r.scoreTokensPerSecond)} ${f(r.trainTokensPerSecond)}  ${(r.trainTokensPerSecond / (base?.trainTokensPerSecond ?? 1)).toFixed(1).padStart(11)}x`,
    );
  console.log(JSON.stringify({ preset, ...opts, results }));
}

main().catch((e: Error) => {
  console.error(`bench: ${e.message}`);
  process.exit(2);
});
