/**
 * Behaviour cloning of the base policy on demonstrator episodes of the train split:
 *   npm run pretrain -- --seed S --out DIR [--preset small|default|tiny] [--worlds W] [--demo-seeds N]
 *                       [--epochs E] [--lr LR] [--lr-final LR] [--batch-tokens N] [--max-words N] [--minutes M]
 *                       [--max-steps N] [--save-every STEPS] [--init CKPT_DIR] [--prev-token 0..4] [--layers N]
 *                       [--world-weight W] [--copy-head] [--copy-continue] [--split-quote] [--flaws default|mild|name=rate,...]
 *                       [--backend wasm|cpu|webgpu] [--json]
 * --init continues from a checkpoint (its tokenizer and model; --preset and --max-words are ignored);
 * with --prev-token N it grows the model embeddings of the tokens up to N back first, with --copy-continue
 * the copy continuation prior, with --layers N more layers (each starting so that the model computes
 * the same function, then it learns).
 * --split-quote gives a value's closing quote its own token (TokenizerSpec.splitQuote), in a new
 * vocabulary or in the --init checkpoint's (off in the shipped recipe, which predates it).
 * --world-weight W adds W x the language-modelling loss on the world's tokens (default 0).
 * --lr-final decays the learning rate linearly from --lr to it over --max-steps (with --max-steps 0
 * and --minutes M: over the M minutes).
 * --flaws sets the demonstrator's flaw rates (a preset or e.g. `giveUp=0.2,assume=0.3`).
 * --copy-head gives a new model a copy (pointer) head (ModelConfig.copyHead; off in the recipe),
 * --copy-continue also its continuation prior (ModelConfig.copyContinue).
 * Same seed and options, same checkpoint (bit for bit on the same backend); --minutes stops on time,
 * so for a reproducible run give --max-steps instead. The defaults are the shipped checkpoint's
 * recipe (`npm run pretrain -- --seed 0 --out DIR`: 804 steps); --max-steps 0 runs every epoch.
 * Writes DIR/manifest.json + DIR/weights.bin (and DIR/sft.jsonl, the loss curve).
 */

