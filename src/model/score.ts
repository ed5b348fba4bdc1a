import * as tf from "@tensorflow/tfjs";
import { bucketLength } from "./buckets";
import type { GPT } from "./gpt";
import { PAD } from "./tokenizer";

/**
 * log p(target_t | ids_<=t) and the entropy of each position's distribution, [B, T] each, in one
 * forward pass. Differentiable (for the trainer's losses); call inside tf.tidy or a gradient tape.
 */
export function tokenLogProbs(
  model: GPT,
  ids: tf.Tensor2D,
  targets: tf.Tensor2D,
): { logp: tf.Tensor2D; entropy: tf.Tensor2D; hidden: tf.Tensor3D } {
  const V = model.config.vocabSize;
  const [B, T] = ids.shape;
  const out = model.forward(ids);
  const logits = out.logits.reshape([B * T, V]);
  const logsm = tf.logSoftmax(logits);
  // One-hot select: gather has no gradient on every backend, a masked sum does.
  const logp = tf
    .sum(tf.mul(logsm, tf.oneHot(targets.reshape([B * T]), V)), 1)
    .reshape([B, T]) as tf.Tensor2D;
  const entropy = tf.neg(tf.sum(tf.mul(tf.exp(logsm), logsm), 1)).reshape([B, T]) as tf.Tensor2D;
  return { logp, entropy, hidden: out.hidden };
}

/** Right-pads sequences to one bucket length; returns inputs, next-token targets and the mask. */
export function packBatch(
  sequences: readonly number[][],
  masks: readonly number[][],
  context: number,
): { ids: Int32Array; targets: Int32Array; mask: Float32Array; B: number; T: number } {
  const B = sequences.length;
  const T = bucketLength(Math.max(...sequences.map((s) => s.length)) - 1, context);
  const ids = new Int32Array(B * T).fill(PAD);
  const targets = new Int32Array(B * T).fill(PAD);
  const mask = new Float32Array(B * T);
  sequences.forEach((seq, b) => {
    const m = masks[b] as number[];
    for (let t = 0; t + 1 < seq.length && t < T; t++) {
      ids[b * T + t] = seq[t] as number;
      targets[b * T + t] = seq[t + 1] as number;
      mask[b * T + t] = m[t + 1] as number;
    }
  });
  return { ids, targets, mask, B, T };
}

export interface Scores {
  /** Per sequence: logprob of token t given the tokens before it, for t >= 1 (index 0 is 0). */
  logprobs: Float32Array[];
  entropies: Float32Array[];
}

/** Scores token sequences (no gradient): per-token log-probs and entropies, padded to a bucket. */
export async function scoreSequences(model: GPT, sequences: readonly number[][]): Promise<Scores> {
  const masks = sequences.map((s) => new Array<number>(s.length).fill(1));
  const { ids, targets, B, T } = packBatch(sequences, masks, model.config.context);
  const [lp, en] = tf.tidy(() => {
    const r = tokenLogProbs(
      model,
      tf.tensor2d(ids, [B, T], "int32"),
      tf.tensor2d(targets, [B, T], "int32"),
    );
    return [r.logp, r.entropy];
  });
  const [lpv, env] = (await Promise.all([lp.data(), en.data()])) as [Float32Array, Float32Array];
  tf.dispose([lp, en]);
  const logprobs = sequences.map((s, b) => {
    const out = new Float32Array(s.length);
    for (let t = 1; t < s.length; t++) out[t] = lpv[b * T + t - 1] as number;
    return out;
  });
  const entropies = sequences.map((s, b) => {
    const out = new Float32Array(s.length);
    for (let t = 1; t < s.length; t++) out[t] = env[b * T + t - 1] as number;
    return out;
  });
  return { logprobs, entropies };
}
