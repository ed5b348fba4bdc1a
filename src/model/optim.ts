import * as tf from "@tensorflow/tfjs";
import { type AdamWEntry, fusedAdamW, fusedKernelsActive, sumOfSquares } from "./webgpu";

export interface AdamWOptions {
  lr: number;
  beta1?: number;
  beta2?: number;
  eps?: number;
  /** Decoupled weight decay (Loshchilov & Hutter), applied to matrices only. */
  weightDecay?: number;
  /** Clip the global gradient norm to this value (0 = no clipping). */
  clipNorm?: number;
  /**
   * Variables (by tf name) updated by plain SGD at their own learning rate instead of Adam, and not
   * decayed: w <- w - sgdLr * g (g after the global clip). Adam moves every parameter about lr a
   * step whatever its gradient's size, so a term taught by rare, large gradients (a copy score
   * that must learn where a copy stops) moves its rows of frequent, noisy gradients as far; SGD
   * moves each row in proportion to its own gradient. (Tried on the copied-token term, it did not
   * help: the frequent rows' summed gradients still dwarf a rare event's; docs/model.md.)
   */
  sgd?: { variables: ReadonlySet<string>; lr: number };
}

type NamedTensor = { name: string; tensor: tf.Tensor };

/** Adam's step count and the moments of each variable that has them (by index into the step's variables). */
export interface OptimizerState {
  step: number;
  moments: { index: number; m: Float32Array; v: Float32Array }[];
}

export interface StepReport {
  /** Global gradient norm before clipping. */
  gradNorm: number;
  /** False when the gradient was not finite and the step was skipped. */
  applied: boolean;
}

/** The members of tf.train.adam's optimizer that the fused step reads and keeps up to date. */
interface AdamInternals {
  accBeta1: tf.Variable;
  accBeta2: tf.Variable;
  accumulatedFirstMoment: { originalName: string; variable: tf.Variable }[];
  accumulatedSecondMoment: { originalName: string; variable: tf.Variable }[];
  incrementIterations(): void;
}

/**
 * AdamW: Adam on the gradients, then w <- w - lr * wd * w for 2-D weights (decoupled decay, not
 * L2 in the loss), with global gradient-norm clipping. A non-finite gradient skips the step.
 *
 * On webgpu with the fused kernels active (webgpu/adamw.ts) the same step takes a few dispatches
 * instead of ~20 a variable: one sum of squares per 7 gradients, then one dispatch per 2 variables
 * doing clip, Adam, decay (or SGD) in place. It keeps its state where tf.train.adam does (the
 * moments by position, accBeta1/2, the step count), so export/import and the plain ops read and
 * continue it; it differs from the plain ops by float rounding only (FMA contraction, the norm's
 * summation order). Elsewhere the plain ops run, unchanged.
 */
export class AdamW {
  private readonly adam: tf.AdamOptimizer;
  /**
   * beta1^t and beta2^t as float32, t the next step: accBeta1/2 mirrored on the CPU (each step one
   * float32 product, as the variables get), so that the fused step needs no read-back for them.
   */
  private accBeta: [number, number];
  readonly options: Required<Omit<AdamWOptions, "sgd">> & Pick<AdamWOptions, "sgd">;

  constructor(options: AdamWOptions) {
    this.options = {
      beta1: 0.9,
      beta2: 0.999,
      eps: 1e-8,
      weightDecay: 0.01,
      clipNorm: 1,
      ...options,
    };
    this.adam = tf.train.adam(
      this.options.lr,
      this.options.beta1,
      this.options.beta2,
      this.options.eps,
    );
    this.accBeta = [Math.fround(this.options.beta1), Math.fround(this.options.beta2)];
  }

  /** accBeta after one more step: float32 products, as tf.train.adam's mul makes them. */
  private advanceAccBeta(): void {
    const [a1, a2] = this.accBeta;
    this.accBeta = [
      Math.fround(a1 * Math.fround(this.options.beta1)),
      Math.fround(a2 * Math.fround(this.options.beta2)),
    ];
  }

