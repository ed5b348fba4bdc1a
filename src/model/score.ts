import * as tf from "@tensorflow/tfjs";
import { bucketLength } from "./buckets";
import { type CopyScores, type GPT, mixtureLogProbs } from "./gpt";
import { PAD } from "./tokenizer";

/**
 * log p(target_t | ids_<=t) [B, T] in one forward pass. Differentiable (for the trainer's losses);
 * call inside tf.tidy or a gradient tape. With a copy head only the targets' probabilities are
 * formed (no [T, S] x [S, V] product): log p(y) = logsumexp(l_y, s_j for j with next_j = y) - log Z.
 */
export function tokenLogProbs(
  model: GPT,
  ids: tf.Tensor2D,
  targets: tf.Tensor2D,
  allowed?: tf.Tensor3D,
): { logp: tf.Tensor2D; hidden: tf.Tensor3D } {
  const { logp, hidden } = scoreParts(model, ids, targets, allowed);
  return { logp, hidden };
}

/**
 * tokenLogProbs plus the entropy of each position's whole next-token distribution [B, T] (with a
 * copy head, of the full mixture over the vocabulary: costlier, for scoring passes).
 */
export function tokenLogProbsAndEntropy(
  model: GPT,
  ids: tf.Tensor2D,
  targets: tf.Tensor2D,
  allowed?: tf.Tensor3D,
): { logp: tf.Tensor2D; entropy: tf.Tensor2D; hidden: tf.Tensor3D } {
  const { logp, hidden, vocab, copy, banned } = scoreParts(model, ids, targets, allowed);
  const [B, T, V] = vocab.shape;
  let logsm = copy
    ? mixtureLogProbs(vocab, copy).reshape([B * T, V])
    : tf.logSoftmax(vocab.reshape([B * T, V]));
  // Restricted: the allowed tokens' log-probs, renormalized.
  if (banned) logsm = tf.logSoftmax(logsm.add(banned.reshape([B * T, V])));
  const entropy = tf.neg(tf.sum(tf.mul(tf.exp(logsm), logsm), 1)).reshape([B, T]) as tf.Tensor2D;
  return { logp, entropy, hidden };
}

/**
 * The parts of a scoring pass. `allowed` [B, T, V] (1 = may be sampled) restricts each position's
 * distribution to its allowed tokens, renormalized: log p_A(y) = log p(y) - log sum_{v in A} p(v)
 * (a grammar-constrained policy; the targets must be allowed).
 */
function scoreParts(
  model: GPT,
  ids: tf.Tensor2D,
  targets: tf.Tensor2D,
  allowed?: tf.Tensor3D,
): {
  logp: tf.Tensor2D;
  hidden: tf.Tensor3D;
  vocab: tf.Tensor3D;
  copy?: CopyScores;
  /** With `allowed`: 0 where allowed, -1e9 elsewhere [B, T, V]. */
  banned?: tf.Tensor3D;
} {
  const V = model.config.vocabSize;
  // The token after input t is targets[t]: what a copy pointer to position t copies.
  const out = model.forward(ids, { mixture: false, copyNext: targets });
  const vocab = out.logits;
  // One-hot select: gather has no gradient on every backend, a masked sum does.
  const [B, T] = ids.shape;
  const pick = tf
    .oneHot(targets.reshape([B * T]), V)
    .toFloat()
    .reshape([B, T, V]);
  const banned = allowed ? (allowed.sub(1).mul(1e9) as tf.Tensor3D) : undefined;
  if (!out.copy) {
    const logits = banned ? vocab.add(banned) : vocab;
    const logsm = tf.logSoftmax(logits.reshape([B * T, V])).reshape([B, T, V]);
    const logp = tf.sum(tf.mul(logsm, pick), 2) as tf.Tensor2D;
    return { logp, hidden: out.hidden, vocab, ...(banned ? { banned } : {}) };
  }
  const { scores, next } = out.copy;
  // Restricted: a pointer counts when the token it copies is allowed, [B, T, S] =
  // allowed x onehot(next)^T.
  const keyBanned = allowed
    ? tf
        .matMul(
          allowed,
          tf
            .oneHot(next.reshape([B * next.shape[1]]), V)
            .toFloat()
            .reshape([B, next.shape[1], V]),
          false,
          true,
        )
        .sub(1)
        .mul(1e9)
    : undefined;
  const z = tf.logSumExp(
    tf.concat([banned ? vocab.add(banned) : vocab, keyBanned ? scores.add(keyBanned) : scores], 2),
    2,
  );
  // Keys whose next token is the target count for it; the others drop out.
  const same = tf.equal(targets.expandDims(2), next.expandDims(1)).toFloat();
  const forTarget = tf.concat(
    [tf.sum(tf.mul(vocab, pick), 2, true), scores.add(same.sub(1).mul(1e9))],
    2,
  );
  const logp = tf.logSumExp(forTarget, 2).sub(z) as tf.Tensor2D;
  return { logp, hidden: out.hidden, vocab, copy: out.copy, ...(banned ? { banned } : {}) };
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

/**
 * A restriction of the scored distributions: from the packed targets and mask (1 at the tokens
 * that `masks` marks), each position's allowed tokens [B * T * V] (1 = may be sampled).
 */
export type Restriction = (
  targets: Int32Array,
  mask: Float32Array,
  B: number,
  T: number,
  V: number,
) => Float32Array;

/**
 * Scores token sequences (no gradient): per-token log-probs and entropies, padded to a bucket.
 * With `entropy: false` the entropies are left at 0 and a copy head's full mixture is not formed.
 * With `restrict` (and `masks`, 1 at the tokens it applies to) the log-probs and entropies are
 * those of the restricted, renormalized distributions (a grammar-constrained policy).
 */
export async function scoreSequences(
  model: GPT,
  sequences: readonly number[][],
  opts: { entropy?: boolean; masks?: readonly number[][]; restrict?: Restriction } = {},
): Promise<Scores> {
  const masks = opts.masks ?? sequences.map((s) => new Array<number>(s.length).fill(1));
  const { ids, targets, mask, B, T } = packBatch(sequences, masks, model.config.context);
  const V = model.config.vocabSize;
  const allowedData = opts.restrict?.(targets, mask, B, T, V);
  const [lp, en] = tf.tidy(() => {
    const idsT = tf.tensor2d(ids, [B, T], "int32");
    const targetsT = tf.tensor2d(targets, [B, T], "int32");
    const allowed = allowedData ? tf.tensor3d(allowedData, [B, T, V]) : undefined;
    if (opts.entropy === false) {
      const { logp } = tokenLogProbs(model, idsT, targetsT, allowed);
      return [logp, tf.zerosLike(logp)];
    }
    const r = tokenLogProbsAndEntropy(model, idsT, targetsT, allowed);
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
