import * as tf from "@tensorflow/tfjs";
import type { Segment } from "../agent/transcript";
import { Rng } from "../env/rng";
import { bucketLength } from "../model/buckets";
import type { GPT } from "../model/gpt";
import { AdamW } from "../model/optim";
import { packBatch, type TokenBatch, tokenLogProbs } from "../model/score";

export interface SftOptions {
  epochs: number;
  lr: number;
  /**
   * Linear learning-rate decay: from `lr` at the first step to `lrFinal` at step `decaySteps`,
   * then constant. Default: no decay (constant `lr`).
   */
  lrFinal?: number;
  decaySteps?: number;
  /**
   * Decay by the fraction of a time budget spent instead of by steps (a run stopped by the clock,
   * whose step count is not known ahead): returns 0..1 before each step.
   */
  decayProgress?: () => number;
  /** Padded tokens per minibatch (B x bucket length). */
  batchTokens: number;
  seed: number;
  weightDecay?: number;
  clipNorm?: number;
  /** Called after every step (awaited: it may save a checkpoint). */
  onStep?: (info: SftStep) => void | Promise<void>;
  /** Return true to stop between steps (given the steps done so far). */
  shouldStop?: (stepsDone: number) => boolean;
  /**
   * Weight of an auxiliary language-modelling loss on the world's tokens (prompt and observations),
   * added to the agent-token loss; 0 (default) is plain behaviour cloning. The world's text repeats
   * itself (the task reminder after every observation, names inside emails), which teaches the
   * model to copy from its context: what the agent must do with passwords and access tokens.
   */
  worldWeight?: number;
  /**
   * Train only the parameters with these names or name prefixes (e.g. `copy.` for a new copy-head
   * term, at a learning rate the rest of the model would not take); the rest stay frozen.
   * Default: every parameter.
   */
  trainOnly?: readonly string[];
  /**
   * Parameters (names or name prefixes, as `trainOnly`) trained by plain SGD at `lr` instead of
   * AdamW (see AdamWOptions.sgd): a new term taught by rare, large gradients, beside the rest of
   * the model at the AdamW learning rate. Its lr follows the same schedule (scaled by lr / opts.lr).
   */
  sgd?: { names: readonly string[]; lr: number };
  /**
   * Tail averaging (Polyak-Ruppert; SWA): from this step on (1-based), keep the running mean of
   * the trained parameters after each step, and leave the model with that mean when training
   * ends (its last steps' noise averaged out). Checkpoints saved from `onStep` hold the raw
   * weights. Default: off (the model ends with its last step's weights).
   */
  averageFrom?: number;
}

/** The variables `trainOnly` selects (every one by default); a name that matches none is an error. */
export function selectedVariables(model: GPT, trainOnly?: readonly string[]): tf.Variable[] {
  if (!trainOnly) return model.trainableVariables();
  if (trainOnly.length === 0) throw new Error("trainOnly names no parameter");
  const weights = model.weights();
  for (const p of trainOnly)
    if (!weights.some((w) => w.name.startsWith(p)))
      throw new Error(
        `no parameter named ${JSON.stringify(p)} or starting with it (parameters: ${weights.map((w) => w.name).join(", ")})`,
      );
  return weights.filter((w) => trainOnly.some((p) => w.name.startsWith(p))).map((w) => w.variable);
}

export interface SftStep {
  epoch: number;
  step: number;
  steps: number;
  /** The agent-token cross-entropy (plus worldWeight x the world tokens' one, when set). */
  loss: number;
  gradNorm: number;
  /** The learning rate of this step. */
  lr: number;
  tokens: number;
  seconds: number;
}

/** Cross-entropy on agent tokens only: -sum(mask * log p) / sum(mask) (prompt and observations masked). */
export function maskedNll(model: GPT, batch: TokenBatch, mask: tf.Tensor2D): tf.Scalar {
  const { logp } = tokenLogProbs(model, batch);
  return meanNll(logp, mask);
}

/** -sum(mask * log p) / sum(mask): the mean NLL over the masked-in tokens. */
function meanNll(logp: tf.Tensor2D, mask: tf.Tensor2D): tf.Scalar {
  return tf.neg(tf.sum(tf.mul(logp, mask))).div(tf.maximum(tf.sum(mask), 1)) as tf.Scalar;
}

/** Behaviour cloning plus an auxiliary LM loss: NLL_agent + w * NLL_world, each a mean over its tokens. */
export function sftLoss(
  model: GPT,
  batch: TokenBatch,
  agentMask: tf.Tensor2D,
  worldMask: tf.Tensor2D,
  worldWeight: number,
): tf.Scalar {
  const { logp } = tokenLogProbs(model, batch);
  return tf.add(
    meanNll(logp, agentMask),
    tf.mul(meanNll(logp, worldMask), worldWeight),
  ) as tf.Scalar;
}

