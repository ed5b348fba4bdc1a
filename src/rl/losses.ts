import * as tf from "@tensorflow/tfjs";

/**
 * Token losses on [B, T] tensors. Rows are token sequences (a trajectory is one row, or a few when
 * the context rule split it); `mask` marks the agent tokens, the only ones that carry loss. Each
 * trajectory's loss is the mean over its own agent tokens, divided by the fixed minibatch size
 * (loop.md, "Averaging"). Call inside tf.tidy or a gradient tape.
 */

/** Where the PPO ratio is clipped: the paper's [1-eps, 1+eps] or the reference code's [1/(1+eps), 1+eps]. */
export type ClipRange = "paper" | "code";

/** Per-token importance weights (LOOP), per turn, or one per trajectory (Table 1 variants). */
export type RatioLevel = "token" | "turn" | "trajectory";

export function clipBounds(eps: number, range: ClipRange): [number, number] {
  if (!(eps > 0)) throw new Error(`eps must be positive, got ${eps}`);
  return range === "paper" ? [1 - eps, 1 + eps] : [1 / (1 + eps), 1 + eps];
}

/** How rows share trajectories and tokens share turns (plain arrays; see `groupTensors`). */
export interface Grouping {
  /** Trajectory index of each row [B]. */
  trajectoryOfRow: number[];
  /** Turn index of each token, -1 off the agent tokens: B arrays of length T. */
  turnOfToken?: Int32Array[];
  /**
   * Agent tokens of each row's whole trajectory [B], when its rows are split across micro-batches
   * (then sums over a trajectory in one call are partial, and the mean needs the full count).
   */
  agentTokensOfRow?: number[];
}

export interface LossInput {
  /** log pi_theta(x_t | x_<t) [B, T] (differentiable). */
  logp: tf.Tensor2D;
  /** log pi_old(x_t | x_<t) [B, T] (constants). */
  oldLogp: tf.Tensor2D;
  /** 1 on agent tokens, 0 on prompt, observations, reminders and padding [B, T]. */
  mask: tf.Tensor2D;
  /** One advantage per row [B] (its trajectory's), or one per token [B, T] (learned critic). */
  advantages: tf.Tensor1D | tf.Tensor2D;
}

export interface PolicyLossOptions {
  eps: number;
  clip: ClipRange;
  /** The fixed minibatch size every trajectory's loss is divided by. */
  divisor: number;
  ratio?: RatioLevel;
  /** Needed when a trajectory spans rows, and for per-turn ratios. */
  grouping?: Grouping;
}

export interface PolicyLoss {
  loss: tf.Scalar;
  /** Share of agent tokens whose clipped term is the active one. */
  clipFraction: tf.Scalar;
  /** k3 estimate of KL(old || new) per agent token: r - 1 - log r, averaged. */
  approxKl: tf.Scalar;
  /** Mean per-token ratio over agent tokens. */
  meanRatio: tf.Scalar;
  /**
   * Per row: its trajectory's mean log-ratio over agent tokens [B] (the abort guard reads it);
   * with split rows (`agentTokensOfRow`) this call's part of it (the parts add up).
   */
  meanLogRatio: tf.Tensor1D;
}

/** [B, B] matrix S with S[i][j] = 1 when rows i and j belong to the same trajectory. */
function sameTrajectory(rows: number[]): tf.Tensor2D {
  const B = rows.length;
  const s = new Float32Array(B * B);
  for (let i = 0; i < B; i++)
    for (let j = 0; j < B; j++) s[i * B + j] = rows[i] === rows[j] ? 1 : 0;
  return tf.tensor2d(s, [B, B]);
}

/** Per row: the sum of x over the agent tokens of its whole trajectory (all its rows) [B]. */
function trajectorySum(x: tf.Tensor2D, mask: tf.Tensor2D, grouping?: Grouping): tf.Tensor1D {
  const rowSums = tf.sum(tf.mul(x, mask), 1) as tf.Tensor1D;
  if (!grouping) return rowSums;
  return tf
    .matMul(sameTrajectory(grouping.trajectoryOfRow), rowSums.expandDims(1))
    .squeeze([1]) as tf.Tensor1D;
}

/** Agent tokens of each row's trajectory [B] (at least 1, so empty rows divide safely). */
export function agentTokens(mask: tf.Tensor2D, grouping?: Grouping): tf.Tensor1D {
  if (grouping?.agentTokensOfRow)
    return tf.tensor1d(grouping.agentTokensOfRow.map((n) => Math.max(n, 1)));
  return tf.maximum(trajectorySum(tf.onesLike(mask), mask, grouping), 1) as tf.Tensor1D;
}

/** sum_rows sum_t mask * x / |a(x)| / divisor: each trajectory's token mean, over the fixed minibatch. */
export function trajectoryMeanSum(
  x: tf.Tensor2D,
  mask: tf.Tensor2D,
  divisor: number,
  grouping?: Grouping,
): tf.Scalar {
  const perRow = tf.div(tf.sum(tf.mul(x, mask), 1), agentTokens(mask, grouping));
  return tf.div(tf.sum(perRow), divisor) as tf.Scalar;
}

