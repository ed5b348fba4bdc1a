import type { Task } from "../env";
import { Rng } from "../env/rng";
import { type Flaws, NO_FLAWS, ScriptActor } from "./scriptActor";
import { ScriptPolicy } from "./scripted";
import type { ContextTracker } from "./transcript";

/** Default flaw rates: tuned so the demonstrator solves roughly 30-50% of train tasks. */
export const DEFAULT_FLAWS: Flaws = {
  skipDoc: 0.6,
  wrongArgName: 0.5,
  firstPageOnly: 0.7,
  assume: 0.6,
  giveUp: 0.6,
  slip: 0,
  swap: 0,
};

/**
 * Parses flaw rates written as `name=rate,...` (e.g. `giveUp=0.2,assume=0.3`), a preset name
 * (`default`, `mild`, `none`), or a preset then changes (`mild,slip=0`). Throws with a message naming the bad part; unnamed flaws keep
 * their default rates.
 */
export function parseFlaws(spec: string): Partial<Flaws> {
  const parts = spec.split(",");
  const preset = FLAW_PRESETS[(parts[0] as string).trim()];
  const out: Partial<Flaws> = preset ? { ...preset } : {};
  for (const part of preset ? parts.slice(1) : parts) {
    const m = /^\s*(\w+)\s*=\s*([0-9.]+)\s*$/.exec(part);
    if (!m) throw new Error(`bad flaw '${part}': write name=rate, e.g. giveUp=0.2`);
    const [, name, value] = m as unknown as [string, string, string];
    if (!(name in DEFAULT_FLAWS))
      throw new Error(`unknown flaw '${name}': one of ${Object.keys(DEFAULT_FLAWS).join(", ")}`);
    const rate = Number(value);
    if (!(rate >= 0 && rate <= 1)) throw new Error(`flaw rate '${value}' must be in [0, 1]`);
    out[name as keyof Flaws] = rate;
  }
  return out;
}

/**
 * Milder rates, for behaviour cloning: every flaw still shows, but the demonstrator solves about
 * 75% of train (the default rates: about 40%), so that an imperfect imitator still solves some;
 * and one call in ten slips first (then recovers), so that it learns to recover from its own.
 */
export const MILD_FLAWS: Flaws = {
  skipDoc: 0.5,
  wrongArgName: 0.3,
  firstPageOnly: 0.3,
  assume: 0.3,
  giveUp: 0.2,
  slip: 0.1,
  swap: 0,
};

const FLAW_PRESETS: Record<string, Flaws> = {
  default: DEFAULT_FLAWS,
  mild: MILD_FLAWS,
  none: NO_FLAWS,
};

/**
 * The demonstrator: the expert with seeded flaws (skipping docs, wrong argument names, first page
 * only, assumed values, giving up after errors). Same task, seed and rates: same episode.
 */
export function createDemonstrator(
  task: Task,
  seed = 0,
  flaws: Partial<Flaws> = {},
  context: ContextTracker | null = null,
): ScriptPolicy {
  const rates = { ...DEFAULT_FLAWS, ...flaws };
  return new ScriptPolicy(
    "demonstrator",
    task,
    new ScriptActor(rates, Rng.derive(seed, task.id), context),
  );
}
