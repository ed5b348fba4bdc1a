/**
 * One behaviour-cloning stage of `npm run pretrain`: demonstrations, tokenizer, model (new, or an
 * --init checkpoint grown as asked), SFT, checkpoints. `pretrain.ts` parses the command line and
 * runs one stage or a recipe's stages (`recipes.ts`); both go through `runStage`.
 */

import { appendFile, mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { gunzipSync } from "node:zlib";
import { parseFlaws } from "../agent/demonstrator";
import {
  episodeCorpus,
  type PolicyContext,
  parseEpisodeLines,
  parseTemplateWeights,
  repeatByTemplate,
  tokenizeEpisode,
} from "../agent/demos";
import { ActionGrammar } from "../agent/grammar";
import { collectTakeovers } from "../agent/takeover";
import { contextBudget, MAX_ACTION_TOKENS, segments } from "../agent/transcript";
import { APPS, formatApiDoc, RELATIONSHIP_PLURALS } from "../env";
import { modelFromCheckpoint, saveCheckpoint } from "../model/checkpoint";
import { readCheckpointDir, saveCheckpointToDir } from "../model/checkpointFs";
import {
  MAX_PREV_TOKEN,
  PRESETS,
  type PresetName,
  type PrevToken,
  presetConfig,
  validateConfig,
} from "../model/config";
import { GPT } from "../model/gpt";
import { Tokenizer } from "../model/tokenizer";
import { checkAverageFrom, sft } from "../rl/sft";
import { commaList, num, parseDecoding } from "./args";
import { collectDemonstrationsParallel, pretrainTasks } from "./demoWorkers";

/** Options that shape one stage's training (a recipe's stages set these, the command line does not). */
export const STAGE_OPTIONS = {
  preset: { type: "string" },
  "demo-seeds": { type: "string" },
  worlds: { type: "string" },
  "world-weight": { type: "string" },
  "prev-token": { type: "string" },
  layers: { type: "string" },
  "copy-head": { type: "boolean" },
  "copy-continue": { type: "boolean" },
  "copy-target": { type: "boolean" },
  "copy-emit": { type: "boolean" },
  "train-only": { type: "string" },
  sgd: { type: "string" },
  "sgd-lr": { type: "string" },
  "template-weights": { type: "string" },
  "average-from": { type: "string" },
  "split-quote": { type: "boolean" },
  "split-plural": { type: "boolean" },
  flaws: { type: "string" },
  "context-aware": { type: "boolean" },
  episodes: { type: "string" },
  takeovers: { type: "string" },
  "takeover-seed": { type: "string" },
  epochs: { type: "string" },
  lr: { type: "string" },
  "lr-final": { type: "string" },
  "batch-tokens": { type: "string" },
  "max-words": { type: "string" },
  minutes: { type: "string" },
  "max-steps": { type: "string" },
  decoding: { type: "string" },
} as const;

/** Options of the whole run (a recipe's too): where, from what seed, on what backend. */
export const RUN_OPTIONS = {
  seed: { type: "string" },
  out: { type: "string" },
  init: { type: "string" },
  "save-every": { type: "string" },
  backend: { type: "string" },
  json: { type: "boolean" },
} as const;

export type StageFlag = keyof typeof STAGE_OPTIONS;
type Values = { [K in keyof typeof STAGE_OPTIONS | keyof typeof RUN_OPTIONS]?: string | boolean };

/** A single stage's defaults: the recipe `small` (recipes.ts); `base` starts from them plus a copy head. */
export const STAGE_DEFAULTS: Values = {
  preset: "small",
  "demo-seeds": "1",
  worlds: "36",
  "world-weight": "0",
  "copy-head": false,
  "copy-continue": false,
  "split-quote": false,
  flaws: "default",
  epochs: "6",
  lr: "0.003",
  "batch-tokens": "4096",
  "max-words": "1000",
  minutes: "0",
  "max-steps": "804",
};

export const RUN_DEFAULTS: Values = {
  seed: "0",
  "save-every": "50",
  backend: "wasm",
  json: false,
};

/** Parses a stage's flags (as a recipe writes them) strictly: an unknown or run-level one is refused. */
export function parseStageFlags(args: readonly string[]): Values {
  return parseArgs({
    args: [...args],
    options: STAGE_OPTIONS,
    strict: true,
    allowPositionals: false,
  }).values as Values;
}

/** The tasks takeovers are played on: the train split plus its scenarios on this many worlds. */
export const TAKEOVER_WORLDS = 36;

/**
 * Parses `--takeovers`: batches of the --init policy's rollouts, `free:N` (free decoding) or
 * `grammar:N` (under the action grammar), comma-separated; each batch takes the next N tasks of
 * the seeded order (as `npm run takeover -- --offset` does).
 */
export function parseTakeovers(spec: string): { grammar: boolean; count: number }[] {
  return spec.split(",").map((part) => {
    const m = /^\s*(free|grammar):(\d+)\s*$/.exec(part);
    if (!m || Number(m[2]) < 1)
      throw new Error(
        `bad --takeovers part '${part}': write free:N or grammar:N, e.g. free:96,grammar:96`,
      );
    return { grammar: m[1] === "grammar", count: Number(m[2]) };
  });
}

export interface StageSummary {
  out: string;
  backend: string;
  preset: string;
  params: number;
  vocab: number;
  episodes: number;
  sequences: number;
  tokens: number;
  steps: number;
  seconds: number;
  finalLoss: number;
  tokensPerSecond: number;
}

/**
 * Runs one SFT stage with `values` (stage and run options over their defaults; `out` required)
 * on the backend already selected (`backendName`, for the summary). Writes out/manifest.json,
 * out/weights.bin (every --save-every steps and at the end) and out/sft.jsonl.
 */
export async function runStage(
  given: Values,
  backendName: string,
  log: (msg: string) => void,
): Promise<StageSummary> {
  const v: Values = { ...STAGE_DEFAULTS, ...RUN_DEFAULTS, ...given };
  const out = v.out;
  if (typeof out !== "string") throw new Error("--out is required");
  const seed = num("seed", v.seed);
  const preset = v.preset as PresetName;
  if (!(preset in PRESETS))
    throw new Error(`--preset must be one of ${Object.keys(PRESETS).join(", ")}`);
  const minutes = num("minutes", v.minutes, false);
  const decodingFlag = v.decoding === undefined ? undefined : parseDecoding(v.decoding);
  const demoSeeds = Array.from(
    { length: num("demo-seeds", v["demo-seeds"]) },
    (_, i) => seed * 1000 + i,
  );
  // The train split's tasks plus its scenarios re-instantiated on `--worlds` fresh worlds, one
  // worker thread per demonstrator seed (the same episodes in the same order as one thread).
  const worlds = num("worlds", v.worlds);
  const flaws = parseFlaws(v.flaws as string);
  // --template-weights: the data mix (each named template's episodes K times), checked up front.
  const weights =
    typeof v["template-weights"] === "string"
      ? parseTemplateWeights(v["template-weights"])
      : undefined;
  // --average-from: tail averaging from this step on (checked here, before anything runs).
  const averageFrom =
    v["average-from"] === undefined ? undefined : num("average-from", v["average-from"]);
  if (averageFrom !== undefined) checkAverageFrom(averageFrom, "--average-from");
  const initParsed = typeof v.init === "string" ? await readCheckpointDir(v.init) : null;
  const init = initParsed ? modelFromCheckpoint(initParsed) : null;
  // --split-quote: an older vocabulary (its checkpoint) with TokenizerSpec.splitQuote on;
  // --split-plural: with the relationships' plurals as singular + s (TokenizerSpec.plurals).
  const quoted = v["split-quote"] ? init?.tokenizer.withSplitQuote() : init?.tokenizer;
  const fromInit = v["split-plural"] === true ? quoted?.withPlurals(RELATIONSHIP_PLURALS) : quoted;
  // --context-aware: the demonstrator forgets a password or access token that has left the
  // policy's context (the context rule over this vocabulary) and looks it up again.
  let policy: PolicyContext | undefined;
  if (v["context-aware"]) {
    if (!init || !fromInit)
      throw new Error("--context-aware needs an --init checkpoint (its vocabulary and context)");
    policy = { tokenizer: fromInit, context: init.model.config.context };
  }
  const t0Demos = performance.now();
  const demos = await collectDemonstrationsParallel(worlds, demoSeeds, flaws, policy);
  log(`demonstrations: ${((performance.now() - t0Demos) / 1000).toFixed(0)}s`);
  // --episodes FILE[,FILE...] (.jsonl, or .jsonl.gz): more episodes to imitate (e.g. `npm run takeover`'s expert
  // takeovers of the policy's own rollouts), read and checked before anything trains.
  const extra =
    typeof v.episodes === "string"
      ? (
          await Promise.all(
            v.episodes.split(",").map(async (f) => {
              const raw = await readFile(f);
              const text = (f.endsWith(".gz") ? gunzipSync(raw) : raw).toString("utf8");
              return parseEpisodeLines(text, f);
            }),
          )
        ).flat()
      : [];
  if (extra.length) log(`${extra.length} more episodes from ${v.episodes}`);
  demos.push(...extra);
  const docs = APPS.flatMap((a) => a.apis.map(formatApiDoc));
  // --decoding: how the policy is meant to act (the checkpoint's meta.decoding); default: the init's.
  const decoding = decodingFlag ?? initParsed?.manifest.meta?.decoding;
  if (typeof v.takeovers === "string") {
    if (!init) throw new Error("--takeovers needs an --init checkpoint: the policy that plays");
    const parts = parseTakeovers(v.takeovers);
    const takeoverSeed = num("takeover-seed", v["takeover-seed"] ?? "0");
    const tasks = pretrainTasks(TAKEOVER_WORLDS).map((t) => t.id);
    let offset = 0;
    for (const { grammar, count } of parts) {
      const t0Roll = performance.now();
      const b = await collectTakeovers(init.model, init.tokenizer, tasks, count, {
        seed: takeoverSeed,
        offset,
        temperature: 1,
        ...(grammar ? { grammar: new ActionGrammar(init.tokenizer) } : {}),
      });
      offset += count;
      demos.push(...b.episodes);
      log(
        `takeovers (${grammar ? "grammar" : "free"}): ${b.rollouts.length} rollouts (${b.rollouts.filter((r) => r.success).length} solved), ${b.episodes.length}/${b.tried} takeovers solved, ${((performance.now() - t0Roll) / 1000).toFixed(0)}s`,
      );
    }
  }
  const tok =
    fromInit ??
    Tokenizer.build([...episodeCorpus(demos), ...docs], {
      maxWords: num("max-words", v["max-words"]),
      minCount: 3,
      splitQuote: v["split-quote"] as boolean,
      ...(v["split-plural"] === true ? { plurals: RELATIONSHIP_PLURALS } : {}),
    });
  const back = v["prev-token"] === undefined ? undefined : num("prev-token", v["prev-token"]);
  if (back !== undefined && (!Number.isInteger(back) || back < 0 || back > MAX_PREV_TOKEN))
    throw new Error(`--prev-token must be an integer from 0 to ${MAX_PREV_TOKEN}`);
  const prevToken = back as PrevToken | undefined;
  const copyContinue = v["copy-continue"] as boolean;
  const copyTarget = v["copy-target"] === true; // no default: recipes' stage.json stay as they were
  const nLayers = v.layers === undefined ? undefined : num("layers", v.layers);
  if (nLayers !== undefined && !init) throw new Error("--layers grows an --init checkpoint");
  let model: GPT;
  if (
    init &&
    ((prevToken !== undefined && prevToken !== init.model.config.prevToken) ||
      (copyContinue && !init.model.config.copyContinue) ||
      (copyTarget && !init.model.config.copyTarget) ||
      (nLayers !== undefined && nLayers !== init.model.config.nLayers))
  ) {
    // Grow the initial model: the new parameters add nothing yet (same function).
    model = GPT.grow(
      init.model,
      {
        ...(prevToken !== undefined ? { prevToken } : {}),
        ...(copyContinue ? { copyContinue } : {}),
        ...(copyTarget ? { copyTarget } : {}),
        ...(nLayers !== undefined ? { nLayers } : {}),
      },
      seed,
    );
    init.model.dispose();
  } else if (init) model = init.model;
  else {
    const cfg = {
      ...presetConfig(preset, tok.size),
      copyHead: (v["copy-head"] as boolean) || copyContinue || copyTarget,
      copyContinue,
      copyTarget,
    };
    model = new GPT(prevToken === undefined ? cfg : { ...cfg, prevToken }, seed);
  }
  if (v["copy-emit"] === true && !model.config.copyEmit?.length) {
    // The closing quote of a single-quoted value writes the action's `"` (ModelConfig.copyEmit).
    if (!model.config.copyHead) throw new Error("--copy-emit needs a copy head (--copy-head)");
    const mapped = new GPT(validateConfig({ ...model.config, copyEmit: tok.quoteEmit() }), seed);
    mapped.copyFrom(model);
    model.dispose();
    model = mapped;
  }
  const config = model.config;
  // An action longer than the per-turn cap is one the policy could never sample: such episodes
  // (a few long notes and messages) are left out.
  let skipped = 0;
  const episodeTokens: number[] = []; // each imitated episode's whole length, before the context rule
  const mix = weights ? repeatByTemplate(demos, weights) : demos;
  if (weights)
    log(
      `template weights ${[...weights].map(([t, k]) => `${t}=${k}`).join(",")}: ${mix.length} episodes to imitate`,
    );
  const segs = mix.flatMap((d) => {
    const t = tokenizeEpisode(tok, d);
    if (t.turns.some((x) => x.action.length > MAX_ACTION_TOKENS)) {
      skipped++;
      return [];
    }
    episodeTokens.push(
      t.turns.reduce((n, x) => n + x.action.length + x.observation.length, t.prompt.length),
    );
    return segments(t.prompt, t.turns, contextBudget(config.context));
  });
  if (skipped) log(`left out ${skipped} episodes with an action over ${MAX_ACTION_TOKENS} tokens`);
  const tokens = segs.reduce((s, x) => s + x.tokens.length, 0);
  const episodeMean = episodeTokens.reduce((a, b) => a + b, 0) / Math.max(1, episodeTokens.length);
  const episodeMax = episodeTokens.reduce((a, b) => Math.max(a, b), 0);
  log(
    `${demos.length} demonstrator episodes (${((100 * demos.filter((d) => d.success).length) / demos.length).toFixed(1)}% successful), ${segs.length} sequences, ${tokens} tokens (an episode: mean ${Math.round(episodeMean)}, max ${episodeMax}); vocabulary ${tok.size}; ${model.paramCount()} parameters`,
  );
  await mkdir(out, { recursive: true });
  const curve = join(out, "sft.jsonl");
  await writeFile(curve, "");
  const epochs = num("epochs", v.epochs);
  const save = async (step: number) => {
    const { manifest, blob } = await saveCheckpoint(model, tok, {
      createdAt: new Date().toISOString(),
      step,
      notes:
        epochs === 0
          ? `no SFT step (--epochs 0): the --init checkpoint${[
              v["copy-emit"] === true ? " with the copy head's quote map (--copy-emit)" : "",
              v["split-plural"] === true ? " with the relationships' plurals (--split-plural)" : "",
            ].join("")}`
          : `SFT on ${demos.length} demonstrator episodes (train, flaws ${v.flaws}), preset ${preset}, seed ${seed}`,
      ...(decoding ? { decoding } : {}),
    });
    await saveCheckpointToDir(out, manifest, blob);
  };
  const saveEvery = num("save-every", v["save-every"]);
  const maxSteps = num("max-steps", v["max-steps"]);
  if (v["lr-final"] !== undefined && maxSteps === 0 && minutes === 0)
    log("note: --lr-final needs --max-steps N or --minutes M to decay over; the lr stays at --lr");
  const t0 = performance.now();
  const steps = await sft(model, segs, {
    epochs,
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
    ...(typeof v["train-only"] === "string" ? { trainOnly: commaList(v["train-only"]) } : {}),
    ...(typeof v.sgd === "string"
      ? {
          sgd: {
            names: commaList(v.sgd),
            lr: num("sgd-lr", v["sgd-lr"], false),
          },
        }
      : {}),
    ...(averageFrom !== undefined ? { averageFrom } : {}),
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
  if (averageFrom !== undefined && steps.length >= averageFrom)
    log(
      `saved the mean of the weights after steps ${averageFrom}-${steps.length} (--average-from)`,
    );
  await save(steps.length);
  const last = steps.slice(-10);
  const summary: StageSummary = {
    out,
    backend: backendName,
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
  model.dispose();
  return summary;
}
