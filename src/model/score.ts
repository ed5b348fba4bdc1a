import * as tf from "@tensorflow/tfjs";
import { bucketLength } from "./buckets";
import { COPY_CONTINUE_SCALE, COPY_TARGET_SCALE, type GPT } from "./gpt";
import { gatherRows, logSumExpRows, mm, mmT, pickColumns, placeAt, stopGradient } from "./ops";
import { PAD } from "./tokenizer";

/** Token ids to score, packed [B, T] (row-major), as plain arrays. */
export interface TokenBatch {
  ids: Int32Array;
  /** The token after each input: what is scored there. */
  targets: Int32Array;
  B: number;
  T: number;
  /**
   * 1 at the positions whose log-prob (and entropy) is wanted, [B * T]; default every position.
   * The heads (vocabulary, copy, log-softmax) run only there; elsewhere the results are 0.
   */
  want?: ArrayLike<number>;
  /**
   * The allowed tokens at each position [B * T * V] (1 = may be sampled, as grammarMask gives):
   * each wanted position's distribution restricted to them and renormalized,
   * log p_A(y) = log p(y) - log sum_{v in A} p(v) (a grammar-constrained policy; targets allowed).
   */
  allowed?: ArrayLike<number>;
}

export interface TokenScores {
  /** log p(target_t | ids_<=t) [B, T]; 0 where not wanted. */
  logp: tf.Tensor2D;
  /** With entropy: the entropy of each wanted position's whole next-token distribution [B, T]. */
  entropy?: tf.Tensor2D;
  /** The final (layer-normed) hidden state [B, T, d] (a value head reads it). */
  hidden: tf.Tensor3D;
}

/**
 * Log-probs of the targets in one forward pass, differentiable (for the trainer's losses): call
 * inside tf.tidy or a gradient tape. The trunk runs over every position; the LM head, the copy
 * head and the log-softmax only at the wanted ones, every product a 2-D matmul (per row for the
 * copy head), every mask built in JS as an additive bias: no one-hot products. With a copy head
 * only the targets' probabilities are formed unless the entropy is asked for:
 * log p(y) = logsumexp(l_y, s_j for j with next_j = y) - log Z.
 */
export function tokenLogProbs(
  model: GPT,
  batch: TokenBatch,
  opts: { entropy?: boolean } = {},
): TokenScores {
  const { ids, targets, B, T } = batch;
  const { vocabSize: V, dModel: d } = model.config;
  const { out } = model.trunk(tf.tensor2d(ids, [B, T], "int32"));
  const hidden = out.reshape([B, T, d]) as tf.Tensor3D;
  // The wanted positions, row by row (flat index b * T + t).
  const at: number[] = [];
  const rowStart = new Int32Array(B + 1);
  for (let b = 0; b < B; b++) {
    rowStart[b] = at.length;
    for (let t = 0; t < T; t++) if (!batch.want || batch.want[b * T + t]) at.push(b * T + t);
  }
  rowStart[B] = at.length;
  const N = at.length;
  if (N === 0) {
    const zeros = tf.zeros([B, T]) as tf.Tensor2D;
    return { logp: zeros, hidden, ...(opts.entropy ? { entropy: tf.zeros([B, T]) } : {}) };
  }
  const all = N === B * T;
  const atIdx = Int32Array.from(at);
  const picked = new Int32Array(N);
  for (let n = 0; n < N; n++) picked[n] = targets[atIdx[n] as number] as number;
  const h = all ? out : gatherRows(out, tf.tensor1d(atIdx, "int32"), B * T);
  const vocab = mmT(h, model.weight("wte") as tf.Tensor2D); // [N, V]
  // Restricted: 0 where allowed, -1e9 elsewhere [N, V].
  let banned: tf.Tensor2D | null = null;
  if (batch.allowed) {
    const a = batch.allowed;
    const bias = new Float32Array(N * V);
    for (let n = 0; n < N; n++) {
      const base = (atIdx[n] as number) * V;
      for (let y = 0; y < V; y++) if (!a[base + y]) bias[n * V + y] = -1e9;
    }
    banned = tf.tensor2d(bias, [N, V]);
  }
  const logits = banned ? vocab.add(banned) : vocab;
  const targetLogit = pickColumns(vocab, picked);
  let logpAt: tf.Tensor1D;
  let entropyAt: tf.Tensor1D | null = null;
  if (!model.config.copyHead) {
    const z = logSumExpRows(logits as tf.Tensor2D);
    logpAt = targetLogit.sub(z);
    if (opts.entropy) {
      const logsm = logits.sub(z.reshape([N, 1]));
      entropyAt = tf.neg(tf.sum(tf.mul(tf.exp(logsm), logsm), 1));
    }
  } else {
    const copy = copyScores(model, batch, out, h, atIdx, rowStart);
    const z = logSumExpRows(tf.concat([logits, copy.scores], 1) as tf.Tensor2D);
    // Keys whose pointer writes the target count for it; the others drop out.
    const forTarget = tf.concat([targetLogit.reshape([N, 1]), copy.scores.add(copy.same)], 1);
    logpAt = logSumExpRows(forTarget as tf.Tensor2D).sub(z);
    if (opts.entropy) entropyAt = mixtureEntropy(logits as tf.Tensor2D, copy, z, rowStart, V);
  }
  const size = B * T;
  const logp = (all ? logpAt : placeAt(logpAt, atIdx, size)).reshape([B, T]) as tf.Tensor2D;
  if (!entropyAt) return { logp, hidden };
  const entropy = (all ? entropyAt : placeAt(entropyAt, atIdx, size)).reshape([
    B,
    T,
  ]) as tf.Tensor2D;
  return { logp, entropy, hidden };
}

