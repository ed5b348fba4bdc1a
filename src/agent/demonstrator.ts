import type { Task } from "../env";
import { Rng } from "../env/rng";
import { type Flaws, ScriptActor } from "./scriptActor";
import { ScriptPolicy } from "./scripted";

/** Default flaw rates: tuned so the demonstrator solves roughly 30-50% of train tasks. */
export const DEFAULT_FLAWS: Flaws = {
  skipDoc: 0.6,
  wrongArgName: 0.5,
  firstPageOnly: 0.7,
  assume: 0.6,
  giveUp: 0.6,
};

/**
 * The demonstrator: the expert with seeded flaws (skipping docs, wrong argument names, first page
 * only, assumed values, giving up after errors). Same task, seed and rates: same episode.
 */
export function createDemonstrator(task: Task, seed = 0, flaws: Partial<Flaws> = {}): ScriptPolicy {
  const rates = { ...DEFAULT_FLAWS, ...flaws };
  return new ScriptPolicy("demonstrator", task, new ScriptActor(rates, Rng.derive(seed, task.id)));
}
