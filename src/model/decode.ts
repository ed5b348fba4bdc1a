import * as tf from "@tensorflow/tfjs";
import type { Rng } from "../env/rng";
import { bucketLength } from "./buckets";
import type { GPT, LayerKV } from "./gpt";
import { EOA, PAD } from "./tokenizer";

export interface GenerateOptions {
  /** Sampling temperature (1 = the model's distribution; 0 = greedy). */
  temperature: number;
  /** Per-turn token cap. */
  maxTokens: number;
  /** The seeded generator that draws every token (sampling happens in JS, not tf.multinomial). */
  rng: Rng;
  /** Token that ends a row's generation (default <eoa>). */
  stopToken?: number;
}

export interface Generated {
  /** Sampled ids per row, the stop token included when it was reached. */
  tokens: number[][];
  /** log p(token) under the sampling distribution (temperature applied), per sampled token. */
  logprobs: number[][];
}

/** Log-softmax of one row of logits at a temperature (in JS, float64). */
export function logSoftmax(
  logits: Float32Array,
  offset: number,
  size: number,
  temperature: number,
): Float64Array {
  const out = new Float64Array(size);
  const t = temperature > 0 ? temperature : 1;
  let max = -Infinity;
  for (let i = 0; i < size; i++) max = Math.max(max, (logits[offset + i] as number) / t);
  let sum = 0;
  for (let i = 0; i < size; i++) sum += Math.exp((logits[offset + i] as number) / t - max);
  const lse = max + Math.log(sum);
  for (let i = 0; i < size; i++) out[i] = (logits[offset + i] as number) / t - lse;
  return out;
}

function sample(logp: Float64Array, temperature: number, rng: Rng): number {
  if (temperature <= 0) {
    let best = 0;
    for (let i = 1; i < logp.length; i++)
      if ((logp[i] as number) > (logp[best] as number)) best = i;
    return best;
  }
  let u = rng.float();
  for (let i = 0; i < logp.length; i++) {
    u -= Math.exp(logp[i] as number);
    if (u <= 0) return i;
  }
  return logp.length - 1;
}

/**
 * Batched incremental decoding with a KV cache. Contexts are left-padded to a bucket length so
 * that every row's next token sits in the same column; each row keeps its true positions, and a
 * key mask hides the padding. One forward pass over the contexts fills the cache, then one token
 * per row per step, until every row has emitted the stop token or the cap is reached.
 */
export async function generate(
  model: GPT,
  contexts: number[][],
  opts: GenerateOptions,
): Promise<Generated> {
  const { vocabSize: V, context: C } = model.config;
  const stop = opts.stopToken ?? EOA;
  const B = contexts.length;
  const longest = Math.max(...contexts.map((c) => c.length));
  if (longest + opts.maxTokens > C)
    throw new Error(
      `context (${longest}) + max tokens (${opts.maxTokens}) exceed the model's ${C}`,
    );
  const P = Math.min(bucketLength(longest, C), C - opts.maxTokens);
  const ids = new Int32Array(B * P);
  const pos = new Int32Array(B * P);
  const mask = new Float32Array(B * P);
  contexts.forEach((ctx, b) => {
    const pad = P - ctx.length;
    for (let j = 0; j < P; j++) {
      const k = b * P + j;
      ids[k] = j < pad ? PAD : (ctx[j - pad] as number);
      pos[k] = j < pad ? 0 : j - pad;
      mask[k] = j < pad ? 0 : 1;
    }
  });
  let keyMask = tf.tensor2d(mask, [B, P]);
  let { logits, kv } = tf.tidy(() => {
    const r = model.forward(tf.tensor2d(ids, [B, P], "int32"), {
      positions: tf.tensor2d(pos, [B, P], "int32"),
      keyMask,
      returnKV: true,
    });
    return {
      logits: r.logits.slice([0, P - 1, 0], [B, 1, V]).reshape([B, V]),
      kv: r.kv as LayerKV[],
    };
  });
  const tokens: number[][] = contexts.map(() => []);
  const logprobs: number[][] = contexts.map(() => []);
  const done = contexts.map(() => false);
  try {
    for (let step = 0; step < opts.maxTokens; step++) {
      const values = (await logits.data()) as Float32Array;
      const next = new Int32Array(B);
      for (let b = 0; b < B; b++) {
        if (done[b]) {
          next[b] = PAD;
          continue;
        }
        const lp = logSoftmax(values, b * V, V, opts.temperature);
        const token = sample(lp, opts.temperature, opts.rng);
        tokens[b]?.push(token);
        logprobs[b]?.push(lp[token] as number);
        next[b] = token;
        if (token === stop) done[b] = true;
      }
      if (done.every(Boolean) || step === opts.maxTokens - 1) break;
      const positions = new Int32Array(B);
      for (let b = 0; b < B; b++) positions[b] = (contexts[b]?.length ?? 0) + step;
      const nextMask = tf.tidy(() => tf.concat([keyMask, tf.ones([B, 1])], 1) as tf.Tensor2D);
      const r = tf.tidy(() => {
        const out = model.forward(tf.tensor2d(next, [B, 1], "int32"), {
          positions: tf.tensor2d(positions, [B, 1], "int32"),
          keyMask: nextMask,
          past: kv,
          returnKV: true,
        });
        return { logits: out.logits.reshape([B, V]) as tf.Tensor2D, kv: out.kv as LayerKV[] };
      });
      logits.dispose();
      keyMask.dispose();
      for (const l of kv) tf.dispose([l.k, l.v]);
      logits = r.logits;
      kv = r.kv;
      keyMask = nextMask;
    }
  } finally {
    logits.dispose();
    keyMask.dispose();
    for (const l of kv) tf.dispose([l.k, l.v]);
  }
  return { tokens, logprobs };
}