/** tokenLogProbs with the entropy of every wanted position's distribution (a scoring pass). */
export function tokenLogProbsAndEntropy(
  model: GPT,
  batch: TokenBatch,
): Required<Pick<TokenScores, "entropy">> & TokenScores {
  return tokenLogProbs(model, batch, { entropy: true }) as Required<Pick<TokenScores, "entropy">> &
    TokenScores;
}

/** The copy head at the wanted positions: scores over each one's row's keys, and what they write. */
interface CopyAt {
  /** s[n, j] for the wanted position n and every key j of its row, [N, T]; -1e9 where j is not an earlier (allowed) key. */
  scores: tf.Tensor2D;
  /** 0 where key j's pointer writes position n's target, -1e9 elsewhere [N, T]. */
  same: tf.Tensor2D;
  /** What a pointer to each key writes, per row [T] (ModelConfig.copyEmit applied). */
  writes: Int32Array[];
}

/**
 * The copy head's scores (ModelConfig.copyHead, copyContinue, copyTarget) for the wanted positions
 * of whole sequences, row by row: s[t, j] = q_t . k_j / sqrt(d) + b (+ the continuation prior and
 * the copied-token term) for every earlier key j (j < t), the token after key j being targets[j].
 */
function copyScores(
  model: GPT,
  batch: TokenBatch,
  out: tf.Tensor2D,
  h: tf.Tensor2D,
  atIdx: Int32Array,
  rowStart: Int32Array,
): CopyAt {
  const { targets, B, T } = batch;
  const { dModel: d, vocabSize: V } = model.config;
  const N = atIdx.length;
  const emit = model.copyEmitTable;
  const w = (name: string) => model.weight(name) as tf.Tensor2D;
  const keysAll = mm(out, w("copy.wk")); // [B * T, d]
  const qAll = mm(h, w("copy.wq")); // [N, d]
  const qcAll = model.config.copyTarget ? mm(h, w("copy.wc")) : null; // [N, r]
  // The continuation prior reads the copy attention of the position before each wanted one.
  const prevQuery = model.config.copyContinue
    ? mm(
        gatherRows(
          out,
          tf.tensor1d(
            atIdx.map((i) => (i % T === 0 ? i : i - 1)),
            "int32",
          ),
          B * T,
        ),
        w("copy.wq"),
      )
    : null;
  // JS-built additive masks, [N, T]: the allowed keys (earlier, and writing an allowed token when
  // restricted) and the keys that write the target.
  const bias = new Float32Array(N * T).fill(-1e9);
  const same = new Float32Array(N * T).fill(-1e9);
  const prevBias = new Float32Array(N * T).fill(-1e9);
  const writes: Int32Array[] = [];
  for (let b = 0; b < B; b++) {
    const row = new Int32Array(T);
    for (let j = 0; j < T; j++) {
      const y = targets[b * T + j] as number;
      row[j] = emit && y >= 0 && y < V ? (emit[y] as number) : y;
    }
    writes.push(row);
    for (let n = rowStart[b] as number; n < (rowStart[b + 1] as number); n++) {
      const i = atIdx[n] as number;
      const t = i - b * T;
      const target = targets[i] as number;
      const allowedBase = i * V;
      for (let j = 0; j < t; j++) {
        const y = row[j] as number;
        if (batch.allowed && !batch.allowed[allowedBase + y]) continue;
        bias[n * T + j] = 0;
        if (y === target) same[n * T + j] = 0;
      }
      for (let j = 0; j < t - 1; j++) prevBias[n * T + j] = 0;
    }
  }
  const biasT = tf.tensor2d(bias, [N, T]);
  const prevBiasT = prevQuery ? tf.tensor2d(prevBias, [N, T]) : null;
  const parts: tf.Tensor2D[] = [];
  for (let b = 0; b < B; b++) {
    const from = rowStart[b] as number;
    const n = (rowStart[b + 1] as number) - from;
    if (n === 0) continue;
    const slice = (x: tf.Tensor2D) => (n === N ? x : (x.slice([from, 0], [n, -1]) as tf.Tensor2D));
    const keys = B === 1 ? keysAll : (keysAll.slice([b * T, 0], [T, d]) as tf.Tensor2D);
    let s = mmT(slice(qAll), keys)
      .mul(1 / Math.sqrt(d))
      .add(w("copy.b")) as tf.Tensor2D;
    if (prevQuery && prevBiasT) {
      // a_{t-1}(j-1): the previous position's copy attention (softmax over its earlier keys),
      // one key on. A fixed feature of the scores: no gradient flows back through it.
      const allowedPrev = slice(prevBiasT);
      const content = mmT(slice(prevQuery), keys).mul(1 / Math.sqrt(d));
      const a = stopGradient(
        tf.softmax(content.add(allowedPrev)).mul(allowedPrev.add(1e9).div(1e9)) as tf.Tensor2D,
      );
      const prior = tf
        .pad(a, [
          [0, 0],
          [1, 0],
        ])
        .slice([0, 0], [n, T]);
      s = s.add(prior.mul(w("copy.cont")).mul(COPY_CONTINUE_SCALE)) as tf.Tensor2D;
    }
    if (qcAll) {
      // s_tj += 30 [(h_t W_c) . E_c[x_{j+1}] + b[x_{j+1}]] (ModelConfig.copyTarget).
      const next = tf.tensor1d(targets.subarray(b * T, (b + 1) * T), "int32");
      const kc = gatherRows(w("copy.tok"), next, V); // [T, r]
      const tokBias = gatherRows(w("copy.bias"), next, V).reshape([1, T]);
      s = s.add(mmT(slice(qcAll), kc).add(tokBias).mul(COPY_TARGET_SCALE)) as tf.Tensor2D;
    }
    parts.push(s);
  }
  const scores = (parts.length === 1 ? parts[0] : tf.concat(parts, 0)) as tf.Tensor2D;
  return { scores: scores.add(biasT), same: tf.tensor2d(same, [N, T]), writes };
}

