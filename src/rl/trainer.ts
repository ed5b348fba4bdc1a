import * as tf from "@tensorflow/tfjs";
import { ActionGrammar, grammarMask } from "../agent/grammar";
import { type RolloutProgress, rollout, type Trajectory } from "../agent/modelRollout";
import { listTasks, type Split } from "../env";
import { Rng } from "../env/rng";
import type { GPT } from "../model/gpt";
import { AdamW, type OptimizerState } from "../model/optim";
import { type TokenBatch, tokenLogProbs, tokenLogProbsAndEntropy } from "../model/score";
import { emptyTimeSplit, type TimeSplit, timed } from "../model/timeSplit";
import type { Tokenizer } from "../model/tokenizer";
import { ADVANTAGES, histogram, keepMask, leaveOneOut } from "./advantages";
import { type Algorithm, type AlgorithmOverrides, getAlgorithm } from "./algorithms";
import { type BehaviourStats, behaviourStats } from "./behaviour";
import { type EvalResult, episodeText, evaluatePolicy } from "./evaluate";
import {
  clipBounds,
  clippedPolicyLoss,
  type Grouping,
  imitationLoss,
  meanEntropy,
  referenceKl,
  valueLoss,
} from "./losses";
import {
  agentTokensByTrajectory,
  microBatches,
  type PackedRows,
  packRows,
  type TrainRow,
  trajectoryRows,
} from "./rows";
import { type TaskOutcome, taskOutcomes } from "./taskOutcomes";
import { type TurnTokenStats, trajectoryTokenStats } from "./tokenStats";
import { type StateTensor, type TrainerState, TrainerStateError } from "./trainerState";

export interface TrainerOptions {
  algo: string;
  overrides?: AlgorithmOverrides;
  seed: number;
  /** Tasks per iteration (paper: 40). */
  tasks: number;
  /** Rollouts per task (paper: 6). */
  k: number;
  /** Constant AdamW learning rate. */
  lr: number;
  weightDecay?: number;
  clipNorm?: number;
  /** Sampling temperature of the training rollouts (paper: 1). */
  temperature?: number;
  /** Task ids to train on (default: the train split's difficulty 1 and 2 tasks, as the paper). */
  trainTasks?: string[];
  /**
   * Train on only this many of them, a seeded choice (0 = all): with pool <= tasks every iteration
   * plays the same tasks, so their reward shows the policy learning them.
   */
  pool?: number;
  /** Evaluate every N iterations (0 = never). */
  evalEvery?: number;
  evalSplit?: Split;
  /** Evaluation temperature (default 0, greedy). */
  evalTemperature?: number;
  /** Only the first N tasks of the eval split (0 = all). */
  evalLimit?: number;
  /** Overrides the turn budget (tests use short episodes). */
  maxTurns?: number;
  maxActionTokens?: number;
  /** Episodes decoded together (0: every live episode of an iteration, one wave). */
  rolloutBatch?: number;
  /** Padded tokens per micro-batch (gradients are accumulated over a minibatch's micro-batches). */
  microTokens?: number;
  /** Abort the iteration when a trajectory's |mean log-ratio| exceeds this (reference code: 20). */
  abortLogRatio?: number;
  /** After each update, score the iteration's rollouts again for per-token ratio, entropy, clip (the page's player). */
  tokenStats?: boolean;
  /**
   * A grammar-constrained policy: every action is sampled under the action grammar
   * (src/agent/grammar.ts), and scored under it (the same tokens masked), so ratios stay exact.
   */
  grammar?: boolean;
  /**
   * Leave trajectories with an advantage of exactly 0 out of scoring and backward where they add
   * nothing to the gradient (default true; false computes them anyway: same update, more work).
   */
  skipZeroAdvantage?: boolean;
  /**
   * The frozen reference policy of an algorithm with a KL term (GRPO); default: a copy of `model`
   * as given. A resumed run passes its original start policy. The trainer takes ownership.
   */
  reference?: GPT;
}

export interface RolloutGroup {
  taskId: string;
  /** Indexes into the iteration's trajectories. */
  members: number[];
  rewards: number[];
  /** Leave-one-out baseline of each rollout: mean of the other K-1 returns. */
  baselines: number[];
  advantages: number[];
  kept: boolean[];
}

export interface IterationMetrics {
  iteration: number;
  algo: string;
  meanReward: number;
  successRate: number;
  /** Share of rollouts dropped before the update (|A| < filter, or unsuccessful for expert iteration). */
  filteredShare: number;
  /** Share of groups whose K returns were all equal. */
  flatGroupShare: number;
  advantage: {
    mean: number;
    std: number;
    min: number;
    max: number;
    histogram: number[];
    edges: number[];
  };
  policyLoss: number;
  valueLoss: number;
  clipFraction: number;
  approxKl: number;
  entropy: number;
  gradNorm: number;
  /** Max |trainer log-prob - sampler log-prob| over agent tokens, before any update. */
  samplerLogpDiff: number;
  /** Mean ratio and clip fraction over agent tokens at the first minibatch (1 and 0: nothing has moved yet). */
  firstRatio: number;
  firstClipFraction: number;
  steps: number;
  skippedSteps: number;
  aborted: boolean;
  stopped: boolean;
  sampleTokensPerSecond: number;
  trainTokensPerSecond: number;
  rolloutSeconds: number;
  trainSeconds: number;
  /** Where the iteration's time went (absent in runs recorded before it was measured). */
  time?: TimeSplit;
  seconds: number;
  memoryBytes: number;
  numTensors: number;
  behaviour: BehaviourStats;
  /** The learning rate this iteration's update used (it can change between iterations on the page). */
  lr?: number;
  /**
   * Each task of the iteration: its K rollouts' mean reward and successes (what the page's task
   * grid shows over iterations). Absent in runs recorded before 2026-12-05.
   */
  tasks?: TaskOutcome[];
}

