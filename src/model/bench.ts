import * as tf from "@tensorflow/tfjs";
import { Rng } from "../env/rng";
import type { ModelConfig } from "./config";
import { generate, logSoftmax } from "./decode";
import { GPT } from "./gpt";
import { AdamW } from "./optim";
import { tokenLogProbs } from "./score";

export interface BenchOptions {
  batch: number;
  /** Context tokens before decoding. */
  contextTokens: number;
  /** Tokens decoded per row. */
  newTokens: number;
  /** Timed repetitions of each measurement (after one warm-up). */
  reps: number;
}

export interface BenchResult {
  backend: string;
  params: number;
  bytes: number;
  decodeCachedTokensPerSecond: number;
  decodeNoCacheTokensPerSecond: number;
  cacheSpeedup: number;
  scoreTokensPerSecond: number;
  trainTokensPerSecond: number;
}

async function timed(reps: number, fn: () => Promise<void>): Promise<number> {
  await fn();
  const t0 = performance.now();
  for (let i = 0; i < reps; i++) await fn();
  return (performance.now() - t0) / 1000 / reps;
}

/** Decoding without a cache: one full forward pass over the whole sequence per new token. */
async function decodeNoCache(
  model: GPT,
  contexts: number[][],
  newTokens: number,
  rng: Rng,
): Promise<void> {
  const seqs = contexts.map((c) => c.slice());
  const V = model.config.vocabSize;
  for (let step = 0; step < newTokens; step++) {
    const T = seqs[0]?.length ?? 0;
    const last = tf.tidy(() => {
      const ids = tf.tensor2d(seqs.flat(), [seqs.length, T], "int32");
      return model.forward(ids, { lastOnly: true }).logits;
    });
    const values = (await last.data()) as Float32Array;
    last.dispose();
    seqs.forEach((s, b) => {
      const lp = logSoftmax(values, b * V, V, 1);
      let u = rng.float();
      let tok = V - 1;
      for (let i = 0; i < V; i++) {
        u -= Math.exp(lp[i] as number);
        if (u <= 0) {
          tok = i;
          break;
        }
      }
      s.push(tok);
    });
  }
}

/**
 * Measures, on the current backend and side by side: decoding with and without the KV cache (same
 * batch, same context), scoring, and training throughput, plus the model's size.
 */
export async function benchModel(config: ModelConfig, opts: BenchOptions): Promise<BenchResult> {
  const model = new GPT(config, 0);
  const rng = new Rng(1);
  const contexts = Array.from({ length: opts.batch }, () =>
    Array.from({ length: opts.contextTokens }, () => rng.int(6, config.vocabSize - 1)),
  );
  const decoded = opts.batch * opts.newTokens;
  const cached = await timed(opts.reps, async () => {
    await generate(model, contexts, {
      temperature: 1,
      maxTokens: opts.newTokens,
      rng,
      stopToken: -1,
    });
  });
  const uncached = await timed(opts.reps, () =>
    decodeNoCache(model, contexts, opts.newTokens, rng),
  );
  const T = opts.contextTokens;
  const flat = Int32Array.from(contexts.flat());
  const batch = { ids: flat, targets: flat, B: opts.batch, T };
  const mask = tf.ones([opts.batch, T]) as tf.Tensor2D;
  const score = await timed(opts.reps, async () => {
    const lp = tf.tidy(() => tokenLogProbs(model, batch).logp);
    await lp.data();
    lp.dispose();
  });
  const optimizer = new AdamW({ lr: 1e-4 });
  const train = await timed(opts.reps, async () => {
    await optimizer.step(() => {
      const { logp } = tokenLogProbs(model, batch);
      return tf.neg(tf.sum(tf.mul(logp, mask))).div(tf.sum(mask)) as tf.Scalar;
    }, model.trainableVariables());
  });
  optimizer.dispose();
  mask.dispose();
  const params = model.paramCount();
  model.dispose();
  return {
    backend: tf.getBackend(),
    params,
    bytes: params * 4,
    decodeCachedTokensPerSecond: decoded / cached,
    decodeNoCacheTokensPerSecond: decoded / uncached,
    cacheSpeedup: uncached / cached,
    scoreTokensPerSecond: (opts.batch * T) / score,
    trainTokensPerSecond: (opts.batch * T) / train,
  };
}
