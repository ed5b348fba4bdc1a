import * as tf from "@tensorflow/tfjs";
import { Rng } from "../env/rng";
import type { ModelConfig } from "./config";
import { generate } from "./decode";
import { decodeStepFlops, scoreFlops, trainFlops } from "./flops";
import { GPT } from "./gpt";
import { AdamW } from "./optim";
import { tokenLogProbs } from "./score";
import { emptyTimeSplit } from "./timeSplit";
import { dispatchCount, fusedKernelsActive, setFusedKernels, watchDispatches } from "./webgpu";

export interface BenchOptions {
  /** Rows of the small decoding batch. */
  batch: number;
  /** Rows of the full decoding wave (every live rollout of an iteration). */
  wave: number;
  /** Context tokens before decoding. */
  contextTokens: number;
  /** Tokens decoded per row. */
  newTokens: number;
  /** Tokens of the scoring and training row (one micro-batch). */
  trainTokens: number;
  /** Share of the row's positions that are scored (agent tokens; about 12% in rollouts). */
  agentShare: number;
  /** Timed repetitions of each measurement (after one warm-up). */
  reps: number;
}

export interface BenchResult {
  backend: string;
  params: number;
  bytes: number;
  /** The backend's plain 2-D matmul ceiling: the best of a few model-shaped and square products. */
  ceilingGflops: number;
  /** Decoding tokens/s after the prefill, batch of `batch` rows and the whole wave. */
  decodeTokensPerSecond: number;
  decodeWaveTokensPerSecond: number;
  scoreTokensPerSecond: number;
  trainTokensPerSecond: number;
  /** Achieved matmul GFLOP/s over the ceiling, per path (src/model/flops.ts counts the work). */
  decodeFraction: number;
  decodeWaveFraction: number;
  scoreFraction: number;
  trainFraction: number;
  /** Kernels (dispatches on a GPU) per decoding step of the batch, and per training micro-batch. */
  kernelsPerDecodeStep: number;
  kernelsPerTrainStep: number;
  /** On webgpu: the GPU dispatches behind those kernels (webgpu/dispatches.ts). */
  dispatchesPerDecodeStep?: number;
  dispatchesPerTrainStep?: number;
  /** On webgpu: the same counts with the fused kernels off (stock tfjs ops), for comparison. */
  stockKernelsPerDecodeStep?: number;
  stockKernelsPerTrainStep?: number;
  stockDispatchesPerDecodeStep?: number;
  stockDispatchesPerTrainStep?: number;
}

async function timed(reps: number, fn: () => Promise<void>): Promise<number> {
  await fn();
  const t0 = performance.now();
  for (let i = 0; i < reps; i++) await fn();
  return (performance.now() - t0) / 1000 / reps;
}

/** Kernels run by `fn` (tf.profile; its result tensors disposed), and on webgpu its dispatches. */
async function kernelsOf(
  fn: () => Promise<tf.Tensor | tf.Tensor[]>,
): Promise<{ kernels: number; dispatches: number }> {
  watchDispatches();
  const before = dispatchCount();
  const info = await tf.profile(async () => {
    const out = await fn();
    return out;
  });
  tf.dispose(info.result);
  return { kernels: info.kernels.length, dispatches: dispatchCount() - before };
}

/** The best GFLOP/s of plain 2-D matmuls: square 512 and the model's own [T, d] x [d, n] shapes. */
export async function matmulCeiling(
  config: ModelConfig,
  rows: number,
  reps: number,
): Promise<number> {
  const { dModel: d, dMlp: m } = config;
  const shapes: [number, number, number][] = [
    [512, 512, 512],
    [rows, d, 3 * d],
    [rows, d, m],
    [rows, m, d],
  ];
  let best = 0;
  for (const [M, K, N] of shapes) {
    const a = tf.randomNormal([M, K]) as tf.Tensor2D;
    const b = tf.randomNormal([K, N]) as tf.Tensor2D;
    const s = await timed(Math.max(reps, 3), async () => {
      const c = tf.matMul(a, b);
      await c.data();
      c.dispose();
    });
    best = Math.max(best, (2 * M * K * N) / s / 1e9);
    tf.dispose([a, b]);
  }
  return best;
}

async function decodeRate(
  model: GPT,
  contexts: number[][],
  newTokens: number,
  rng: Rng,
  reps: number,
): Promise<{ tokensPerSecond: number; gflops: number }> {
  const split = emptyTimeSplit();
  const run = async () => {
    await generate(model, contexts, {
      temperature: 1,
      maxTokens: newTokens,
      rng,
      stopToken: -1,
      timings: split,
    });
  };
  await run();
  split.decode = 0;
  for (let i = 0; i < reps; i++) await run();
  const steps = (newTokens - 1) * reps;
  const seconds = Math.max(split.decode, 1e-9);
  const C = contexts[0]?.length ?? 0;
  const flops =
    contexts.length * (newTokens - 1) * decodeStepFlops(model.config, C + newTokens / 2);
  return {
    tokensPerSecond: (contexts.length * steps) / seconds,
    gflops: (flops * reps) / seconds / 1e9,
  };
}

