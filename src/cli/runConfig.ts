/**
 * A run's config.json (written by `npm run train`), read back to resume the run: every field the
 * trainer needs is checked, and a file that is not such a config is refused naming the field.
 */
import { SPLITS, type Split } from "../env";
import type { TrainerOptions } from "../rl/trainer";

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