export type TrainerEvent =
  | { type: "iteration-start"; iteration: number; tasks: string[] }
  /** After each round of decoding: the rollouts so far, and the turn each stepped episode took. */
  | ({ type: "rollout-progress"; iteration: number; seconds: number } & RolloutProgress)
  | {
      type: "rollouts";
      iteration: number;
      trajectories: Trajectory[];
      groups: RolloutGroup[];
      seconds: number;
    }
  | {
      type: "minibatch";
      iteration: number;
      epoch: number;
      index: number;
      count: number;
      loss: number;
      clipFraction: number;
      approxKl: number;
      gradNorm: number;
      applied: boolean;
    }
  | { type: "token-stats"; iteration: number; stats: TurnTokenStats[][] }
  | { type: "iteration"; metrics: IterationMetrics }
  | { type: "eval"; iteration: number; result: EvalResult }
  | { type: "checkpoint"; iteration: number; where: string }
  | { type: "warning"; iteration: number; message: string };

export type TrainerListener = (event: TrainerEvent) => void;

/** What the scoring pass knows about a row before any update. */
interface Scored {
  packed: PackedRows;
  rows: TrainRow[];
  old: Float32Array;
  ref?: Float32Array;
  values?: Float32Array;
}

/**
 * Gives the event loop a turn (a macrotask): in a worker, the page's messages (pause, reset) and
 * the batched events to it go through here, between decoding batches and minibatches, instead of
 * waiting for the whole iteration (awaiting tensors' data resolves in microtasks on wasm and cpu).
 */
const nextTask = (): Promise<void> =>
  new Promise((resolve) => {
    // A browser clamps chained timers to 4 ms, so there a message; Node's setTimeout(0) is not
    // clamped, and it keeps a timer set before it (a test's) first.
    if ("process" in globalThis || typeof MessageChannel !== "function") {
      setTimeout(resolve, 0);
      return;
    }
    const { port1, port2 } = new MessageChannel();
    port1.onmessage = () => {
      port1.close();
      resolve();
    };
    port2.postMessage(null);
  });

