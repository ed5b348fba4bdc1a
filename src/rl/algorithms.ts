import type { AdvantageKind } from "./advantages";
import type { ClipRange, RatioLevel } from "./losses";

/**
 * The algorithms of the paper's Table 1, each a small set of choices over shared pieces
 * (advantages.ts, losses.ts, the trainer's minibatch loop). Chosen by name from ALGORITHMS.
 */
export interface Algorithm {
  name: string;
  label: string;
  /** One line for the page and the CLI's help. */
  summary: string;
  /** How a group's returns become advantages; "critic" = R - V(s_t) from a learned value head. */
  advantage: AdvantageKind | "critic";
  /** Clipped importance-weighted surrogate, or imitation of the successful rollouts. */
  objective: "clipped" | "imitation";
  ratio: RatioLevel;
  clip: ClipRange;
  eps: number;
  /** Passes over the iteration's rollouts. */
  epochs: number;
  /** Trajectories per minibatch, the fixed loss divisor; 0 = all rollouts in one step. */
  minibatch: number;
  /** Drop rollouts with |A| below this (0 = keep all). */
  filter: number;
  /** Weight of the k3 KL to a frozen copy of the starting policy (0 = no reference model). */
  klCoef: number;
  /** Weight of the critic's value loss (PPO only). */
  valueCoef: number;
}

const LOOP: Algorithm = {
  name: "loop",
  label: "LOOP",
  summary:
    "Leave-one-out advantage, per-token PPO clip, 2 epochs of minibatches; no critic, no reference, no KL",
  advantage: "leave-one-out",
  objective: "clipped",
  ratio: "token",
  clip: "paper",
  eps: 0.1,
  epochs: 2,
  minibatch: 32,
  filter: 0.01,
  klCoef: 0,
  valueCoef: 0,
};

const ON_POLICY = { epochs: 1, minibatch: 0, filter: 0 } as const;

export const ALGORITHMS: Record<string, Algorithm> = {
  loop: LOOP,
  "loop-turn": {
    ...LOOP,
    name: "loop-turn",
    label: "LOOP, per-turn ratio",
    summary: "LOOP with one importance weight per turn (product over the turn's tokens)",
    ratio: "turn",
  },
  "loop-trajectory": {
    ...LOOP,
    name: "loop-trajectory",
    label: "LOOP, per-trajectory ratio",
    summary: "LOOP with one importance weight per trajectory (product over all its agent tokens)",
    ratio: "trajectory",
  },
  "loop-std": {
    ...LOOP,
    name: "loop-std",
    label: "LOOP + std normalization",
    summary: "LOOP with the leave-one-out advantage divided by the group's reward std (RwNorm)",
    advantage: "leave-one-out-std",
  },
  rloo: {
    ...LOOP,
    ...ON_POLICY,
    name: "rloo",
    label: "RLOO",
    summary: "On-policy REINFORCE with the leave-one-out baseline: one gradient step per iteration",
  },
  grpo: {
    ...LOOP,
    name: "grpo",
    label: "GRPO",
    summary:
      "Group std-normalized advantage, per-token clip, k3 KL (0.04) to the frozen start policy",
    advantage: "group-std",
    filter: 0,
    klCoef: 0.04,
  },
  "grpo-nokl": {
    ...LOOP,
    name: "grpo-nokl",
    label: "GRPO without KL",
    summary: "GRPO without the reference model",
    advantage: "group-std",
    filter: 0,
  },
  ppo: {
    ...LOOP,
    name: "ppo",
    label: "PPO, learned critic",
    summary: "Per-token clip with a value head: GAE(gamma = lambda = 1) advantages R - V(s_t)",
    advantage: "critic",
    filter: 0,
    valueCoef: 0.5,
  },
  "expert-iteration": {
    ...LOOP,
    name: "expert-iteration",
    label: "Expert iteration",
    summary:
      "Fine-tune on the iteration's successful rollouts (cross-entropy on their agent tokens)",
    objective: "imitation",
    advantage: "raw",
    filter: 0,
  },
  reinforce: {
    ...LOOP,
    ...ON_POLICY,
    name: "reinforce",
    label: "REINFORCE",
    summary: "On-policy policy gradient with the raw return, no baseline",
    advantage: "raw",
  },
};

export const ALGORITHM_NAMES = Object.keys(ALGORITHMS);

export type AlgorithmOverrides = Partial<
  Pick<Algorithm, "eps" | "clip" | "epochs" | "minibatch" | "filter" | "klCoef">
>;

/** The named algorithm with overrides; unknown names and out-of-range settings are refused. */
export function getAlgorithm(name: string, overrides: AlgorithmOverrides = {}): Algorithm {
  const base = ALGORITHMS[name];
  if (!base) throw new Error(`unknown algorithm '${name}' (one of ${ALGORITHM_NAMES.join(", ")})`);
  const defined = Object.fromEntries(Object.entries(overrides).filter(([, v]) => v !== undefined));
  const a: Algorithm = { ...base, ...defined };
  if (!(a.eps > 0 && a.eps < 1)) throw new Error(`eps must be in (0, 1), got ${a.eps}`);
  if (a.clip !== "paper" && a.clip !== "code") throw new Error(`clip must be paper or code`);
  if (!(Number.isInteger(a.epochs) && a.epochs >= 1)) throw new Error("epochs must be >= 1");
  if (!(Number.isInteger(a.minibatch) && a.minibatch >= 0))
    throw new Error("minibatch must be >= 0");
  if (!(a.filter >= 0)) throw new Error("filter must be >= 0");
  if (!(a.klCoef >= 0)) throw new Error("klCoef must be >= 0");
  return a;
}