/**
 * Measures, on the current backend: its matmul ceiling, then decoding (a small batch and a whole
 * wave), scoring and training throughput of `config`, each as a fraction of that ceiling, and the
 * kernels a decoding step and a training micro-batch run.
 */
export async function benchModel(config: ModelConfig, opts: BenchOptions): Promise<BenchResult> {
  const model = new GPT(config, 0);
  const rng = new Rng(1);
  const V = config.vocabSize;
  const ceilingGflops = await matmulCeiling(config, opts.trainTokens, opts.reps);
  const randomRows = (n: number, length: number) =>
    Array.from({ length: n }, () => Array.from({ length }, () => rng.int(6, V - 1)));
  const small = await decodeRate(
    model,
    randomRows(opts.batch, opts.contextTokens),
    opts.newTokens,
    rng,
    opts.reps,
  );
  const wave = await decodeRate(
    model,
    randomRows(opts.wave, opts.contextTokens),
    opts.newTokens,
    rng,
    1,
  );
  // A decoding step: the kernels of a 3-token run less a 1-token run's, over the 2 steps between.
  const decodeRun = (maxTokens: number) =>
    kernelsOf(async () => {
      await generate(model, randomRows(opts.batch, 64), {
        temperature: 1,
        maxTokens,
        rng,
        stopToken: -1,
      });
      return tf.scalar(0);
    });
  const decodeKernels = async () => {
    const three = await decodeRun(3);
    const one = await decodeRun(1);
    return {
      kernels: (three.kernels - one.kernels) / 2,
      dispatches: (three.dispatches - one.dispatches) / 2,
    };
  };
  const decodeCount = await decodeKernels();

  // One micro-batch row: scored at every agent position (a share of them), trained on them.
  const T = opts.trainTokens;
  const ids = Int32Array.from(randomRows(1, T)[0] as number[]);
  const targets = Int32Array.from({ length: T }, (_, t) =>
    t + 1 < T ? (ids[t + 1] as number) : 0,
  );
  const every = Math.max(1, Math.round(1 / opts.agentShare));
  const want = Float32Array.from({ length: T }, (_, t) => (t % every === every - 1 ? 1 : 0));
  const wanted = want.reduce((a, x) => a + x, 0);
  const batch = { ids, targets, B: 1, T, want };
  const mask = tf.tensor2d(want, [1, T]);
  const score = await timed(opts.reps, async () => {
    const r = tf.tidy(() => {
      const s = tokenLogProbs(model, batch, { entropy: true });
      return [s.logp, s.entropy as tf.Tensor];
    });
    await Promise.all(r.map((x) => x.data()));
    tf.dispose(r);
  });
  const optimizer = new AdamW({ lr: 1e-6 });
  const trainStep = () =>
    optimizer.step(() => {
      const { logp } = tokenLogProbs(model, batch);
      return tf.neg(tf.sum(tf.mul(logp, mask))).div(wanted) as tf.Scalar;
    }, model.trainableVariables());
  const train = await timed(opts.reps, async () => {
    await trainStep();
  });
  const trainKernels = () =>
    kernelsOf(async () => {
      await trainStep();
      return tf.scalar(0);
    });
  const trainCount = await trainKernels();
  const gpu: Partial<BenchResult> = {};
  if (tf.getBackend() === "webgpu") {
    gpu.dispatchesPerDecodeStep = decodeCount.dispatches;
    gpu.dispatchesPerTrainStep = trainCount.dispatches;
  }
  if (fusedKernelsActive()) {
    setFusedKernels(false);
    try {
      const decode = await decodeKernels();
      const train = await trainKernels();
      gpu.stockKernelsPerDecodeStep = decode.kernels;
      gpu.stockKernelsPerTrainStep = train.kernels;
      gpu.stockDispatchesPerDecodeStep = decode.dispatches;
      gpu.stockDispatchesPerTrainStep = train.dispatches;
    } finally {
      setFusedKernels(true);
    }
  }
  optimizer.dispose();
  mask.dispose();
  const params = model.paramCount();
  model.dispose();
  const fraction = (gflops: number) => gflops / ceilingGflops;
  return {
    backend: tf.getBackend(),
    params,
    bytes: params * 4,
    ceilingGflops,
    decodeTokensPerSecond: small.tokensPerSecond,
    decodeWaveTokensPerSecond: wave.tokensPerSecond,
    scoreTokensPerSecond: T / score,
    trainTokensPerSecond: T / train,
    decodeFraction: fraction(small.gflops),
    decodeWaveFraction: fraction(wave.gflops),
    scoreFraction: fraction(scoreFlops(config, T, wanted) / score / 1e9),
    trainFraction: fraction(trainFlops(config, T, wanted) / train / 1e9),
    kernelsPerDecodeStep: decodeCount.kernels,
    kernelsPerTrainStep: trainCount.kernels,
    ...gpu,
  };
}