import { appendFile, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { isMainThread } from "node:worker_threads";
import { parseFlaws } from "../agent/demonstrator";
import { episodeCorpus, tokenizeEpisode } from "../agent/demos";
import { contextBudget, MAX_ACTION_TOKENS, segments } from "../agent/transcript";
import { APPS, formatApiDoc } from "../env";
import { modelFromCheckpoint, saveCheckpoint } from "../model/checkpoint";
import { readCheckpointDir, saveCheckpointToDir } from "../model/checkpointFs";
import {
  MAX_PREV_TOKEN,
  PRESETS,
  type PresetName,
  type PrevToken,
  presetConfig,
} from "../model/config";
import { GPT } from "../model/gpt";
import { Tokenizer } from "../model/tokenizer";
import { sft } from "../rl/sft";
import { parseCli } from "./args";
import { collectDemonstrationsParallel } from "./demoWorkers";
import { selectCliBackend } from "./nodeGpu";

const v = parseCli(import.meta.url, {
  seed: { type: "string", default: "0" },
  out: { type: "string", default: "public/checkpoints/base" },
  preset: { type: "string", default: "small" },
  "demo-seeds": { type: "string", default: "1" },
  worlds: { type: "string", default: "36" },
  "world-weight": { type: "string", default: "0" },
  "prev-token": { type: "string" },
  layers: { type: "string" },
  "copy-head": { type: "boolean", default: false },
  "copy-continue": { type: "boolean", default: false },
  "split-quote": { type: "boolean", default: false },
  flaws: { type: "string", default: "default" },
  epochs: { type: "string", default: "6" },
  lr: { type: "string", default: "0.003" },
  "lr-final": { type: "string" },
  "batch-tokens": { type: "string", default: "4096" },
  "max-words": { type: "string", default: "1000" },
  minutes: { type: "string", default: "0" },
  "save-every": { type: "string", default: "50" },
  // The shipped checkpoint's recipe: these defaults, --seed 0, 804 steps (80 minutes here).
  "max-steps": { type: "string", default: "804" },
  init: { type: "string" },
  backend: { type: "string", default: "wasm" },
  json: { type: "boolean", default: false },
});

function num(name: string, value: string | undefined, integer = true): number {
  const n = Number(value);
  if (!Number.isFinite(n) || (integer && !Number.isInteger(n)))
    throw new Error(`--${name} must be ${integer ? "an integer" : "a number"}, got '${value}'`);
  return n;
}

async function main(): Promise<void> {
  const seed = num("seed", v.seed);
  const preset = v.preset as PresetName;
  if (!(preset in PRESETS))
    throw new Error(`--preset must be one of ${Object.keys(PRESETS).join(", ")}`);
  const minutes = num("minutes", v.minutes, false);
  const backend = await selectCliBackend(v.backend as string);
  const log = (msg: string) => {
    if (!v.json) console.log(msg);
  };
  log(`backend ${backend.name}`);
  const demoSeeds = Array.from(
    { length: num("demo-seeds", v["demo-seeds"]) },
    (_, i) => seed * 1000 + i,
  );
  // The train split's tasks plus its scenarios re-instantiated on `--worlds` fresh worlds, one
  // worker thread per demonstrator seed (the same episodes in the same order as one thread).
  const worlds = num("worlds", v.worlds);
  const flaws = parseFlaws(v.flaws as string);
  const t0Demos = performance.now();
  const demos = await collectDemonstrationsParallel(worlds, demoSeeds, flaws);
  log(`demonstrations: ${((performance.now() - t0Demos) / 1000).toFixed(0)}s`);
  const docs = APPS.flatMap((a) => a.apis.map(formatApiDoc));
  const init = v.init ? modelFromCheckpoint(await readCheckpointDir(v.init)) : null;
  // --split-quote: an older vocabulary (its checkpoint) with TokenizerSpec.splitQuote on.
  const fromInit = v["split-quote"] ? init?.tokenizer.withSplitQuote() : init?.tokenizer;
  const tok =
    fromInit ??
    Tokenizer.build([...episodeCorpus(demos), ...docs], {
      maxWords: num("max-words", v["max-words"]),
      minCount: 3,
      splitQuote: v["split-quote"] as boolean,
    });
  const back = v["prev-token"] === undefined ? undefined : num("prev-token", v["prev-token"]);
  if (back !== undefined && (!Number.isInteger(back) || back < 0 || back > MAX_PREV_TOKEN))
    throw new Error(`--prev-token must be an integer from 0 to ${MAX_PREV_TOKEN}`);
  const prevToken = back as PrevToken | undefined;
  const copyContinue = v["copy-continue"] as boolean;
  const nLayers = v.layers === undefined ? undefined : num("layers", v.layers);
  if (nLayers !== undefined && !init) throw new Error("--layers grows an --init checkpoint");
  let model: GPT;
  if (
    init &&
    ((prevToken !== undefined && prevToken !== init.model.config.prevToken) ||
      (copyContinue && !init.model.config.copyContinue) ||
      (nLayers !== undefined && nLayers !== init.model.config.nLayers))
  ) {
    // Grow the initial model: the new parameters add nothing yet (same function).
    model = GPT.grow(
      init.model,
      {
        ...(prevToken !== undefined ? { prevToken } : {}),
        ...(copyContinue ? { copyContinue } : {}),
        ...(nLayers !== undefined ? { nLayers } : {}),
      },
      seed,
    );
    init.model.dispose();
  } else if (init) model = init.model;
  else {
    const cfg = {
      ...presetConfig(preset, tok.size),
      copyHead: (v["copy-head"] as boolean) || copyContinue,
      copyContinue,
    };
    model = new GPT(prevToken === undefined ? cfg : { ...cfg, prevToken }, seed);
  }
  const config = model.config;
  // An action longer than the per-turn cap is one the policy could never sample: such episodes
  // (a few long notes and messages) are left out.
  let skipped = 0;
  const segs = demos.flatMap((d) => {
    const t = tokenizeEpisode(tok, d);
    if (t.turns.some((x) => x.action.length > MAX_ACTION_TOKENS)) {
      skipped++;
      return [];
    }
    return segments(t.prompt, t.turns, contextBudget(config.context));
  });
  if (skipped) log(`left out ${skipped} episodes with an action over ${MAX_ACTION_TOKENS} tokens`);
  const tokens = segs.reduce((s, x) => s + x.tokens.length, 0);
  log(
    `${demos.length} demonstrator episodes (${((100 * demos.filter((d) => d.success).length) / demos.length).toFixed(1)}% successful), ${segs.length} sequences, ${tokens} tokens; vocabulary ${tok.size}; ${model.paramCount()} parameters`,
  );
  await mkdir(v.out as string, { recursive: true });
  const curve = join(v.out as string, "sft.jsonl");
  await writeFile(curve, "");
  const save = async (step: number) => {
    const { manifest, blob } = await saveCheckpoint(model, tok, {
      createdAt: new Date().toISOString(),
      step,
      notes: `SFT on ${demos.length} demonstrator episodes (train, flaws ${v.flaws}), preset ${preset}, seed ${seed}`,
    });
    await saveCheckpointToDir(v.out as string, manifest, blob);
  };
  const saveEvery = num("save-every", v["save-every"]);
  const maxSteps = num("max-steps", v["max-steps"]);
  if (v["lr-final"] !== undefined && maxSteps === 0 && minutes === 0)
    log("note: --lr-final needs --max-steps N or --minutes M to decay over; the lr stays at --lr");
  const t0 = performance.now();
  const steps = await sft(model, segs, {
    epochs: num("epochs", v.epochs),
    lr: num("lr", v.lr, false),
    ...(v["lr-final"] !== undefined
      ? { lrFinal: num("lr-final", v["lr-final"], false), decaySteps: maxSteps }
      : {}),
    // Stopped by the clock alone: the decay follows the time spent.
    ...(maxSteps === 0 && minutes > 0
      ? { decayProgress: () => (performance.now() - t0) / (minutes * 60_000) }
      : {}),
    batchTokens: num("batch-tokens", v["batch-tokens"]),
    seed,
    worldWeight: num("world-weight", v["world-weight"], false),
    onStep: async (s) => {
      await appendFile(curve, `${JSON.stringify(s)}\n`);
      if (saveEvery > 0 && s.step % saveEvery === 0) await save(s.step);
      if (s.step % 10 === 0 || s.step === s.steps)
        log(
          `epoch ${s.epoch} step ${s.step}/${s.steps} loss ${s.loss.toFixed(4)} grad ${s.gradNorm.toFixed(2)} ${s.seconds.toFixed(0)}s`,
        );
    },
    shouldStop: (done) =>
      (maxSteps > 0 && done >= maxSteps) ||
      (minutes > 0 && performance.now() - t0 > minutes * 60_000),
  });
  const seconds = (performance.now() - t0) / 1000;
  await save(steps.length);
  const last = steps.slice(-10);
  const summary = {
    out: v.out,
    backend: backend.name,
    preset,
    params: model.paramCount(),
    vocab: tok.size,
    episodes: demos.length,
    sequences: segs.length,
    tokens,
    steps: steps.length,
    seconds: Math.round(seconds),
    finalLoss: last.reduce((s, x) => s + x.loss, 0) / Math.max(1, last.length),
    tokensPerSecond: Math.round(steps.reduce((s, x) => s + x.tokens, 0) / seconds),
  };
  if (v.json) console.log(JSON.stringify(summary));
  else log(`saved ${v.out}: ${JSON.stringify(summary)}`);
  model.dispose();
}

// Only on the main thread: the demonstration workers run this module too (in a bundle).
if (isMainThread)
  main().catch((e: Error) => {
    console.error(`pretrain: ${e.message}`);
    process.exit(2);
  });