  get lr(): number {
    return this.options.lr;
  }

  set lr(value: number) {
    this.options.lr = value;
    (this.adam as unknown as { learningRate: number }).learningRate = value;
  }

  /** Computes the loss and its gradients, clips, and updates `vars`. Returns the loss value. */
  async step(lossFn: () => tf.Scalar, vars: tf.Variable[]): Promise<{ loss: number } & StepReport> {
    const { value, grads } = tf.variableGrads(lossFn, vars);
    const loss = (await value.data())[0] as number;
    value.dispose();
    if (!Number.isFinite(loss)) {
      tf.dispose(Object.values(grads));
      return { loss, gradNorm: Number.NaN, applied: false };
    }
    return { loss, ...(await this.apply(grads, vars)) };
  }

  /**
   * Applies gradients (e.g. summed over micro-batches): global-norm clip, Adam, decoupled decay.
   * Takes ownership of `grads` (disposes them). A non-finite gradient skips the step.
   */
  async apply(grads: tf.NamedTensorMap, vars: tf.Variable[]): Promise<StepReport> {
    if (fusedKernelsActive() && new Set(vars.map((v) => v.name)).size === vars.length)
      return this.applyFused(grads, vars);
    const names = Object.keys(grads);
    // Summed one by one, not tf.addN: WebGPU's AddN binds every input at once and fails past the
    // device's storage-buffer limit (8 by default) with a model's ~30 gradients.
    const normT = tf.tidy(() =>
      tf.sqrt(
        names
          .map((n) => tf.sum(tf.square(grads[n] as tf.Tensor)))
          .reduce((a, b) => tf.add(a, b), tf.scalar(0)),
      ),
    );
    const gradNorm = (await normT.data())[0] as number;
    normT.dispose();
    const applied = Number.isFinite(gradNorm);
    if (applied) {
      const { clipNorm, weightDecay, lr } = this.options;
      const scale = clipNorm > 0 && gradNorm > clipNorm ? clipNorm / gradNorm : 1;
      const sgd = this.options.sgd;
      const clipped: tf.NamedTensorMap = {};
      for (const n of names)
        clipped[n] = scale === 1 ? (grads[n] as tf.Tensor) : tf.mul(grads[n] as tf.Tensor, scale);
      const adamGrads: tf.NamedTensorMap = {};
      for (const n of names) if (!sgd?.variables.has(n)) adamGrads[n] = clipped[n] as tf.Tensor;
      if (Object.keys(adamGrads).length > 0) {
        this.adam.applyGradients(adamGrads as unknown as Record<string, tf.Variable>);
        this.advanceAccBeta();
      }
      if (sgd)
        tf.tidy(() => {
          for (const v of vars)
            if (sgd.variables.has(v.name) && clipped[v.name])
              v.assign(tf.sub(v, tf.mul(clipped[v.name] as tf.Tensor, sgd.lr)));
        });
      if (scale !== 1) tf.dispose(Object.values(clipped));
      if (weightDecay > 0)
        tf.tidy(() => {
          for (const v of vars)
            if (v.rank === 2 && !sgd?.variables.has(v.name))
              v.assign(tf.mul(v, 1 - lr * weightDecay));
        });
    }
    tf.dispose(Object.values(grads));
    return { gradNorm, applied };
  }

