import { type ActionGrammar, grammarMask } from "../agent/grammar";
import type { Trajectory } from "../agent/modelRollout";
import type { GPT } from "../model/gpt";
import { scoreSequences } from "../model/score";
import { microBatches, trajectoryRows } from "./rows";

/** Per action token of one turn, after an update: what the episode player colours by. */
export interface TurnTokenStats {
  /** pi_new / pi_old = exp(log pi_theta - log pi_old): the PPO importance ratio (loop.md, eq. PPO). */
  ratio: number[];
  /** Entropy (nats) of the policy's next-token distribution at this token, under the new weights. */
  entropy: number[];
  /** True where the clipped surrogate is the active (flat) branch: the token gets no gradient. */
  clipped: boolean[];
}

/**
 * Whether PPO's clip is active for a token: min(r A, clip(r, lo, hi) A) takes the clipped branch
 * (zero gradient) iff A > 0 and r > hi, or A < 0 and r < lo (loop.md, eq. PPO clip).
 */
export function isClipped(
  ratio: number,
  advantage: number,
  bounds: [number, number] | null,
): boolean {
  if (!bounds) return false;
  return (advantage > 0 && ratio > bounds[1]) || (advantage < 0 && ratio < bounds[0]);
}

/**
 * Scores the very token ids each trajectory sampled (same context rule as training) with the
 * current weights, and returns per turn, per action token, the ratio to the sampling log-prob,
 * the entropy and whether the clip is active. Rows are scored in micro-batches of at most
 * `microTokens` padded tokens (the trainer's bound on memory). A grammar-constrained policy
 * (`grammar`) is scored under its grammar, as the trainer scores it.
 */
export async function trajectoryTokenStats(
  model: GPT,
  trajectories: readonly Trajectory[],
  advantages: readonly number[],
  bounds: [number, number] | null,
  microTokens: number,
  grammar?: ActionGrammar | null,
): Promise<TurnTokenStats[][]> {
  const context = model.config.context;
  const out: TurnTokenStats[][] = trajectories.map((t) =>
    t.turns.map((turn) => ({
      ratio: new Array<number>(turn.action.length).fill(1),
      entropy: new Array<number>(turn.action.length).fill(0),
      clipped: new Array<boolean>(turn.action.length).fill(false),
    })),
  );
  const rows = trajectories.map((t, i) => trajectoryRows(t, i, context));
  for (const batch of microBatches(rows, context, microTokens, true)) {
    const scores = await scoreSequences(
      model,
      batch.map((r) => r.tokens),
      grammar
        ? {
            masks: batch.map((r) => r.mask),
            restrict: (targets, mask, B, T, V) => grammarMask(grammar, targets, mask, B, T, V),
          }
        : {},
    );
    batch.forEach((row, b) => {
      const lp = scores.logprobs[b] as Float32Array;
      const en = scores.entropies[b] as Float32Array;
      const adv = advantages[row.traj] ?? 0;
      row.turnOf.forEach((turn, k) => {
        const n = row.indexInTurn[k] as number;
        const stats = out[row.traj]?.[turn];
        if (turn < 0 || row.mask[k] !== 1 || !stats || n >= stats.ratio.length) return;
        const ratio = Math.exp((lp[k] as number) - (row.sampleLogp[k] as number));
        stats.ratio[n] = ratio;
        // entropies[k] is the entropy of the distribution token k was drawn from.
        stats.entropy[n] = en[k] as number;
        stats.clipped[n] = isClipped(ratio, adv, bounds);
      });
    });
  }
  return out;
}