const mean = (xs: readonly number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

/**
 * The training loop: rollouts, advantages, minibatch updates, metrics and events. Drive it with
 * `iterate()` (one iteration), or `run(n)` with pause / resume / step / stop from outside.
 */
export class Trainer {
  readonly algorithm: Algorithm;
  readonly options: Required<Omit<TrainerOptions, "overrides" | "trainTasks" | "reference">>;
  /** The action grammar of a grammar-constrained policy (options.grammar), else null. */
  readonly actionGrammar: ActionGrammar | null;
  readonly trainTasks: string[];
  iteration = 0;
  private readonly optimizer: AdamW;
  private readonly listeners = new Set<TrainerListener>();
  private readonly reference: GPT | null;
  private readonly critic: { w: tf.Variable; b: tf.Variable } | null;
  private lastGood: tf.Tensor[];
  private taskOrder: string[] = [];
  private paused = false;
  private stepsLeft = 0;
  private stopRequested = false;
  /** A gate of the iteration in progress let it through on a step (see run). */
  private stepTaken = false;
  private iterating = false;
  /** The running iteration's time split (its parts add to it). */
  private time: TimeSplit | undefined;
  private wake: (() => void) | null = null;

  constructor(
    readonly model: GPT,
    readonly tokenizer: Tokenizer,
    options: TrainerOptions,
  ) {
    this.algorithm = getAlgorithm(options.algo, options.overrides);
    this.options = {
      algo: options.algo,
      seed: options.seed,
      tasks: options.tasks,
      k: options.k,
      lr: options.lr,
      weightDecay: options.weightDecay ?? 0.01,
      clipNorm: options.clipNorm ?? 1,
      temperature: options.temperature ?? 1,
      evalEvery: options.evalEvery ?? 0,
      evalSplit: options.evalSplit ?? "dev",
      evalTemperature: options.evalTemperature ?? 0,
      evalLimit: options.evalLimit ?? 0,
      maxTurns: options.maxTurns ?? 0,
      maxActionTokens: options.maxActionTokens ?? 0,
      rolloutBatch: options.rolloutBatch ?? 0,
      // 2048 (one full-context row): after a round of rollouts has grown and fragmented wasm's
      // 4 GB heap, the shipped 2048-context copy-head base's gradients at 4096 padded tokens ran
      // out of it ("memory access out of bounds"), and at 8192 so did a fresh heap.
      microTokens: options.microTokens ?? 2048,
      abortLogRatio: options.abortLogRatio ?? 20,
      tokenStats: options.tokenStats ?? false,
      grammar: options.grammar ?? false,
      pool: options.pool ?? 0,
      skipZeroAdvantage: options.skipZeroAdvantage ?? true,
    };
    this.actionGrammar = this.options.grammar ? new ActionGrammar(tokenizer) : null;
    if (!(Number.isInteger(options.k) && options.k >= 2))
      throw new Error("k must be an integer >= 2");
    if (!(Number.isInteger(options.tasks) && options.tasks >= 1))
      throw new Error("tasks must be a positive integer");
    if (!(options.lr > 0)) throw new Error("lr must be positive");
    const all =
      options.trainTasks ??
      listTasks("train")
        .filter((t) => t.difficulty <= 2)
        .map((t) => t.id);
    const pool = this.options.pool;
    if (!(Number.isInteger(pool) && pool >= 0)) throw new Error("pool must be an integer >= 0");
    this.trainTasks = pool > 0 ? Rng.derive(options.seed, "task pool").sample(all, pool) : all;
    if (this.trainTasks.length === 0) throw new Error("no training tasks");
    this.optimizer = new AdamW({
      lr: options.lr,
      weightDecay: this.options.weightDecay,
      clipNorm: this.options.clipNorm,
    });
    this.reference = this.algorithm.klCoef > 0 ? (options.reference ?? model.clone()) : null;
    if (!this.reference) options.reference?.dispose();
    this.critic =
      this.algorithm.advantage === "critic"
        ? {
            w: tf.variable(tf.zeros([model.config.dModel, 1]), true),
            b: tf.variable(tf.zeros([1]), true),
          }
        : null;
    this.lastGood = this.variables().map((v) => tf.clone(v));
  }

  on(listener: TrainerListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(event: TrainerEvent): void {
    for (const l of this.listeners) l(event);
  }

  private variables(): tf.Variable[] {
    const vs = this.model.trainableVariables();
    return this.critic ? [...vs, this.critic.w, this.critic.b] : vs;
  }

  set lr(value: number) {
    this.options.lr = value;
    this.optimizer.lr = value;
  }

  /** The next T tasks: a seeded shuffle of the pool, walked through before reshuffling. */
  private nextTasks(): string[] {
    const out: string[] = [];
    const rng = Rng.derive(this.options.seed, `tasks ${this.iteration}`);
    while (out.length < this.options.tasks) {
      if (this.taskOrder.length === 0) this.taskOrder = rng.shuffle(this.trainTasks.slice());
      out.push(this.taskOrder.shift() as string);
    }
    return out;
  }

  // --- control ------------------------------------------------------------------------------

  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    this.stepsLeft = 0;
    this.wake?.();
  }

  /**
   * While paused: run to the end of an iteration, then pause again (the next one when paused
   * between iterations, the one in progress when paused midway).
   */
  step(): void {
    this.stepsLeft = 1;
    this.wake?.();
  }

  /** Stop at the next batch of decoding or minibatch; `run` then returns. */
  stop(): void {
    this.stopRequested = true;
    this.wake?.();
  }

  get isPaused(): boolean {
    return this.paused;
  }

  /** Between the start and the end of `iterate` (its rollouts, caches and old log-probs are live). */
  get inIteration(): boolean {
    return this.iterating;
  }

  private async gate(): Promise<void> {
    await nextTask();
    while (this.paused && this.stepsLeft === 0 && !this.stopRequested)
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    this.wake = null;
    if (this.paused && this.stepsLeft > 0) this.stepTaken = true;
  }

  /** Runs up to n iterations, honouring pause / step / stop. */
  async run(n: number): Promise<void> {
    this.stopRequested = false;
    for (let i = 0; i < n; i++) {
      this.stepTaken = false;
      await this.gate();
      if (this.stopRequested) return;
      await this.iterate();
      // The step that let this iteration start or go on from a pause is spent (a step given
      // after a pause that no gate held, e.g. during the evaluation, is the next iteration's).
      if (this.stepTaken) this.stepsLeft = 0;
      if (this.stopRequested) return;
    }
  }

  // --- one iteration -------------------------------------------------------------------------

  async iterate(): Promise<IterationMetrics> {
    this.iterating = true;
    try {
      return await this.iterateOnce();
    } finally {
      this.iterating = false;
    }
  }

  private async iterateOnce(): Promise<IterationMetrics> {
    const t0 = performance.now();
    const it = this.iteration + 1;
    const algo = this.algorithm;
    const { k } = this.options;
    const tasks = this.nextTasks();
    this.emit({ type: "iteration-start", iteration: it, tasks });

    const ids = tasks.flatMap((id) => Array.from({ length: k }, () => id));
    const time = emptyTimeSplit();
    this.time = time;
    const trajectories = await rollout(this.model, this.tokenizer, ids, {
      timings: time,
      temperature: this.options.temperature,
      seed: Rng.derive(this.options.seed, `rollouts ${it}`).int(0, 2 ** 31 - 1),
      mode: "train",
      batchSize: this.options.rolloutBatch,
      ...(this.options.maxTurns ? { maxTurns: this.options.maxTurns } : {}),
      ...(this.options.maxActionTokens ? { maxActionTokens: this.options.maxActionTokens } : {}),
      ...(this.actionGrammar ? { grammar: this.actionGrammar } : {}),
      onRound: async (p) => {
        this.emit({
          type: "rollout-progress",
          iteration: it,
          seconds: (performance.now() - t0) / 1000,
          ...p,
        });
        // A pause holds the rollouts here (their caches kept) until play, step or stop.
        await this.gate();
      },
      stop: () => this.stopRequested,
    });
    const rolloutSeconds = (performance.now() - t0) / 1000;
    const rewards = trajectories.map((t) => t.evaluation.reward);

    // Advantages per group of K (one scalar per trajectory; the critic's come per token later).
    const advantages = new Array<number>(trajectories.length).fill(0);
    const kept = new Array<boolean>(trajectories.length).fill(false);
    const groups: RolloutGroup[] = tasks.map((taskId, g) => {
      const members = Array.from({ length: k }, (_, j) => g * k + j);
      const rs = members.map((m) => rewards[m] as number);
      const adv =
        algo.advantage === "critic" ? rs.map(() => 0) : ADVANTAGES[algo.advantage](rs.slice());
      const keep =
        algo.objective === "imitation"
          ? members.map((m) => (trajectories[m] as Trajectory).evaluation.success)
          : algo.filter > 0
            ? keepMask(adv, algo.filter)
            : members.map(() => true);
      members.forEach((m, j) => {
        advantages[m] = adv[j] as number;
        kept[m] = keep[j] as boolean;
      });
      const loo = leaveOneOut(rs);
      return {
        taskId,
        members,
        rewards: rs,
        baselines: rs.map((r, j) => r - (loo[j] as number)),
        advantages: adv,
        kept: keep,
      };
    });
    this.emit({ type: "rollouts", iteration: it, trajectories, groups, seconds: rolloutSeconds });

    const t1 = performance.now();
    // Stopped during the rollouts (a reset): nothing is scored or trained.
    const keptIdx = this.stopRequested ? [] : trajectories.map((_, i) => i).filter((i) => kept[i]);
    const context = this.model.config.context;
    // The minibatches of every epoch: all kept rollouts shuffled together, `size` at a time (the
    // fixed loss divisor).
    const rng = Rng.derive(this.options.seed, `minibatches ${it}`);
    const size = algo.minibatch > 0 ? algo.minibatch : Math.max(1, keptIdx.length);
    const epochs = Array.from({ length: algo.epochs }, () => {
      const order = rng.shuffle(keptIdx.slice());
      return Array.from({ length: Math.ceil(order.length / size) }, (_, m) =>
        order.slice(m * size, (m + 1) * size),
      );
    });
    // A trajectory with A = 0 exactly adds exactly nothing to a clipped surrogate with no KL or
    // critic term (min(r·0, clip(r)·0) = 0, Eq. 3): RLOO, REINFORCE and GRPO without KL on groups
    // whose rollouts all scored the same. It keeps its place in its minibatch (same composition,
    // same divisor) but is neither scored nor trained, unless its whole minibatch is such (then one
    // is, so that the AdamW step still happens): the same update up to float rounding (micro-batches
    // pack other rows), for less compute.
    const inert = (i: number) =>
      this.options.skipZeroAdvantage &&
      algo.objective === "clipped" &&
      algo.klCoef === 0 &&
      algo.advantage !== "critic" &&
      advantages[i] === 0;
    const computed = new Set(keptIdx.filter((i) => !inert(i)));
    for (const mb of epochs.flat())
      if (mb.length > 0 && !mb.some((i) => computed.has(i))) computed.add(mb[0] as number);
    const rowsOf = new Map<number, TrainRow[]>();
    for (const i of keptIdx)
      if (computed.has(i)) rowsOf.set(i, trajectoryRows(trajectories[i] as Trajectory, i, context));

    const stats = {
      losses: [] as number[],
      valueLosses: [] as number[],
      clip: [] as number[],
      kl: [] as number[],
      grad: [] as number[],
      steps: 0,
      skipped: 0,
      aborted: false,
      stopped: this.stopRequested,
      trainTokens: 0,
      firstRatio: 1,
      firstClip: 0,
    };
    // Old log-probs (and reference log-probs, values) recomputed by the trainer before any update,
    // by row (a trajectory's rows may be in different micro-batches: splitRows).
    const scored = new Map<TrainRow, Scored>();
    let samplerLogpDiff = 0;
    const entropies: number[] = [];
    for (const mb of microBatches(
      [...rowsOf.values()],
      context,
      this.options.microTokens,
      this.splitRows,
    )) {
      await nextTask();
      if (this.stopRequested) break;
      const s = await timed(time, "scoring", () => this.score(mb));
      stats.trainTokens += s.scored.packed.B * s.scored.packed.T;
      entropies.push(s.entropy);
      const { packed, old } = s.scored;
      for (let j = 0; j < packed.mask.length; j++)
        if (packed.mask[j])
          samplerLogpDiff = Math.max(
            samplerLogpDiff,
            Math.abs((old[j] as number) - (packed.sampleLogp[j] as number)),
          );
      for (const r of mb) scored.set(r, s.scored);
    }
    if (this.options.temperature === 1 && samplerLogpDiff > 1e-2)
      this.emit({
        type: "warning",
        iteration: it,
        message: `trainer and sampler log-probs differ by up to ${samplerLogpDiff.toExponential(2)}`,
      });

    let first = true;
    outer: for (const [epoch, minibatches] of epochs.entries()) {
      const count = minibatches.length;
      for (const [m, members] of minibatches.entries()) {
        await this.gate();
        if (this.stopRequested) {
          stats.stopped = true;
          break outer;
        }
        const active = members.filter((i) => rowsOf.has(i));
        const r = await this.update(active, rowsOf, scored, advantages, rewards, size, first);
        stats.trainTokens += r.tokens;
        if (first) {
          stats.firstRatio = r.meanRatio;
          stats.firstClip = r.clipFraction;
        }
        first = false;
        if (r.aborted) {
          stats.aborted = true;
          this.emit({
            type: "warning",
            iteration: it,
            message: `iteration aborted: a trajectory's |mean log-ratio| reached ${r.maxAbsLogRatio.toFixed(1)}`,
          });
          break outer;
        }
        stats.steps++;
        if (!r.applied) {
          stats.skipped++;
          this.restore();
          this.emit({
            type: "warning",
            iteration: it,
            message: "non-finite loss or gradient: step skipped, last good weights restored",
          });
        } else {
          stats.losses.push(r.loss);
          stats.valueLosses.push(r.valueLoss);
          stats.clip.push(r.clipFraction);
          stats.kl.push(r.approxKl);
          stats.grad.push(r.gradNorm);
        }
        this.emit({
          type: "minibatch",
          iteration: it,
          epoch,
          index: m,
          count,
          loss: r.loss,
          clipFraction: r.clipFraction,
          approxKl: r.approxKl,
          gradNorm: r.gradNorm,
          applied: r.applied,
        });
      }
    }
    if (stats.skipped === 0 && !stats.aborted) this.snapshot();
    const trainSeconds = (performance.now() - t1) / 1000;

    const keptAdv = keptIdx.map((i) => advantages[i] as number);
    const advMean = mean(keptAdv);
    const hist = histogram(
      advantages.filter((_, i) => algo.advantage !== "critic" || kept[i]),
      20,
      -1,
      1,
    );
    const sampledTokens = trajectories.reduce(
      (s, t) => s + t.turns.reduce((a, x) => a + x.action.length, 0),
      0,
    );
    const memory = tf.memory();
    this.iteration = it;
    const metrics: IterationMetrics = {
      iteration: it,
      algo: algo.name,
      meanReward: mean(rewards),
      successRate: mean(trajectories.map((t) => (t.evaluation.success ? 1 : 0))),
      filteredShare: 1 - keptIdx.length / trajectories.length,
      flatGroupShare: mean(groups.map((g) => (g.rewards.every((r) => r === g.rewards[0]) ? 1 : 0))),
      advantage: {
        mean: advMean,
        std: Math.sqrt(mean(keptAdv.map((a) => (a - advMean) ** 2))),
        min: keptAdv.length ? Math.min(...keptAdv) : 0,
        max: keptAdv.length ? Math.max(...keptAdv) : 0,
        histogram: hist.counts,
        edges: hist.edges,
      },
      policyLoss: mean(stats.losses),
      valueLoss: mean(stats.valueLosses),
      clipFraction: mean(stats.clip),
      approxKl: mean(stats.kl),
      entropy: mean(entropies),
      gradNorm: mean(stats.grad),
      samplerLogpDiff,
      firstRatio: stats.firstRatio,
      firstClipFraction: stats.firstClip,
      steps: stats.steps,
      skippedSteps: stats.skipped,
      aborted: stats.aborted,
      stopped: stats.stopped,
      sampleTokensPerSecond: sampledTokens / Math.max(rolloutSeconds, 1e-9),
      trainTokensPerSecond: stats.trainTokens / Math.max(trainSeconds, 1e-9),
      rolloutSeconds,
      trainSeconds,
      time,
      seconds: (performance.now() - t0) / 1000,
      memoryBytes: memory.numBytes,
      numTensors: memory.numTensors,
      behaviour: behaviourStats(trajectories.map(episodeText)),
      tasks: taskOutcomes(trajectories),
      lr: this.options.lr,
    };
    if (this.options.tokenStats && !this.stopRequested) {
      const bounds = algo.objective === "clipped" ? clipBounds(algo.eps, algo.clip) : null;
      const tokenStats = await trajectoryTokenStats(
        this.model,
        trajectories,
        advantages,
        bounds,
        this.options.microTokens,
        this.actionGrammar,
      );
      this.emit({ type: "token-stats", iteration: it, stats: tokenStats });
    }
    this.emit({ type: "iteration", metrics });
    if (this.options.evalEvery > 0 && it % this.options.evalEvery === 0 && !this.stopRequested)
      await this.evaluate();
    return metrics;
  }

  /** Dev (or another split) TGC/SGC with the current weights; emits an eval event. */
  async evaluate(): Promise<EvalResult> {
    const { result } = await evaluatePolicy(this.model, this.tokenizer, this.options.evalSplit, {
      temperature: this.options.evalTemperature,
      seed: Rng.derive(this.options.seed, "eval").int(0, 2 ** 31 - 1),
      limit: this.options.evalLimit,
      batchSize: this.options.rolloutBatch,
      ...(this.options.maxTurns ? { maxTurns: this.options.maxTurns } : {}),
      ...(this.options.maxActionTokens ? { maxActionTokens: this.options.maxActionTokens } : {}),
      ...(this.actionGrammar ? { grammar: this.actionGrammar } : {}),
      onRound: nextTask,
      stop: () => this.stopRequested,
    });
    // Stopped midway (a reset): unplayed episodes count as failures, so it is no evaluation.
    if (!this.stopRequested) this.emit({ type: "eval", iteration: this.iteration, result });
    return result;
  }

  /** Records where a checkpoint of this iteration was saved (the caller saves it). */
  checkpointSaved(where: string): void {
    this.emit({ type: "checkpoint", iteration: this.iteration, where });
  }

  // --- pieces --------------------------------------------------------------------------------

  /**
   * Whether a long trajectory's rows (context windows) may go to different micro-batches: always,
   * except for a per-trajectory ratio (one ratio from all its tokens). Keeping them together
   * exhausted wasm's heap on 40-turn rollouts.
   */
  private get splitRows(): boolean {
    return this.algorithm.ratio !== "trajectory";
  }

  private grouping(p: PackedRows): Grouping {
    return { trajectoryOfRow: p.trajectoryOfRow, turnOfToken: p.turnOf };
  }

  /**
   * The rows to score, at their agent targets only, with a grammar-constrained policy's allowed
   * tokens there [B * T * V].
   */
  private batch(p: PackedRows): TokenBatch {
    const { ids, targets, mask: want, B, T } = p;
    if (!this.actionGrammar) return { ids, targets, B, T, want };
    const V = this.model.config.vocabSize;
    const allowed = grammarMask(this.actionGrammar, targets, want, B, T, V);
    return { ids, targets, B, T, want, allowed };
  }

  /** Values V(s_t) of every column [B, T] from the final hidden state. */
  private values(hidden: tf.Tensor3D): tf.Tensor2D {
    const critic = this.critic as { w: tf.Variable; b: tf.Variable };
    const [B, T, d] = hidden.shape;
    return tf
      .matMul(hidden.reshape([B * T, d]), critic.w)
      .add(critic.b)
      .reshape([B, T]);
  }

  /** The scoring pass (no gradient): old log-probs, entropy, reference log-probs, values. */
  private async score(rows: TrainRow[]): Promise<{ scored: Scored; entropy: number }> {
    const context = this.model.config.context;
    const packed = packRows(rows, context);
    const { B, T } = packed;
    const batch = this.batch(packed);
    const out = tf.tidy(() => {
      const mask = tf.tensor2d(packed.mask, [B, T]);
      const r = tokenLogProbsAndEntropy(this.model, batch);
      const extra: tf.Tensor[] = [];
      if (this.reference) extra.push(tokenLogProbs(this.reference, batch).logp);
      if (this.critic) extra.push(this.values(r.hidden));
      return [r.logp, meanEntropy(r.entropy, mask), ...extra];
    });
    const data = (await Promise.all(out.map((t) => t.data()))) as Float32Array[];
    tf.dispose(out);
    const old = data[0] as Float32Array;
    const entropy = (data[1] as Float32Array)[0] as number;
    const ref = this.reference ? data[2] : undefined;
    const values = this.critic ? data[this.reference ? 3 : 2] : undefined;
    const scored: Scored = {
      packed,
      rows,
      old,
      ...(ref ? { ref } : {}),
      ...(values ? { values } : {}),
    };
    return { scored, entropy };
  }

  /** One minibatch: gradients accumulated over its micro-batches, one AdamW step. */
  private async update(
    members: number[],
    rowsOf: Map<number, TrainRow[]>,
    scored: Map<TrainRow, Scored>,
    advantages: number[],
    rewards: number[],
    divisor: number,
    first: boolean,
  ): Promise<{
    loss: number;
    valueLoss: number;
    clipFraction: number;
    approxKl: number;
    meanRatio: number;
    gradNorm: number;
    applied: boolean;
    aborted: boolean;
    maxAbsLogRatio: number;
    tokens: number;
  }> {
    const algo = this.algorithm;
    const context = this.model.config.context;
    const vars = this.variables();
    const split = this.splitRows;
    const memberRows = members.map((i) => rowsOf.get(i) as TrainRow[]);
    const parts = microBatches(memberRows, context, this.options.microTokens, split);
    const trajectoryTokens = agentTokensByTrajectory(memberRows.flat());
    // Per trajectory: its mean log-ratio, summed over the parts its rows went to.
    const logRatioOf = new Map<number, number>();
    let grads: tf.NamedTensorMap | null = null;
    let loss = 0;
    let vloss = 0;
    let clipSum = 0;
    let klSum = 0;
    let ratioSum = 0;
    let agentTokens = 0;
    let tokens = 0;
    for (const rows of parts) {
      const packed = packRows(rows, context);
      const { B, T } = packed;
      tokens += B * T;
      // Old log-probs of these rows, gathered from the scoring pass (rows keep their packing there).
      const old = new Float32Array(B * T);
      const ref = new Float32Array(B * T);
      const adv = new Float32Array(B * T);
      rows.forEach((row, b) => {
        const s = scored.get(row) as Scored;
        const sb = s.rows.indexOf(row);
        for (let c = 0; c < T; c++) {
          const inScored = c < s.packed.T;
          old[b * T + c] = inScored ? (s.old[sb * s.packed.T + c] as number) : 0;
          ref[b * T + c] = inScored && s.ref ? (s.ref[sb * s.packed.T + c] as number) : 0;
          // The critic's advantage is per token: A_t = R - V_old(s_t) (GAE, gamma = lambda = 1).
          adv[b * T + c] =
            algo.advantage === "critic"
              ? (rewards[row.traj] as number) -
                (inScored && s.values ? (s.values[sb * s.packed.T + c] as number) : 0)
              : (advantages[row.traj] as number);
        }
      });
      const n = packed.mask.reduce((a, x) => a + x, 0);
      agentTokens += n;
      const kept: tf.Tensor[] = [];
      const batch = this.batch(packed);
      const backwardStart = performance.now();
      const { value, grads: g } = tf.variableGrads(() => {
        const mask = tf.tensor2d(packed.mask, [B, T]);
        const r = tokenLogProbs(this.model, batch);
        const grouping: Grouping = {
          ...this.grouping(packed),
          ...(split
            ? { agentTokensOfRow: rows.map((row) => trajectoryTokens.get(row.traj) ?? 0) }
            : {}),
        };
        if (algo.objective === "imitation") {
          const l = imitationLoss(r.logp, mask, divisor, grouping);
          kept.push(tf.keep(tf.zeros([5])), tf.keep(tf.zeros([B])));
          return l;
        }
        const p = clippedPolicyLoss(
          {
            logp: r.logp,
            oldLogp: tf.tensor2d(old, [B, T]),
            mask,
            advantages: tf.tensor2d(adv, [B, T]),
          },
          { eps: algo.eps, clip: algo.clip, divisor, ratio: algo.ratio, grouping },
        );
        let total: tf.Scalar = p.loss;
        let v: tf.Scalar = tf.scalar(0);
        if (this.reference && algo.klCoef > 0)
          total = tf.add(
            total,
            tf.mul(
              referenceKl(r.logp, tf.tensor2d(ref, [B, T]), mask, divisor, grouping),
              algo.klCoef,
            ),
          ) as tf.Scalar;
        if (this.critic) {
          v = valueLoss(
            this.values(r.hidden),
            tf.tensor1d(rows.map((row) => rewards[row.traj] as number)),
            mask,
            divisor,
            grouping,
          );
          total = tf.add(total, tf.mul(v, algo.valueCoef)) as tf.Scalar;
        }
        kept.push(
          tf.keep(
            tf.stack(
              [p.loss, p.clipFraction, p.approxKl, p.meanRatio, v].map((x) => x.reshape([])),
            ),
          ),
          tf.keep(p.meanLogRatio),
        );
        return total;
      }, vars);
      const [totalV, statsV, logRatioV] = await Promise.all([
        value.data(),
        (kept[0] as tf.Tensor).data(),
        (kept[1] as tf.Tensor).data(),
      ]);
      tf.dispose([value, ...kept]);
      if (this.time) this.time.backward += (performance.now() - backwardStart) / 1000;
      const st = statsV as Float32Array;
      loss += algo.objective === "imitation" ? (totalV[0] as number) : (st[0] as number);
      vloss += st[4] ?? 0;
      clipSum += (st[1] as number) * n;
      klSum += (st[2] as number) * n;
      ratioSum += (st[3] as number) * n;
      // Rows of one trajectory in this part carry the same value: count it once per part.
      const seen = new Set<number>();
      rows.forEach((row, b) => {
        if (seen.has(row.traj)) return;
        seen.add(row.traj);
        const x = (logRatioOf.get(row.traj) ?? 0) + ((logRatioV as Float32Array)[b] as number);
        logRatioOf.set(row.traj, x);
      });
      if (!grads) grads = g;
      else {
        const sum: tf.NamedTensorMap = {};
        for (const name of Object.keys(g))
          sum[name] = tf.add(grads[name] as tf.Tensor, g[name] as tf.Tensor);
        tf.dispose([...Object.values(grads), ...Object.values(g)]);
        grads = sum;
      }
    }
    const nTok = Math.max(agentTokens, 1);
    const maxAbsLogRatio = Math.max(0, ...[...logRatioOf.values()].map(Math.abs));
    const summary = {
      loss,
      valueLoss: vloss,
      clipFraction: clipSum / nTok,
      approxKl: klSum / nTok,
      meanRatio: algo.objective === "imitation" ? 1 : ratioSum / nTok,
      maxAbsLogRatio,
      tokens,
    };
    if (!grads) return { ...summary, gradNorm: 0, applied: true, aborted: false };
    if (!first && maxAbsLogRatio > this.options.abortLogRatio) {
      tf.dispose(Object.values(grads));
      return { ...summary, gradNorm: 0, applied: false, aborted: true };
    }
    if (!Number.isFinite(loss)) {
      tf.dispose(Object.values(grads));
      return { ...summary, gradNorm: Number.NaN, applied: false, aborted: false };
    }
    const r = await timed(this.time, "optimizer", () =>
      this.optimizer.apply(grads as tf.NamedTensorMap, vars),
    );
    return { ...summary, gradNorm: r.gradNorm, applied: r.applied, aborted: false };
  }

  /**
   * What this run needs besides the policy's weights to continue exactly where it is now (between
   * iterations): see trainerState.ts.
   */
  async exportState(): Promise<TrainerState> {
    const vars = this.variables();
    const opt = await this.optimizer.exportState(vars);
    const tensors: StateTensor[] = [];
    for (const x of opt.moments) {
      const shape = (vars[x.index] as tf.Variable).shape;
      tensors.push({ name: `m/${x.index}`, shape, data: x.m });
      tensors.push({ name: `v/${x.index}`, shape, data: x.v });
    }
    if (this.critic)
      for (const [name, v] of [
        ["critic/w", this.critic.w],
        ["critic/b", this.critic.b],
      ] as const)
        tensors.push({ name, shape: v.shape, data: (await v.data()) as Float32Array });
    return {
      algo: this.algorithm.name,
      seed: this.options.seed,
      iteration: this.iteration,
      taskOrder: [...this.taskOrder],
      optimizerStep: opt.step,
      tensors,
    };
  }

  /**
   * Continues from exportState of the same run (same algorithm, seed and model; the caller loads
   * the weights saved with it). Everything is checked before anything changes; a state that does
   * not fit is refused with a TrainerStateError naming what is wrong.
   */
  async importState(state: TrainerState): Promise<void> {
    const fail = (msg: string): never => {
      throw new TrainerStateError(`trainer state: ${msg}`);
    };
    if (state.algo !== this.algorithm.name)
      fail(`it is a ${state.algo} run's, this trainer runs ${this.algorithm.name}`);
    if (state.seed !== this.options.seed)
      fail(`it is seed ${state.seed}'s, this trainer has seed ${this.options.seed}`);
    const pool = new Set(this.trainTasks);
    const stray = state.taskOrder.find((t) => !pool.has(t));
    if (stray !== undefined) fail(`task ${stray} is not in this trainer's task pool`);
    const vars = this.variables();
    const byName = new Map(state.tensors.map((t) => [t.name, t]));
    const moments: OptimizerState["moments"] = [];
    for (const [i, v] of vars.entries()) {
      const m = byName.get(`m/${i}`);
      const s = byName.get(`v/${i}`);
      if (!m && !s) continue;
      if (!m || !s) return fail(`variable ${i} has only one of its two moments`);
      for (const t of [m, s])
        if (t.shape.join() !== v.shape.join())
          fail(`${t.name} has shape [${t.shape}], variable ${i} has [${v.shape}]`);
      moments.push({ index: i, m: m.data, v: s.data });
    }
    const known = new Set([
      ...moments.flatMap((x) => [`m/${x.index}`, `v/${x.index}`]),
      ...(this.critic ? ["critic/w", "critic/b"] : []),
    ]);
    const unknown = state.tensors.find((t) => !known.has(t.name));
    if (unknown) fail(`${unknown.name} is of no variable of this trainer`);
    const critic = this.critic
      ? ([
          [this.critic.w, byName.get("critic/w")],
          [this.critic.b, byName.get("critic/b")],
        ] as const)
      : [];
    for (const [v, t] of critic)
      if (!t || t.shape.join() !== v.shape.join())
        fail(`the critic's ${v.name} is missing or misshapen`);
    await this.optimizer.importState(vars, { step: state.optimizerStep, moments });
    tf.tidy(() => {
      for (const [v, t] of critic) v.assign(tf.tensor((t as StateTensor).data, v.shape));
    });
    this.iteration = state.iteration;
    this.taskOrder = [...state.taskOrder];
    this.snapshot();
  }

  private snapshot(): void {
    tf.dispose(this.lastGood);
    this.lastGood = this.variables().map((v) => tf.clone(v));
  }

  private restore(): void {
    this.variables().forEach((v, i) => {
      v.assign(this.lastGood[i] as tf.Tensor);
    });
  }

  dispose(): void {
    this.optimizer.dispose();
    tf.dispose(this.lastGood);
    this.reference?.dispose();
    if (this.critic) tf.dispose([this.critic.w, this.critic.b]);
    this.listeners.clear();
  }
}