  /**
   * apply() with the fused kernels (webgpu): the same state changes as the plain ops. `vars` has no
   * name twice (apply() keeps the plain ops otherwise, where a repeated variable decays twice).
   */
  private async applyFused(grads: tf.NamedTensorMap, vars: tf.Variable[]): Promise<StepReport> {
    const names = Object.keys(grads);
    const parts = sumOfSquares(names.map((n) => grads[n] as tf.Tensor));
    let sumSq = 0;
    for (const x of await parts.data()) sumSq += x;
    parts.dispose();
    const gradNorm = Math.fround(Math.sqrt(sumSq));
    const applied = Number.isFinite(gradNorm);
    if (applied) {
      const { clipNorm, weightDecay, lr, beta1, beta2, eps } = this.options;
      const scale = clipNorm > 0 && gradNorm > clipNorm ? clipNorm / gradNorm : 1;
      const sgd = this.options.sgd;
      const decayed = new Set(
        vars.filter((v) => v.rank === 2 && !sgd?.variables.has(v.name)).map((v) => v.name),
      );
      const decayOf = (name: string) =>
        weightDecay > 0 && decayed.has(name) ? 1 - lr * weightDecay : 1;
      // Adam's variables in the order tf.train.adam keys its moments: the gradient map's, less SGD's.
      const adamGrads: tf.NamedTensorMap = {};
      for (const n of names) if (!sgd?.variables.has(n)) adamGrads[n] = grads[n] as tf.Tensor;
      const adamNames = Object.keys(adamGrads);
      const adam = this.adam as unknown as AdamInternals;
      const entries: AdamWEntry[] = [];
      const targets: { w: tf.Variable; m?: tf.Variable; v?: tf.Variable }[] = [];
      adamNames.forEach((name, i) => {
        const w = tf.engine().registeredVariables[name] as tf.Variable;
        adam.accumulatedFirstMoment[i] ??= {
          originalName: `${name}/m`,
          variable: tf.tidy(() => tf.zeros(w.shape).variable(false)),
        };
        adam.accumulatedSecondMoment[i] ??= {
          originalName: `${name}/v`,
          variable: tf.tidy(() => tf.zeros(w.shape).variable(false)),
        };
        const m = adam.accumulatedFirstMoment[i].variable;
        const v = adam.accumulatedSecondMoment[i].variable;
        entries.push({ g: adamGrads[name] as tf.Tensor, w, m, v, decay: decayOf(name) });
        targets.push({ w, m, v });
      });
      if (sgd)
        for (const w of vars)
          if (sgd.variables.has(w.name) && grads[w.name]) {
            entries.push({ g: grads[w.name] as tf.Tensor, w, decay: 1 });
            targets.push({ w });
          }
      const [a1, a2] = this.accBeta;
      const results = fusedAdamW(entries, {
        clip: scale,
        beta1,
        beta2,
        oneMinusAccBeta1: Math.fround(1 - a1),
        oneMinusAccBeta2: Math.fround(1 - a2),
        eps,
        lr,
        sgdLr: sgd?.lr ?? 0,
      });
      results.forEach((r, k) => {
        const t = targets[k] as (typeof targets)[number];
        for (const [target, next] of [
          [t.w, r.w],
          [t.m, r.m],
          [t.v, r.v],
        ] as const)
          if (target && next) {
            // In place: `next` aliases the variable; otherwise the kernel wrote a new buffer.
            if (next.dataId !== target.dataId) target.assign(next);
            next.dispose();
          }
      });
      if (adamNames.length > 0) {
        this.advanceAccBeta();
        tf.tidy(() => {
          adam.accBeta1.assign(tf.scalar(this.accBeta[0]));
          adam.accBeta2.assign(tf.scalar(this.accBeta[1]));
        });
        adam.incrementIterations();
      }
      // The plain ops decay every 2-D variable of `vars`, with a gradient or not.
      const undecayed = vars.filter((v) => decayed.has(v.name) && !(v.name in adamGrads));
      if (weightDecay > 0 && undecayed.length > 0)
        tf.tidy(() => {
          for (const v of undecayed) v.assign(tf.mul(v, 1 - lr * weightDecay));
        });
    }
    tf.dispose(Object.values(grads));
    return { gradNorm, applied };
  }

