/**
 * Advantages: one scalar per trajectory (per token for the learned critic), pure functions on
 * plain arrays. The equations are those of Chen et al. 2025 (arXiv 2502.01600), see
 * shared/reference/loop.md.
 */

function mean(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}

function groupOf(rewards: readonly number[], who: string): void {
  if (rewards.length < 2) throw new Error(`${who} needs K >= 2 rollouts per task`);
  if (!rewards.every(Number.isFinite)) throw new Error(`${who}: rewards must be finite numbers`);
}

/** LOOP/RLOO: A_k = R_k - 1/(K-1) sum_{i!=k} R_i = K/(K-1) (R_k - mean R) (leave-one-out baseline). */
export function leaveOneOut(rewards: number[]): number[] {
  groupOf(rewards, "leaveOneOut");
  const K = rewards.length;
  const total = rewards.reduce((a, b) => a + b, 0);
  return rewards.map((r) => r - (total - r) / (K - 1));
}

/** Sample standard deviation of a group (Bessel-corrected, as torch.std). */
export function groupStd(rewards: readonly number[]): number {
  const m = mean(rewards);
  return Math.sqrt(rewards.reduce((s, r) => s + (r - m) ** 2, 0) / (rewards.length - 1));
}

/** GRPO: A_k = (R_k - mean R) / (std R + eps); all-equal groups get 0. */
export function groupNormalized(rewards: number[], eps = 1e-6): number[] {
  groupOf(rewards, "groupNormalized");
  const m = mean(rewards);
  const s = groupStd(rewards);
  return rewards.map((r) => (r - m) / (s + eps));
}

/** "LOOP RwNorm" (Table 1, LOOP + std normalization): A_k = leave-one-out A_k / (std R + eps). */
export function leaveOneOutNormalized(rewards: number[], eps = 1e-6): number[] {
  const s = groupStd(rewards);
  return leaveOneOut(rewards).map((a) => a / (s + eps));
}

/** Plain REINFORCE: A_k = R_k (no baseline). */
export function rawReturns(rewards: number[]): number[] {
  if (!rewards.every(Number.isFinite))
    throw new Error("rawReturns: rewards must be finite numbers");
  return rewards.slice();
}

/** LOOP's filter: keep a rollout only if |A_k| >= threshold (0.01 in the paper). */
export function keepMask(advantages: readonly number[], threshold = 0.01): boolean[] {
  return advantages.map((a) => Math.abs(a) >= threshold);
}

/**
 * GAE with gamma = lambda = 1 and the only reward at the end: A_t = sum_l delta_{t+l}
 * telescopes to R - V(s_t) for every agent token t (PPO with a learned critic, Table 1).
 */
export function terminalGae(reward: number, values: readonly number[]): number[] {
  return values.map((v) => reward - v);
}

export type AdvantageKind = "leave-one-out" | "leave-one-out-std" | "group-std" | "raw";

export const ADVANTAGES: Record<AdvantageKind, (rewards: number[]) => number[]> = {
  "leave-one-out": leaveOneOut,
  "leave-one-out-std": leaveOneOutNormalized,
  "group-std": groupNormalized,
  raw: rawReturns,
};

/** Summary of an advantage distribution, for the metrics and the page's histogram. */
export function histogram(
  values: readonly number[],
  bins = 20,
  lo = -1,
  hi = 1,
): { edges: number[]; counts: number[] } {
  const counts = new Array<number>(bins).fill(0);
  for (const v of values) {
    // A value on an edge goes to the bin it starts (leave-one-out advantages often sit on one:
    // 1 - 0.5/5 = 0.9 is 18.999... widths of 0.1 from -1, hence the tolerance).
    const at = ((v - lo) * bins) / (hi - lo);
    const i = Math.min(bins - 1, Math.max(0, Math.floor(at + 1e-9)));
    counts[i] = (counts[i] as number) + 1;
  }
  return { edges: Array.from({ length: bins + 1 }, (_, i) => lo + (i * (hi - lo)) / bins), counts };
}
