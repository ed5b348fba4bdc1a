import * as tf from "@tensorflow/tfjs";

export interface AdamWOptions {
  lr: number;
  beta1?: number;
  beta2?: number;
  eps?: number;
  /** Decoupled weight decay (Loshchilov & Hutter), applied to matrices only. */
  weightDecay?: number;
  /** Clip the global gradient norm to this value (0 = no clipping). */
  clipNorm?: number;
}

export interface StepReport {
  /** Global gradient norm before clipping. */
  gradNorm: number;
  /** False when the gradient was not finite and the step was skipped. */
  applied: boolean;
}

/**
 * AdamW: Adam on the gradients, then w <- w - lr * wd * w for 2-D weights (decoupled decay, not
 * L2 in the loss), with global gradient-norm clipping. A non-finite gradient skips the step.
 */
export class AdamW {
  private readonly adam: tf.AdamOptimizer;
  readonly options: Required<AdamWOptions>;

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
      const clipped: tf.NamedTensorMap = {};
      for (const n of names)
        clipped[n] = scale === 1 ? (grads[n] as tf.Tensor) : tf.mul(grads[n] as tf.Tensor, scale);
      this.adam.applyGradients(clipped as unknown as Record<string, tf.Variable>);
      if (scale !== 1) tf.dispose(Object.values(clipped));
      if (weightDecay > 0)
        tf.tidy(() => {
          for (const v of vars) if (v.rank === 2) v.assign(tf.mul(v, 1 - lr * weightDecay));
        });
    }
    tf.dispose(Object.values(grads));
    return { gradNorm, applied };
  }

  dispose(): void {
    this.adam.dispose();
  }
}