  /**
   * Adam's step count and moments, by index into `vars` (the list every step is given): what a run
   * needs to continue exactly. tfjs keeps the moments by position in the gradients, which follow
   * `vars` (less any without a gradient), so they are named back to their variables here.
   */
  async exportState(vars: tf.Variable[]): Promise<OptimizerState> {
    const weights = await this.adam.getWeights();
    const [iter, ...acc] = weights;
    const step = (await (iter as NamedTensor).tensor.data())[0] as number;
    (iter as NamedTensor).tensor.dispose();
    const half = acc.length / 2;
    const index = new Map(vars.map((v, i) => [`${v.name}/m`, i]));
    const moments: OptimizerState["moments"] = [];
    for (let j = 0; j < half; j++) {
      const m = acc[j] as NamedTensor;
      const v = acc[half + j] as NamedTensor;
      const i = index.get(m.name);
      if (i === undefined) throw new Error(`optimizer moment ${m.name} is of no given variable`);
      moments.push({
        index: i,
        m: (await m.tensor.data()) as Float32Array,
        v: (await v.tensor.data()) as Float32Array,
      });
    }
    return { step, moments };
  }

  /**
   * Restores a state from exportState for the same `vars`; checked whole (indices and sizes)
   * before anything changes.
   */
  async importState(vars: tf.Variable[], state: OptimizerState): Promise<void> {
    const sorted = [...state.moments].sort((a, b) => a.index - b.index);
    for (const [j, x] of sorted.entries()) {
      const v = vars[x.index];
      if (!v) throw new Error(`optimizer moment ${x.index}: there are ${vars.length} variables`);
      if (j > 0 && sorted[j - 1]?.index === x.index)
        throw new Error(`optimizer moment ${x.index} given twice`);
      if (x.m.length !== v.size || x.v.length !== v.size)
        throw new Error(
          `optimizer moments of ${v.name}: ${x.m.length} and ${x.v.length} values for shape [${v.shape}]`,
        );
    }
    if (!(Number.isInteger(state.step) && state.step >= 0))
      throw new Error(`optimizer step must be a non-negative integer, got ${state.step}`);
    const old = await this.adam.getWeights();
    tf.dispose(old.map((w) => w.tensor));
    // tfjs keeps moments by position in each step's gradient map, and a map keyed by variable
    // names lists integer-like names (unnamed variables: "12") first, whatever the order of `vars`.
    const position = new Map(
      Object.keys(Object.fromEntries(vars.map((v) => [v.name, 0]))).map((name, i) => [name, i]),
    );
    const ordered = [...sorted].sort(
      (a, b) =>
        (position.get((vars[a.index] as tf.Variable).name) as number) -
        (position.get((vars[b.index] as tf.Variable).name) as number),
    );
    const named = (suffix: string, pick: (x: (typeof sorted)[number]) => Float32Array) =>
      ordered.map((x) => {
        const v = vars[x.index] as tf.Variable;
        return { name: `${v.name}/${suffix}`, tensor: tf.tensor(pick(x), v.shape) };
      });
    const fresh = [
      { name: "iter", tensor: tf.scalar(state.step, "int32") },
      ...named("m", (x) => x.m),
      ...named("v", (x) => x.v),
    ];
    await this.adam.setWeights(fresh);
    // Adam's bias corrections, beta^(t+1), as the steps themselves make them (one float32 product
    // a step), not setWeights' pow: a continued run then equals an uninterrupted one bit for bit.
    const acc = this.adam as unknown as { accBeta1: tf.Variable; accBeta2: tf.Variable };
    tf.tidy(() => {
      let b1: tf.Tensor = tf.scalar(this.options.beta1);
      let b2: tf.Tensor = tf.scalar(this.options.beta2);
      this.accBeta = [Math.fround(this.options.beta1), Math.fround(this.options.beta2)];
      for (let t = 0; t < state.step; t++) {
        b1 = tf.mul(b1, this.options.beta1);
        b2 = tf.mul(b2, this.options.beta2);
        this.advanceAccBeta();
      }
      acc.accBeta1.assign(b1);
      acc.accBeta2.assign(b2);
    });
    tf.dispose(fresh.map((w) => w.tensor));
  }

  dispose(): void {
    this.adam.dispose();
  }
}
