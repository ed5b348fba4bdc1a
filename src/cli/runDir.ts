/**
 * A run directory of `npm run train`, read back to resume the run: its config.json (every field the
 * trainer needs is checked, and a file that is not such a config is refused naming the field), its
 * latest checkpoint with a trainer state, and its jsonl logs up to that checkpoint. Node only.
 */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { SPLITS, type Split } from "../env";
import type { TrainerOptions } from "../rl/trainer";
import type { TrainerState } from "../rl/trainerState";
import { readTrainerStateDir, STATE_FILE } from "../rl/trainerStateFs";

export interface RunConfig {
  options: TrainerOptions;
  /** Iterations the run was asked for. */
  iterations: number;
  /** The checkpoint the run started from (GRPO's reference policy). */
  checkpoint: string;
  /** The tasks it drew from (a resumed trainer must draw the same). */
  trainTasks: string[];
}

const isRecord = (x: unknown): x is Record<string, unknown> =>
  typeof x === "object" && x !== null && !Array.isArray(x);

export function parseRunConfig(json: unknown, where: string): RunConfig {
  const fail = (msg: string): never => {
    throw new Error(`${where}: ${msg}`);
  };
  if (!isRecord(json)) return fail("not a JSON object");
  const c = json;
  const number = (key: string, from: Record<string, unknown> = c): number => {
    const x = from[key];
    return typeof x === "number" && Number.isFinite(x) ? x : fail(`${key} must be a number`);
  };
  const string = (key: string): string => {
    const x = c[key];
    return typeof x === "string" ? x : fail(`${key} must be a string`);
  };
  const algorithm = isRecord(c.algorithm) ? c.algorithm : fail("algorithm must be an object");
  const clip = algorithm.clip;
  if (clip !== "paper" && clip !== "code") fail("algorithm.clip must be paper or code");
  const evalSplit = string("evalSplit");
  if (!(SPLITS as readonly string[]).includes(evalSplit))
    fail(`evalSplit must be one of ${SPLITS.join(", ")}`);
  if (typeof c.grammar !== "boolean") fail("grammar must be true or false");
  const trainTasks = c.trainTasks;
  if (!Array.isArray(trainTasks) || !trainTasks.every((t) => typeof t === "string"))
    fail("trainTasks must be a list of task ids");
  const options: TrainerOptions = {
    algo: string("algo"),
    overrides: {
      eps: number("eps", algorithm),
      clip: clip as "paper" | "code",
      epochs: number("epochs", algorithm),
      minibatch: number("minibatch", algorithm),
      klCoef: number("klCoef", algorithm),
      filter: number("filter", algorithm),
    },
    seed: number("seed"),
    tasks: number("tasks"),
    k: number("k"),
    lr: number("lr"),
    weightDecay: number("weightDecay"),
    clipNorm: number("clipNorm"),
    temperature: number("temperature"),
    evalEvery: number("evalEvery"),
    evalSplit: evalSplit as Split,
    evalTemperature: number("evalTemperature"),
    evalLimit: number("evalLimit"),
    maxTurns: number("maxTurns"),
    maxActionTokens: number("maxActionTokens"),
    rolloutBatch: number("rolloutBatch"),
    microTokens: number("microTokens"),
    abortLogRatio: number("abortLogRatio"),
    grammar: c.grammar as boolean,
    // Runs from before the task pool drew from every task.
    pool: c.pool === undefined ? 0 : number("pool"),
  };
  return {
    options,
    iterations: number("iterations"),
    checkpoint: string("checkpoint"),
    trainTasks: trainTasks as string[],
  };
}

/** The run in dir to resume: its config, and its latest checkpoint that has a trainer state. */
export async function resumable(
  dir: string,
): Promise<{ run: RunConfig; from: string; state: TrainerState }> {
  const configPath = join(dir, "config.json");
  let text: string;
  try {
    text = await readFile(configPath, "utf8");
  } catch {
    throw new Error(`--resume: no ${configPath}: not a run directory of npm run train`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new Error(`${configPath} is not valid JSON: ${(e as Error).message}`);
  }
  const run = parseRunConfig(json, configPath);
  let latest: { from: string; iteration: number } | null = null;
  for (const name of await readdir(dir)) {
    if (!/^(iter-\d+|final)$/.test(name)) continue;
    let iteration: unknown;
    try {
      iteration = JSON.parse(await readFile(join(dir, name, STATE_FILE), "utf8")).iteration;
    } catch {
      continue; // a checkpoint saved without a trainer state (before they existed)
    }
    if (typeof iteration === "number" && (!latest || iteration > latest.iteration))
      latest = { from: join(dir, name), iteration };
  }
  if (!latest)
    throw new Error(
      `--resume: no checkpoint in ${dir} has a trainer state (${STATE_FILE}); runs save one with each iter-N (--save-every) and final`,
    );
  return { run, from: latest.from, state: await readTrainerStateDir(latest.from) };
}

/** The lines of a run's jsonl file up to an iteration (and no final evaluations). */
export async function linesUpTo(path: string, iteration: number): Promise<string> {
  let text = "";
  try {
    text = await readFile(path, "utf8");
  } catch {
    // not written yet
  }
  const keep = text
    .split("\n")
    .filter((line, i) => {
      if (!line.trim()) return false;
      let x: { iteration?: number; final?: boolean };
      try {
        x = JSON.parse(line);
      } catch {
        throw new Error(`${path}: line ${i + 1} is not JSON; fix or remove it to resume`);
      }
      return (x.iteration ?? 0) <= iteration && !x.final;
    })
    .map((line) => `${line}\n`)
    .join("");
  return keep;
}