/** Groups segments of similar length into minibatches of at most `batchTokens` padded tokens. */
export function makeBatches(
  segments: readonly Segment[],
  context: number,
  batchTokens: number,
): Segment[][] {
  const sorted = segments.slice().sort((a, b) => a.tokens.length - b.tokens.length);
  const batches: Segment[][] = [];
  let current: Segment[] = [];
  for (const s of sorted) {
    const T = bucketLength(Math.max(s.tokens.length - 1, 1), context);
    const maxT = Math.max(
      T,
      ...current.map((c) => bucketLength(Math.max(c.tokens.length - 1, 1), context)),
    );
    if (current.length > 0 && (current.length + 1) * maxT > batchTokens) {
      batches.push(current);
      current = [];
    }
    current.push(s);
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

/** The learning rate at a step (0-based): `lr`, decayed linearly to `lrFinal` over `decaySteps`. */
export function learningRate(
  opts: Pick<SftOptions, "lr" | "lrFinal" | "decaySteps">,
  step: number,
): number {
  if (opts.lrFinal === undefined || !opts.decaySteps) return opts.lr;
  const f = Math.min(1, step / opts.decaySteps);
  return opts.lr + (opts.lrFinal - opts.lr) * f;
}

/** Behaviour cloning: minimise the agent-token cross-entropy over the segments with AdamW. */
export async function sft(
  model: GPT,
  segments: readonly Segment[],
  opts: SftOptions,
): Promise<SftStep[]> {
  if (opts.averageFrom !== undefined) checkAverageFrom(opts.averageFrom);
  const rng = new Rng(opts.seed);
  // A batch with no agent target (only context turns: slips, a takeover's learner turns, split
  // into windows of their own by the context rule) has nothing to imitate; left in, it would be an
  // AdamW step of zero gradient that still moves the weights along the old momentum.
  const batches = makeBatches(segments, model.config.context, opts.batchTokens).filter((b) =>
    b.some((s) => s.agentMask.some((a, i) => i > 0 && a > 0)),
  );
  const vars = selectedVariables(model, opts.trainOnly);
  const sgdVars = opts.sgd
    ? new Set(selectedVariables(model, opts.sgd.names).map((v) => v.name))
    : undefined;
  if (sgdVars && ![...sgdVars].some((n) => vars.some((v) => v.name === n)))
    throw new Error("the sgd parameters are none of the trained ones (trainOnly)");
  const optimizer = new AdamW({
    lr: opts.lr,
    weightDecay: opts.weightDecay ?? 0.01,
    clipNorm: opts.clipNorm ?? 1,
    ...(opts.sgd && sgdVars ? { sgd: { variables: sgdVars, lr: opts.sgd.lr } } : {}),
  });
  const average = opts.averageFrom !== undefined ? new TailAverage(vars, opts.averageFrom) : null;
  const log: SftStep[] = [];
  const steps = batches.length * opts.epochs;
  let step = 0;
  const t0 = performance.now();
  try {
    outer: for (let epoch = 0; epoch < opts.epochs; epoch++)
      for (const batch of rng.shuffle(batches)) {
        if (opts.shouldStop?.(step)) break outer;
        optimizer.lr = opts.decayProgress
          ? learningRate({ ...opts, decaySteps: 1 }, opts.decayProgress())
          : learningRate(opts, step);
        if (opts.sgd && optimizer.options.sgd)
          optimizer.options.sgd = {
            ...optimizer.options.sgd,
            lr: opts.lr > 0 ? (opts.sgd.lr * optimizer.lr) / opts.lr : opts.sgd.lr,
          };
        const packed = packBatch(
          batch.map((s) => s.tokens),
          batch.map((s) => s.agentMask),
          model.config.context,
        );
        const mask = tf.tensor2d(packed.mask, [packed.B, packed.T]);
        const w = opts.worldWeight ?? 0;
        // The world's tokens: every real (non-padding) target that is not an agent token.
        const world =
          w > 0
            ? tf.tensor2d(
                packBatch(
                  batch.map((s) => s.tokens),
                  batch.map((s) => s.agentMask.map((a) => 1 - a)),
                  model.config.context,
                ).mask,
                [packed.B, packed.T],
              )
            : null;
        const r = await optimizer.step(
          () =>
            world
              ? sftLoss(model, packed, mask, world, w)
              : maskedNll(model, { ...packed, want: packed.mask }, mask),
          vars,
        );
        tf.dispose([mask, ...(world ? [world] : [])]);
        const info: SftStep = {
          epoch,
          step: ++step,
          steps,
          loss: r.loss,
          gradNorm: r.gradNorm,
          lr: optimizer.lr,
          tokens: packed.B * packed.T,
          seconds: (performance.now() - t0) / 1000,
        };
        average?.after(step);
        log.push(info);
        await opts.onStep?.(info);
      }
    average?.apply();
  } finally {
    optimizer.dispose();
    average?.dispose();
  }
  return log;
}

/** Refuses a tail-averaging start that is not a step number (1-based); `flag` names it in the message. */
export function checkAverageFrom(step: number, flag = "averageFrom"): void {
  if (!(Number.isInteger(step) && step >= 1))
    throw new Error(`${flag} must be a step number from 1, got ${step}`);
}

/** Polyak-Ruppert tail average of some variables: mean_n = mean_{n-1} + (w_n - mean_{n-1}) / n. */
class TailAverage {
  private means: tf.Tensor[] | null = null;
  private n = 0;

  constructor(
    private readonly vars: readonly tf.Variable[],
    private readonly from: number,
  ) {}

  /** After step `step` (1-based): adds the variables' current values to the mean from `from` on. */
  after(step: number): void {
    if (step < this.from) return;
    this.n++;
    const prev = this.means;
    this.means = this.vars.map((v, i) =>
      prev
        ? tf.tidy(() =>
            tf.add(prev[i] as tf.Tensor, tf.div(tf.sub(v, prev[i] as tf.Tensor), this.n)),
          )
        : tf.clone(v),
    );
    if (prev) tf.dispose(prev);
  }

  /** Sets each variable to its mean (nothing if nothing was added). */
  apply(): void {
    if (!this.means) return;
    for (const [i, m] of this.means.entries()) this.vars[i]?.assign(m);
  }

  dispose(): void {
    if (this.means) tf.dispose(this.means);
    this.means = null;
  }
}