/**
 * The entropy of the whole (restricted) mixture at each wanted position, with log Z known:
 * p(y) = [exp(l_y) + sum_{j: next_j = y} exp(s_j)] / Z; the pointers' mass scattered onto the
 * tokens they write (tf.scatterND sums duplicates). No gradient is needed (scoring passes).
 */
function mixtureEntropy(
  logits: tf.Tensor2D,
  copy: CopyAt,
  z: tf.Tensor1D,
  rowStart: Int32Array,
  V: number,
): tf.Tensor1D {
  const N = logits.shape[0];
  const zc = z.reshape([N, 1]);
  const fromVocab = tf.exp(logits.sub(zc));
  const fromKeys = tf.exp(copy.scores.sub(zc)); // [N, T]
  const T = fromKeys.shape[1] as number;
  const parts: tf.Tensor[] = [];
  copy.writes.forEach((writes, b) => {
    const from = rowStart[b] as number;
    const n = (rowStart[b + 1] as number) - from;
    if (n === 0) return;
    const mass = fromKeys.slice([from, 0], [n, T]).transpose(); // [T, n]
    const idx = tf.tensor2d(writes, [T, 1], "int32");
    parts.push(tf.scatterND(idx, mass, [V, n]).transpose());
  });
  const p = fromVocab.add(parts.length === 1 ? (parts[0] as tf.Tensor) : tf.concat(parts, 0));
  return tf.neg(tf.sum(tf.mul(p, tf.log(p.add(1e-30))), 1)) as tf.Tensor1D;
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
 * With `masks`, only the masked-in tokens are scored (0 elsewhere). With `restrict` (and `masks`,
 * 1 at the tokens it applies to) the log-probs and entropies are those of the restricted,
 * renormalized distributions (a grammar-constrained policy).
 */
export async function scoreSequences(
  model: GPT,
  sequences: readonly number[][],
  opts: { entropy?: boolean; masks?: readonly number[][]; restrict?: Restriction } = {},
): Promise<Scores> {
  const masks = opts.masks ?? sequences.map((s) => new Array<number>(s.length).fill(1));
  const { ids, targets, mask, B, T } = packBatch(sequences, masks, model.config.context);
  const V = model.config.vocabSize;
  const allowed = opts.restrict?.(targets, mask, B, T, V);
  const batch: TokenBatch = {
    ids,
    targets,
    B,
    T,
    ...(opts.masks ? { want: mask } : {}),
    ...(allowed ? { allowed } : {}),
  };
  const [lp, en] = tf.tidy(() => {
    const r = tokenLogProbs(model, batch, { entropy: opts.entropy !== false });
    return [r.logp, r.entropy ?? tf.zerosLike(r.logp)];
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
