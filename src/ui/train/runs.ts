/**
 * Runs kept across reloads in IndexedDB (idb-keyval, database "loop-playground-runs"), and their
 * JSON export/import. An imported file is checked in full before anything is stored.
 */
import { createStore, del, entries, set, type UseStore } from "idb-keyval";
import type { BehaviourStats } from "../../rl/behaviour";
import type { EvalResult } from "../../rl/evaluate";
import type { IterationMetrics } from "../../rl/trainer";
import {
  DEFAULT_SETTINGS,
  parseSetting,
  SETTING_RULES,
  type Settings,
  type TrajectoryView,
} from "../../worker/protocol";

export const RUN_FORMAT = "loop-playground-run";

export interface RunRecord {
  format: typeof RUN_FORMAT;
  id: string;
  name: string;
  createdAt: string;
  settings: Settings;
  metrics: IterationMetrics[];
  evals: { iteration: number; result: EvalResult }[];
  /** A few episodes of the last iteration. */
  samples: TrajectoryView[];
}

let store: UseStore | undefined;
const db = () => {
  store ??= createStore("loop-playground-runs", "runs");
  return store;
};

export async function saveRun(run: RunRecord): Promise<void> {
  await set(run.id, run, db());
}

export async function deleteRun(id: string): Promise<void> {
  await del(id, db());
}

/** Every stored run that still reads as a run, newest first. */
export async function listRuns(): Promise<RunRecord[]> {
  const all = await entries<string, unknown>(db());
  return all
    .map(([, v]) => checkRun(v))
    .filter((r): r is { ok: true; run: RunRecord } => r.ok)
    .map((r) => r.run)
    .sort((a, b) => b.createdAt.localeCompare(a.createdAt));
}

const isObject = (x: unknown): x is Record<string, unknown> =>
  typeof x === "object" && x !== null && !Array.isArray(x);

/** What the page reads of an iteration's metrics (the charts of a run continued or overlaid). */
const METRIC_FIELDS = [
  "iteration",
  "meanReward",
  "successRate",
  "filteredShare",
  "policyLoss",
  "clipFraction",
  "approxKl",
  "entropy",
  "steps",
  "sampleTokensPerSecond",
  "trainTokensPerSecond",
] as const satisfies readonly (keyof IterationMetrics)[];
const BEHAVIOUR_FIELDS = [
  "docLookupsPerRollout",
  "assumptionsPerRollout",
  "giveUpRate",
  "turnsPerEpisode",
] as const satisfies readonly (keyof BehaviourStats)[];

/** The first of these fields that is not a finite number ("no object" if x is none), or null. */
function missingNumbers(x: unknown, fields: readonly string[]): string | null {
  if (!isObject(x)) return "no object";
  const bad = fields.find((f) => typeof x[f] !== "number" || !Number.isFinite(x[f]));
  return bad === undefined ? null : `${bad} is not a number`;
}

/** Checks a run read from a file or the database; says what is wrong. */
export function checkRun(x: unknown): { ok: true; run: RunRecord } | { ok: false; error: string } {
  if (!isObject(x)) return { ok: false, error: "a run file is a JSON object" };
  if (x.format !== RUN_FORMAT)
    return { ok: false, error: `not a run file (format is not "${RUN_FORMAT}")` };
  for (const key of ["id", "name", "createdAt"] as const)
    if (typeof x[key] !== "string" || (x[key] as string).length === 0)
      return { ok: false, error: `the run has no ${key}` };
  if (!isObject(x.settings)) return { ok: false, error: "the run has no settings" };
  const settings = x.settings as Record<string, unknown>;
  for (const key of Object.keys(SETTING_RULES) as (keyof Settings)[]) {
    const value = settings[key];
    if (typeof value !== typeof DEFAULT_SETTINGS[key])
      return { ok: false, error: `settings: ${key} is not a ${typeof DEFAULT_SETTINGS[key]}` };
    const r = parseSetting(key, String(value));
    if (!r.ok) return { ok: false, error: `settings: ${r.error}` };
  }
  if (!Array.isArray(x.metrics)) return { ok: false, error: "the run has no metrics list" };
  for (const [i, m] of x.metrics.entries()) {
    const missing =
      missingNumbers(m, METRIC_FIELDS) ?? missingNumbers(m?.behaviour, BEHAVIOUR_FIELDS);
    if (missing !== null)
      return { ok: false, error: `metrics[${i}] is not an iteration's metrics (${missing})` };
    const adv = m.advantage;
    if (!isObject(adv) || !Array.isArray(adv.histogram) || !Array.isArray(adv.edges))
      return { ok: false, error: `metrics[${i}] has no advantage histogram` };
  }
  if (!Array.isArray(x.evals)) return { ok: false, error: "the run has no evals list" };
  for (const [i, e] of x.evals.entries())
    if (
      !isObject(e) ||
      typeof e.iteration !== "number" ||
      !isObject(e.result) ||
      typeof e.result.tgc !== "number"
    )
      return { ok: false, error: `evals[${i}] is not an evaluation` };
  if (!Array.isArray(x.samples)) return { ok: false, error: "the run has no samples list" };
  return { ok: true, run: x as unknown as RunRecord };
}

/** Parses an imported file's text. */
export function parseRunFile(
  text: string,
): { ok: true; run: RunRecord } | { ok: false; error: string } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    return { ok: false, error: `not JSON: ${(e as Error).message}` };
  }
  return checkRun(json);
}