/** Log-ratios broadcast at the chosen level: per token, summed over each turn, or over the trajectory. */
export function levelLogRatio(
  logRatio: tf.Tensor2D,
  mask: tf.Tensor2D,
  level: RatioLevel,
  grouping?: Grouping,
): tf.Tensor2D {
  const masked = tf.mul(logRatio, mask) as tf.Tensor2D;
  if (level === "token") return masked;
  if (level === "trajectory") {
    if (grouping?.agentTokensOfRow)
      throw new Error("a trajectory-level ratio needs all of a trajectory's rows in one call");
    // log rho(x) = sum over the trajectory's agent tokens (the ratio is a product over them).
    return tf.mul(trajectorySum(logRatio, mask, grouping).expandDims(1), mask) as tf.Tensor2D;
  }
  const turns = grouping?.turnOfToken;
  if (!turns) throw new Error("per-turn ratios need grouping.turnOfToken");
  const [B, T] = logRatio.shape;
  const G = Math.max(1, ...turns.map((t) => t.reduce((m, x) => Math.max(m, x + 1), 0)));
  const member = new Float32Array(B * G * T);
  turns.forEach((row, b) => {
    row.forEach((g, t) => {
      if (g >= 0) member[(b * G + g) * T + t] = 1;
    });
  });
  const M = tf.tensor3d(member, [B, G, T]);
  const sums = tf.matMul(M, masked.expandDims(2)); // [B, G, 1]: log-ratio of each turn
  return tf.matMul(M, sums, true, false).squeeze([2]) as tf.Tensor2D; // back onto its tokens
}

/**
 * The clipped surrogate, negated for minimisation (loop.md "Objective"):
 *   L = -1/divisor * sum_x 1/|a(x)| sum_{t in a(x)} min(r_t A, clip(r_t, lo, hi) A),
 * which equals min(r_t A, g_eps(A)) with g_eps(A) = A + eps|A| for the paper's range.
 */
export function clippedPolicyLoss(input: LossInput, opts: PolicyLossOptions): PolicyLoss {
  const { logp, oldLogp, mask } = input;
  const [lo, hi] = clipBounds(opts.eps, opts.clip);
  const tokenLogRatio = tf.sub(logp, oldLogp) as tf.Tensor2D;
  const logRatio = levelLogRatio(tokenLogRatio, mask, opts.ratio ?? "token", opts.grouping);
  const ratio = tf.exp(logRatio);
  const A = input.advantages.rank === 1 ? input.advantages.expandDims(1) : input.advantages;
  const unclipped = tf.mul(ratio, A);
  const clipped = tf.mul(tf.clipByValue(ratio, lo, hi), A);
  const objective = tf.minimum(unclipped, clipped) as tf.Tensor2D;
  const loss = tf.neg(trajectoryMeanSum(objective, mask, opts.divisor, opts.grouping)) as tf.Scalar;
  const n = tf.maximum(tf.sum(mask), 1);
  const active = tf.cast(tf.less(clipped, unclipped), "float32");
  const tokenRatio = tf.exp(tokenLogRatio);
  const k3 = tf.sub(tf.sub(tokenRatio, 1), tokenLogRatio);
  return {
    loss,
    clipFraction: tf.div(tf.sum(tf.mul(active, mask)), n) as tf.Scalar,
    approxKl: tf.div(tf.sum(tf.mul(k3, mask)), n) as tf.Scalar,
    meanRatio: tf.div(tf.sum(tf.mul(tokenRatio, mask)), n) as tf.Scalar,
    meanLogRatio: tf.div(
      trajectorySum(tokenLogRatio, mask, opts.grouping),
      agentTokens(mask, opts.grouping),
    ) as tf.Tensor1D,
  };
}

/** GRPO's penalty: k3 estimate of KL(pi_theta || pi_ref) per agent token, exp(q - p) - (q - p) - 1. */
export function referenceKl(
  logp: tf.Tensor2D,
  refLogp: tf.Tensor2D,
  mask: tf.Tensor2D,
  divisor: number,
  grouping?: Grouping,
): tf.Scalar {
  const d = tf.sub(refLogp, logp);
  const k3 = tf.sub(tf.sub(tf.exp(d), d), 1) as tf.Tensor2D;
  return trajectoryMeanSum(k3, mask, divisor, grouping);
}

/** The critic's loss: 1/2 (V(s_t) - R)^2 on agent tokens, averaged like the policy loss. */
export function valueLoss(
  values: tf.Tensor2D,
  returns: tf.Tensor1D,
  mask: tf.Tensor2D,
  divisor: number,
  grouping?: Grouping,
): tf.Scalar {
  const err = tf.mul(tf.square(tf.sub(values, returns.expandDims(1))), 0.5) as tf.Tensor2D;
  return trajectoryMeanSum(err, mask, divisor, grouping);
}

/** Behaviour cloning (expert iteration): -1/divisor sum_x 1/|a(x)| sum_t log p(x_t). */
export function imitationLoss(
  logp: tf.Tensor2D,
  mask: tf.Tensor2D,
  divisor: number,
  grouping?: Grouping,
): tf.Scalar {
  return tf.neg(trajectoryMeanSum(logp, mask, divisor, grouping)) as tf.Scalar;
}

/** Mean entropy over agent tokens (reported, not optimised). */
export function meanEntropy(entropy: tf.Tensor2D, mask: tf.Tensor2D): tf.Scalar {
  return tf.div(tf.sum(tf.mul(entropy, mask)), tf.maximum(tf.sum(mask), 1)) as tf.Scalar;
}
