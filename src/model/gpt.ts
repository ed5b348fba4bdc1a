import * as tf from "@tensorflow/tfjs";
import { Rng } from "../env/rng";
import { COPY_TARGET_DIM, type ModelConfig, validateConfig } from "./config";
import { explicitTransposes, gatherRows, mm, mmT } from "./ops";
import {
  copyDecodeHead,
  decodeAttention,
  decodeLayer,
  embedSum,
  fusedAttention,
  fusedAttentionPacked,
  fusedKernelsActive,
  layerNorm as fusedLayerNorm,
  linear,
  matMulBiasGelu,
  recordingGradients,
} from "./webgpu";

export { gatherRows } from "./ops";

/** Keys and values of one layer's attention for a batch: [B, heads, keys, headDim]. */
export type LayerKV = {
  k: tf.Tensor4D;
  v: tf.Tensor4D;
};

export interface ForwardOptions {
  /** Position of each token [B, T] (int32); default 0..T-1 on every row. */
  positions?: tf.Tensor2D;
  /**
   * The tokens before each token, for configs with prevToken > 0: backIds[k] [B, T] (int32) is the
   * token k + 1 back. Default: the ids shifted right by k + 1, <pad> in the first columns (right
   * for whole sequences; decoding with a cache or padding passes them).
   */
  backIds?: tf.Tensor2D[];
  /** 1 where a key may be attended, 0 for padding: [B, past + T]; default all 1. */
  keyMask?: tf.Tensor2D;
  /** Cached keys and values of earlier tokens, per layer. */
  past?: LayerKV[];
  /** Also return this call's keys and values (past included), for incremental decoding. */
  returnKV?: boolean;
  /**
   * Copy head: the token that follows each key, [B, past + T] (int32): what a pointer to that key
   * copies. Default: the ids shifted left by one (right for whole sequences; decoding passes it).
   */
  copyNext?: tf.Tensor2D;
  /** Copy head: cached copy keys of earlier tokens [B, past, d]. */
  pastCopyKeys?: tf.Tensor3D;
  /**
   * Copy head: false returns the vocabulary head's logits as `logits` and the copy scores in
   * `copy` (cheap: the caller needs only some tokens' log-probs); true (default) returns in
   * `logits` the log of the full mixture over the vocabulary (a [T, S] x [S, V] product).
   */
  mixture?: boolean;
  /** Only the last position's logits ([B, 1, V]): decoding's first pass needs no more. */
  lastOnly?: boolean;
  /**
   * Copy continuation (calls with `past` or `lastOnly`): the index of the key before each key in
   * its row's context, [B, past + T] (int32, -1 for none). Default: j - 1 (contiguous rows, no
   * padding before a row's tokens); decoding with left-padded rows passes it.
   */
  copyPrevKey?: tf.Tensor2D;
  /**
   * Copy continuation: the copy query of each row's position before its last token when that
   * position is not in this call (it is cached), [B, d]; zeros where there is none.
   */
  pastCopyQuery?: tf.Tensor2D;
}

/** The copy head's part of a forward pass (see ModelConfig.copyHead). */
export interface CopyScores {
  /** s[b, t, j] for every key j: -1e9 where j is not an earlier position [B, T, S]. */
  scores: tf.Tensor3D;
  /**
   * The token after key j [B, S] (int32): what a pointer to it writes, through
   * GPT.copyEmitTable where the config maps it (mixtureLogProbs takes the mapped tokens).
   */
  next: tf.Tensor2D;
}

export interface ForwardResult {
  /** [B, T, vocab] */
  logits: tf.Tensor3D;
  kv?: LayerKV[];
  /** The final (layer-normed) hidden state [B, T, d], from which the logits are read (a value head reads it too). */
  hidden: tf.Tensor3D;
  /** Copy head with returnKV: the copy keys, past included [B, past + T, d]. */
  copyKeys?: tf.Tensor3D;
  /** Copy head with mixture false: the copy scores, next to the vocabulary logits. */
  copy?: CopyScores;
  /** Copy continuation with returnKV: the last position's copy query [B, d], for the next call. */
  copyQuery?: tf.Tensor2D;
}

/** The embedding table of the token k + 1 back: wprev, wprev2, wprev3, ... */
function backTable(k: number): string {
  return k === 0 ? "wprev" : `wprev${k + 1}`;
}

/** Softmax over the allowed keys only (mask 1); rows with none are all zero. */
function maskedSoftmax(scores: tf.Tensor, mask: tf.Tensor): tf.Tensor {
  return tf.softmax(scores.add(mask.sub(1).mul(1e9))).mul(mask);
}

/**
 * a_{t-1}(j-1) for every query t and key j of whole sequences: the copy attention (softmax of the
 * content scores over the allowed keys, zero elsewhere) moved down one row and right one column.
 * No gradient flows through it, and its intermediates are freed at once.
 */
const shiftedAttention = tf.customGrad(((content: tf.Tensor, allowed: tf.Tensor) => {
  const value = tf.tidy(() => {
    const [B, T, S] = content.shape as [number, number, number];
    const a = maskedSoftmax(content, allowed);
    return tf.pad(a.slice([0, 0, 0], [B, T - 1, S - 1]), [
      [0, 0],
      [1, 0],
      [1, 0],
    ]);
  });
  return { value, gradFunc: () => [tf.zerosLike(content), tf.zerosLike(allowed)] };
}) as unknown as Parameters<typeof tf.customGrad>[0]) as (
  content: tf.Tensor3D,
  allowed: tf.Tensor3D,
) => tf.Tensor3D;

/** The continuation prior's scale: a bonus of c * COPY_CONTINUE_SCALE nats at full confidence. */
export const COPY_CONTINUE_SCALE = 10;
/**
 * The copied-token term's scale (ModelConfig.copyTarget), a learning-rate multiplier for its
 * table: the table starts at zero, and the events that teach it (a copy that must stop where its
 * source goes on) are rare, so AdamW, whose steps are about lr whatever the gradient, moved it
 * 0.01 in 50 steps at scale 10 (a 7-nat gradient event each few steps, 2026-12-06).
 */
export const COPY_TARGET_SCALE = 30;

let instances = 0;

/** Fewest queries in a call for which attention runs per row and head as 2-D products (wasm). */
const PER_HEAD_MIN_QUERIES = 4;
/** Queries per block of per-head attention: each block reads the keys up to its last query. */
const ATTENTION_BLOCK = 256;

/**
 * The causal attention bias of queries from..from+n-1 of a call (after `past` cached keys) over
 * its first `keys` keys, [n, keys]: 0 where key s <= past + query, -1e9 after. Built in JS: as
 * tensor ops it is a broadcast comparison, wasm's slowest path.
 */
function causalBias(n: number, keys: number, past: number, from: number): tf.Tensor2D {
  const out = new Float32Array(n * keys);
  for (let i = 0; i < n; i++) out.fill(-1e9, i * keys + past + from + i + 1, (i + 1) * keys);
  return tf.tensor2d(out, [n, keys]);
}

/**
 * ids [B, T] moved `by` columns right (the token `by` before each; by < 0: the one after), the
 * vacated columns filled with 0, the <pad> id.
 */
function shiftIds(ids: tf.Tensor2D, by: number): tf.Tensor2D {
  const [B, T] = ids.shape;
  const n = Math.abs(by);
  const padded = tf.pad(ids, [[0, 0], by > 0 ? [n, 0] : [0, n]]);
  return padded.slice([0, by > 0 ? 0 : n], [B, T]) as tf.Tensor2D;
}

/**
 * The copy head's next-token distribution over the vocabulary, as log-probs [B, T, V]:
 * p(y) = [exp(l_y) + sum_{j: next_j = y} exp(s_j)] / Z, Z summing over the vocabulary and every key
 * (`next_j`: what a pointer to key j writes, ModelConfig.copyEmit applied).
 */
export function mixtureLogProbs(vocab: tf.Tensor3D, copy: CopyScores): tf.Tensor3D {
  const [B, S] = copy.next.shape;
  const V = vocab.shape[2];
  const onehot = tf
    .oneHot(copy.next.reshape([B * S]), V)
    .toFloat()
    .reshape([B, S, V]);
  const z = tf.logSumExp(tf.concat([vocab, copy.scores], 2), 2, true);
  const fromCopy = tf.matMul(tf.exp(copy.scores.sub(z)), onehot);
  return tf.log(tf.exp(vocab.sub(z)).add(fromCopy).add(1e-30)) as tf.Tensor3D;
}

/** ModelConfig.copyEmit as a lookup table over the vocabulary (identity elsewhere); null if none. */
function emitTable(config: ModelConfig): Int32Array | null {
  if (!config.copyEmit?.length) return null;
  const table = Int32Array.from({ length: config.vocabSize }, (_, i) => i);
  for (const [from, to] of config.copyEmit) table[from] = to;
  return table;
}

/** Per-layer parameter names, in checkpoint order. */
function layerNames(i: number): string[] {
  return [
    `h${i}.ln1.g`,
    `h${i}.ln1.b`,
    `h${i}.attn.wqkv`,
    `h${i}.attn.bqkv`,
    `h${i}.attn.wo`,
    `h${i}.attn.bo`,
    `h${i}.ln2.g`,
    `h${i}.ln2.b`,
    `h${i}.mlp.w1`,
    `h${i}.mlp.b1`,
    `h${i}.mlp.w2`,
    `h${i}.mlp.b2`,
  ];
}

/**
 * A decoder-only transformer (nanoGPT shape): token + learned position embeddings (+ an embedding
 * of the previous token, config.prevToken), pre-norm blocks
 * of causal self-attention and a GELU MLP, a final layer norm, and an output head tied to the token
 * embedding (tied: the input and output vocabularies are the same, and at this size the embedding
 * is a large share of the parameters). All matmuls are 2-D (tfjs #8721: 3-D x 2-D matMul has a
 * wrong-shape gradient); on wasm, embeddings are one-hot matmuls (no gather gradient there).
 */
export class GPT {
  readonly config: ModelConfig;
  private readonly vars = new Map<string, tf.Variable>();
  private readonly order: string[];
  /** ModelConfig.copyEmit as a table: the token a pointer to a key followed by id writes; null: id. */
  readonly copyEmitTable: Int32Array | null;
  /** copyEmitTable on the backend, made on first use and kept until dispose(). */
  private copyEmitTensor: tf.Tensor1D | null = null;

  /** Parameters initialised in JS from a seed: the same weights on every backend. */
  constructor(config: ModelConfig, seed = 0) {
    this.config = config;
    this.copyEmitTable = emitTable(config);
    const { vocabSize: V, context: C, dModel: d, nLayers: L, dMlp: m } = config;
    const rng = new Rng(seed);
    const prefix = `gpt${instances++}/`;
    const normal = (shape: number[], std: number) => {
      const n = shape.reduce((a, b) => a * b, 1);
      const out = new Float32Array(n);
      for (let i = 0; i < n; i += 2) {
        // Box-Muller from the seeded stream.
        const u = Math.max(rng.float(), 1e-12);
        const r = Math.sqrt(-2 * Math.log(u)) * std;
        const t = 2 * Math.PI * rng.float();
        out[i] = r * Math.cos(t);
        if (i + 1 < n) out[i + 1] = r * Math.sin(t);
      }
      return tf.tensor(out, shape);
    };
    const add = (name: string, value: tf.Tensor) => {
      this.vars.set(name, tf.variable(value, true, prefix + name));
      value.dispose();
    };
    const residStd = 0.02 / Math.sqrt(2 * L);
    add("wte", normal([V, d], 0.02));
    add("wpe", normal([C, d], 0.01));
    for (let k = 0; k < config.prevToken; k++) add(backTable(k), normal([V, d], 0.02));
    for (let i = 0; i < L; i++) {
      add(`h${i}.ln1.g`, tf.ones([d]));
      add(`h${i}.ln1.b`, tf.zeros([d]));
      add(`h${i}.attn.wqkv`, normal([d, 3 * d], 0.02));
      add(`h${i}.attn.bqkv`, tf.zeros([3 * d]));
      add(`h${i}.attn.wo`, normal([d, d], residStd));
      add(`h${i}.attn.bo`, tf.zeros([d]));
      add(`h${i}.ln2.g`, tf.ones([d]));
      add(`h${i}.ln2.b`, tf.zeros([d]));
      add(`h${i}.mlp.w1`, normal([d, m], 0.02));
      add(`h${i}.mlp.b1`, tf.zeros([m]));
      add(`h${i}.mlp.w2`, normal([m, d], residStd));
      add(`h${i}.mlp.b2`, tf.zeros([d]));
    }
    add("lnf.g", tf.ones([d]));
    add("lnf.b", tf.zeros([d]));
    if (config.copyHead) {
      add("copy.wq", normal([d, d], 0.02));
      add("copy.wk", normal([d, d], 0.02));
      add("copy.b", tf.zeros([1]));
    }
    if (config.copyContinue) add("copy.cont", tf.zeros([1]));
    if (config.copyTarget) {
      // Unit-scale queries (std 1/sqrt(d) on a layer-normed state): the table starts at zero and
      // moves about lr a step, so its term grows as fast as the query is large.
      add("copy.wc", normal([d, COPY_TARGET_DIM], 1 / Math.sqrt(d)));
      add("copy.tok", tf.zeros([V, COPY_TARGET_DIM])); // the term starts at 0; W_c gives it a gradient
      add("copy.bias", tf.zeros([V, 1])); // how readily each token is copied, whatever the query
    }
    this.order = [
      "wte",
      "wpe",
      ...Array.from({ length: config.prevToken }, (_, k) => backTable(k)),
      ...Array.from({ length: L }, (_, i) => layerNames(i)).flat(),
      "lnf.g",
      "lnf.b",
      ...(config.copyHead ? ["copy.wq", "copy.wk", "copy.b"] : []),
      ...(config.copyContinue ? ["copy.cont"] : []),
      ...(config.copyTarget ? ["copy.wc", "copy.tok", "copy.bias"] : []),
    ];
  }

  /** Parameters in checkpoint order. */
  weights(): { name: string; variable: tf.Variable }[] {
    return this.order.map((name) => ({ name, variable: this.vars.get(name) as tf.Variable }));
  }

  trainableVariables(): tf.Variable[] {
    return this.order.map((n) => this.vars.get(n) as tf.Variable);
  }

  paramCount(): number {
    return this.weights().reduce((s, w) => s + w.variable.size, 0);
  }

  /** One parameter by name (e.g. "wte", "copy.wq"); throws for a name the model does not have. */
  weight(name: string): tf.Variable {
    return this.w(name);
  }

  private w(name: string): tf.Variable {
    const v = this.vars.get(name);
    if (!v) throw new Error(`no parameter ${name}`);
    return v;
  }

  /**
   * Looks rows up in a [rows, d] table. On wasm (no UnsortedSegmentSum, so no gather gradient)
   * and cpu (whose UnsortedSegmentSum loops over segments: 20x slower steps) it is a one-hot matmul.
   */
  private embed(table: tf.Tensor2D, ids: tf.Tensor1D, rows: number): tf.Tensor2D {
    const backend = tf.getBackend();
    if (backend === "wasm" || backend === "cpu") return gatherRows(table, ids, rows);
    return tf.gather(table, ids);
  }

  private layerNorm(x: tf.Tensor2D, g: string, b: string): tf.Tensor2D {
    if (fusedKernelsActive())
      return fusedLayerNorm(x, this.w(g) as tf.Tensor1D, this.w(b) as tf.Tensor1D);
    const { mean, variance } = tf.moments(x, -1, true);
    return x.sub(mean).div(variance.add(1e-5).sqrt()).mul(this.w(g)).add(this.w(b));
  }

  /**
   * GELU, tanh approximation (GPT-2): 0.5 x (1 + tanh(u)) = x sigmoid(2u), u = sqrt(2/pi)(x + 0.044715 x^3).
   * The sigmoid form is the same function; tfjs-wasm's sigmoid is 16x faster than its tanh.
   */
  private gelu(x: tf.Tensor2D): tf.Tensor2D {
    const inner = x.add(x.mul(x).mul(x).mul(0.044715)).mul(2 * Math.sqrt(2 / Math.PI));
    return x.mul(inner.sigmoid());
  }

  /**
   * The transformer's trunk for ids [B, T]: embeddings, the blocks, the final layer norm.
   * Returns the final hidden state as [B * T, d] rows (and, with returnKV, each layer's keys and
   * values, past included, [B, heads, past + T, headDim]). Call inside tf.tidy.
   */
  trunk(ids: tf.Tensor2D, opts: ForwardOptions = {}): { out: tf.Tensor2D; kv: LayerKV[] } {
    const { vocabSize: V, context: C, dModel: d, nHeads: H, nLayers: L } = this.config;
    const [B, T] = ids.shape;
    const hd = d / H;
    const pastLen = opts.past?.[0]?.k.shape[2] ?? 0;
    const S = pastLen + T;
    const positions = opts.positions ?? tf.tile(tf.range(0, T, 1, "int32").expandDims(0), [B, 1]);
    // Token + position embeddings, plus the tokens one to prevToken before each token (default:
    // the ids shifted right, tf.pad filling 0, the <pad> id). One fused kernel on webgpu.
    const flat = (t: tf.Tensor2D) => t.reshape([B * T]) as tf.Tensor1D;
    const lookups: [tf.Tensor2D, tf.Tensor1D, number][] = [
      [this.w("wte") as tf.Tensor2D, flat(ids), V],
      [this.w("wpe") as tf.Tensor2D, flat(positions), C],
    ];
    for (let k = 0; k < this.config.prevToken; k++)
      lookups.push([
        this.w(backTable(k)) as tf.Tensor2D,
        flat(opts.backIds?.[k] ?? shiftIds(ids, k + 1)),
        V,
      ]);
    let x: tf.Tensor2D;
    if (fusedKernelsActive())
      x = embedSum(
        lookups.map((l) => l[0]),
        lookups.map((l) => l[1]),
      );
    else {
      x = this.embed(...(lookups[0] as [tf.Tensor2D, tf.Tensor1D, number]));
      for (const l of lookups.slice(1)) x = x.add(this.embed(...l)) as tf.Tensor2D;
    }
    // Per row, head and block of queries, 2-D products over the keys up to the block's last
    // query (wasm's fast path; half the T x S work of a full causal matrix) once a call has more
    // than a few queries; one batched 4-D product otherwise (decoding's single query: few flops,
    // few kernels).
    // With cached keys, slicing each row's and head's past out of the stacked cache costs about
    // B x H x the cache (a wasm slice costs its source), the batched product's scalar loop about
    // N x S x hd per row and head: per head pays once the new tokens outnumber 2 B H.
    const perHead =
      explicitTransposes() && T >= PER_HEAD_MIN_QUERIES && (pastLen === 0 || T > 2 * B * H);
    // On webgpu, fused kernels (src/model/webgpu): FlashAttention for a call's queries, one
    // dispatch per layer for a decoding step.
    const fused = fusedKernelsActive();
    const keyBias = opts.keyMask && !fused ? (opts.keyMask.sub(1).mul(1e9) as tf.Tensor2D) : null;
    // Additive attention bias: causal (key s <= past + query i), and key padding.
    const bias4 =
      perHead || fused
        ? null
        : causalBias(T, S, pastLen, 0)
            .reshape([1, 1, T, S])
            .add(keyBias ? keyBias.reshape([B, 1, 1, S]) : tf.scalar(0));
    const blocks: { from: number; size: number; keys: number; bias: tf.Tensor2D }[] = [];
    if (perHead)
      for (let from = 0; from < T; from += ATTENTION_BLOCK) {
        const size = Math.min(ATTENTION_BLOCK, T - from);
        const keys = pastLen + from + size;
        blocks.push({ from, size, keys, bias: causalBias(size, keys, pastLen, from) });
      }
    const kvOut: LayerKV[] = [];
    const heads = (t: tf.Tensor2D) =>
      t.reshape([B, T, H, hd]).transpose([0, 2, 1, 3]) as tf.Tensor4D;
    for (let i = 0; i < L; i++) {
      if (fused && T === 1 && opts.past?.[i] && !recordingGradients()) {
        // Decoding step on webgpu: the whole block as one kernel (webgpu/decodestep.ts).
        const r = this.fusedDecodeLayer(i, x, opts.past[i] as LayerKV, opts.keyMask, B, S);
        x = r.x;
        if (opts.returnKV) kvOut.push({ k: r.k, v: r.v });
        continue;
      }
      const h = this.layerNorm(x, `h${i}.ln1.g`, `h${i}.ln1.b`);
      const wqkv = this.w(`h${i}.attn.wqkv`) as tf.Tensor2D;
      const bqkv = this.w(`h${i}.attn.bqkv`) as tf.Tensor1D;
      const wo = this.w(`h${i}.attn.wo`) as tf.Tensor2D;
      // Per head on wasm: its own columns of W_qkv and rows of W_o (small weight slices), so no
      // activation is ever sliced by column or concatenated.
      // x W + b (webgpu/linear.ts): one dispatch on webgpu, a plain product elsewhere.
      const qkv = perHead ? null : linear(h, wqkv, bqkv);
      const past = opts.past?.[i];
      let merged: tf.Tensor2D | null = null;
      let projected: tf.Tensor2D | null = null;
      if (!qkv) {
        const proj = (which: number, j: number, rows: tf.Tensor2D) =>
          mm(rows, wqkv.slice([0, which * d + j * hd], [d, hd]) as tf.Tensor2D).add(
            bqkv.slice([which * d + j * hd], [hd]),
          ) as tf.Tensor2D;
        const rowsOut: tf.Tensor2D[] = [];
        const newK: tf.Tensor2D[][] = [];
        const newV: tf.Tensor2D[][] = [];
        const hRows = B === 1 ? [h] : (tf.split(h, B, 0) as tf.Tensor2D[]);
        for (let b = 0; b < B; b++) {
          const hRow = hRows[b] as tf.Tensor2D;
          let sum: tf.Tensor2D | null = null;
          newK.push([]);
          newV.push([]);
          for (let j = 0; j < H; j++) {
            // q / sqrt(hd): the scores' scale applied to [T, hd] queries, not [T, S] scores.
            const q = proj(0, j, hRow).mul(1 / Math.sqrt(hd)) as tf.Tensor2D;
            let k = proj(1, j, hRow);
            let v = proj(2, j, hRow);
            newK[b]?.push(k);
            newV[b]?.push(v);
            if (past) {
              const cached = (t: tf.Tensor4D) =>
                t.slice([b, j, 0, 0], [1, 1, pastLen, hd]).reshape([pastLen, hd]) as tf.Tensor2D;
              k = tf.concat([cached(past.k), k], 0);
              v = tf.concat([cached(past.v), v], 0);
            }
            // softmax(q k^T / sqrt(hd) + bias) v for each block of queries, then through W_o's rows.
            const parts = blocks.map((blk) => {
              const qb =
                blk.size === T ? q : (q.slice([blk.from, 0], [blk.size, hd]) as tf.Tensor2D);
              const kb = blk.keys === S ? k : (k.slice([0, 0], [blk.keys, hd]) as tf.Tensor2D);
              const vb = blk.keys === S ? v : (v.slice([0, 0], [blk.keys, hd]) as tf.Tensor2D);
              let bias: tf.Tensor2D = blk.bias;
              if (keyBias) bias = bias.add(keyBias.slice([b, 0], [1, blk.keys]));
              const p = tf.softmax(mmT(qb, kb).add(bias)) as tf.Tensor2D;
              return mm(p, vb);
            });
            const o = parts.length === 1 ? (parts[0] as tf.Tensor2D) : tf.concat(parts, 0);
            const out = mm(o, wo.slice([j * hd, 0], [hd, d]) as tf.Tensor2D);
            sum = sum ? (sum.add(out) as tf.Tensor2D) : out;
          }
          rowsOut.push(sum as tf.Tensor2D);
        }
        projected = B === 1 ? (rowsOut[0] as tf.Tensor2D) : tf.concat(rowsOut, 0);
        if (opts.returnKV) {
          // The cache's layout, [B, heads, keys, headDim]: each row's heads stacked.
          const stacked = (parts: tf.Tensor2D[][]) =>
            tf.stack(parts.map((row) => tf.stack(row))) as tf.Tensor4D;
          const k4 = stacked(newK);
          const v4 = stacked(newV);
          kvOut.push({
            k: past ? tf.concat([past.k, k4], 2) : k4,
            v: past ? tf.concat([past.v, v4], 2) : v4,
          });
        }
      } else if (fused && !past && !opts.returnKV) {
        // Training and scoring on webgpu: attention straight from x W_qkv + b, out in W_o's layout.
        merged = fusedAttentionPacked(
          qkv as tf.Tensor2D,
          H,
          opts.keyMask ?? (tf.ones([B, S]) as tf.Tensor2D),
        );
      } else {
        // One [B, heads, keys, headDim] layout for every row: fused kernels on webgpu, the stock
        // batched products elsewhere.
        const [q, k, v] = tf.split(qkv as tf.Tensor2D, 3, 1) as [
          tf.Tensor2D,
          tf.Tensor2D,
          tf.Tensor2D,
        ];
        let kh = heads(k);
        let vh = heads(v);
        if (past) {
          kh = tf.concat([past.k, kh], 2);
          vh = tf.concat([past.v, vh], 2);
        }
        if (opts.returnKV) kvOut.push({ k: kh, v: vh });
        let att: tf.Tensor4D; // [B, H, T, hd]
        if (fused) {
          const flat = (t: tf.Tensor4D) => t.reshape([B * H, t.shape[2], hd]) as tf.Tensor3D;
          const mask = opts.keyMask ?? (tf.ones([B, S]) as tf.Tensor2D);
          att = (
            T === 1
              ? decodeAttention(flat(heads(q)), flat(kh), flat(vh), mask)
              : fusedAttention(flat(heads(q)), flat(kh), flat(vh), { keyMask: mask })
          ).reshape([B, H, T, hd]);
        } else {
          const scores = tf
            .matMul(heads(q), kh, false, true)
            .mul(1 / Math.sqrt(hd))
            .add(bias4 as tf.Tensor);
          att = tf.matMul(tf.softmax(scores), vh) as tf.Tensor4D;
        }
        merged = att.transpose([0, 2, 1, 3]).reshape([B * T, d]) as tf.Tensor2D;
      }
      const bo = this.w(`h${i}.attn.bo`) as tf.Tensor1D;
      x = x.add(
        projected ? projected.add(bo) : linear(merged as tf.Tensor2D, wo, bo),
      ) as tf.Tensor2D;
      const h2 = this.layerNorm(x, `h${i}.ln2.g`, `h${i}.ln2.b`);
      const w1 = this.w(`h${i}.mlp.w1`) as tf.Tensor2D;
      const b1 = this.w(`h${i}.mlp.b1`) as tf.Tensor1D;
      const mlp = fused ? matMulBiasGelu(h2, w1, b1) : this.gelu(mm(h2, w1).add(b1) as tf.Tensor2D);
      x = x.add(
        linear(mlp, this.w(`h${i}.mlp.w2`) as tf.Tensor2D, this.w(`h${i}.mlp.b2`) as tf.Tensor1D),
      ) as tf.Tensor2D;
    }
    return { out: this.layerNorm(x, "lnf.g", "lnf.b"), kv: kvOut };
  }

  /**
   * Logits for a batch of token ids [B, T]. With `past`, the tokens continue cached sequences;
   * the attention mask is causal within the call plus `keyMask` over all keys. Call inside
   * tf.tidy (or dispose the results).
   */
  forward(ids: tf.Tensor2D, opts: ForwardOptions = {}): ForwardResult {
    const { vocabSize: V, dModel: d } = this.config;
    const [B, T] = ids.shape;
    const pastLen = opts.past?.[0]?.k.shape[2] ?? 0;
    const S = pastLen + T;
    const { out, kv: kvOut } = this.trunk(ids, opts);
    const hidden = out.reshape([B, T, d]) as tf.Tensor3D;
    if (fusedKernelsActive()) {
      // Decoding step on webgpu: both heads as one kernel (webgpu/decodestep.ts).
      const heads = this.fusedDecodeHeads(out, hidden, opts, T);
      if (heads) return opts.returnKV ? { ...heads, kv: kvOut } : heads;
    }
    // The positions whose next token is wanted: all, or the last only.
    const Q = opts.lastOnly ? 1 : T;
    const query = opts.lastOnly
      ? (hidden.slice([0, T - 1, 0], [B, 1, d]).reshape([B, d]) as tf.Tensor2D)
      : out;
    const vocab = mmT(query, this.w("wte") as tf.Tensor2D).reshape([B, Q, V]) as tf.Tensor3D;
    const result: ForwardResult = { logits: vocab, hidden };
    if (opts.returnKV) result.kv = kvOut;
    if (!this.config.copyHead) return result;
    // Copy head: s[t, j] = q_t . k_j / sqrt(d) + b for every earlier position j (key j < query t).
    let keys = mm(out, this.w("copy.wk") as tf.Tensor2D).reshape([B, T, d]) as tf.Tensor3D;
    if (opts.pastCopyKeys) keys = tf.concat([opts.pastCopyKeys, keys], 1);
    if (opts.returnKV) result.copyKeys = keys;
    const q = mm(query, this.w("copy.wq") as tf.Tensor2D).reshape([B, Q, d]);
    const first = pastLen + T - Q; // the first query's index among the keys
    const earlier = tf
      .less(
        tf.range(0, S, 1, "int32").reshape([1, S]),
        tf.range(first, first + Q, 1, "int32").reshape([Q, 1]),
      )
      .toFloat()
      .reshape([1, Q, S]);
    let allowed = earlier;
    if (opts.keyMask) allowed = allowed.mul(opts.keyMask.reshape([B, 1, S]));
    const content = tf.matMul(q, keys, false, true).mul(1 / Math.sqrt(d)) as tf.Tensor3D;
    let scores = content.add(this.w("copy.b")).add(allowed.sub(1).mul(1e9)) as tf.Tensor3D;
    if (this.config.copyContinue) {
      const bonus = this.copyContinuation(hidden, keys, content, allowed as tf.Tensor3D, opts, {
        B,
        T,
        Q,
        S,
        pastLen,
      });
      scores = scores.add(bonus.prior.mul(this.w("copy.cont")).mul(COPY_CONTINUE_SCALE));
      if (bonus.lastQuery) result.copyQuery = bonus.lastQuery;
    }
    const next = opts.copyNext ?? shiftIds(ids, -1);
    if (this.config.copyTarget) {
      // s_tj += 30 [(h_t W_c) . E_c[x_{j+1}] + b[x_{j+1}]]: the score sees the token the pointer would copy
      // (ModelConfig.copyTarget). Every key that counts has its next token in `next` (j < t).
      const r = COPY_TARGET_DIM;
      const qc = mm(query, this.w("copy.wc") as tf.Tensor2D); // [B * Q, r]
      if (Q === 1) {
        // One query per row (decoding): its term for every token, [B, V], then read at each key's
        // next token (a scalar gather, not a [B * S, r] one of embedding rows).
        const perToken = mmT(qc, this.w("copy.tok") as tf.Tensor2D).add(
          this.w("copy.bias").reshape([1, V]),
        );
        const offsets = tf.range(0, B * V, V, "int32").reshape([B, 1]); // broadcast: tile is slower
        const term = tf.gather(perToken.reshape([B * V]), next.add(offsets).reshape([B * S]));
        scores = scores.add(term.reshape([B, 1, S]).mul(COPY_TARGET_SCALE)) as tf.Tensor3D;
      } else {
        const copied = next.reshape([B * S]) as tf.Tensor1D;
        const kc = this.embed(this.w("copy.tok") as tf.Tensor2D, copied, V).reshape([B, S, r]);
        const bias = this.embed(this.w("copy.bias") as tf.Tensor2D, copied, V).reshape([B, 1, S]);
        scores = scores.add(
          tf
            .matMul(qc.reshape([B, Q, r]), kc, false, true)
            .add(bias)
            .mul(COPY_TARGET_SCALE),
        ) as tf.Tensor3D;
      }
    }
    // What each pointer writes: the token after its key, or its ModelConfig.copyEmit mapping.
    // Only the mixture needs it as a tensor; callers of the scores apply copyEmitTable in JS (a
    // gather over every key is a decoding step's slowest op on wasm).
    if (opts.mixture === false) {
      result.copy = { scores, next };
      return result;
    }
    const writes = this.copyEmitTable
      ? (tf
          .gather(this.emitTensor(this.copyEmitTable), next.reshape([B * S]))
          .reshape([B, S]) as tf.Tensor2D)
      : next;
    result.logits = mixtureLogProbs(vocab, { scores, next: writes });
    return result;
  }

  /**
   * The copy continuation prior a_{t-1}(j-1) for each query t and key j (see
   * ModelConfig.copyContinue): the previous position's copy attention, moved one key on.
   * Whole sequences (no past, every query): a shift of the [T, S] attention by one row and one
   * column. Decoding (one query, keys cached and left-padded): the previous query's attention
   * over its own earlier keys, read at each key's predecessor (`copyPrevKey`).
   */
  private copyContinuation(
    hidden: tf.Tensor3D,
    keys: tf.Tensor3D,
    content: tf.Tensor3D,
    allowed: tf.Tensor3D,
    opts: ForwardOptions,
    dims: { B: number; T: number; Q: number; S: number; pastLen: number },
  ): { prior: tf.Tensor3D; lastQuery?: tf.Tensor2D } {
    const { B, T, Q, S, pastLen } = dims;
    const d = this.config.dModel;
    // The copy query of this call's position t (counted from its first token).
    const queryAt = (t: number) =>
      tf.matMul(
        hidden.slice([0, t, 0], [B, 1, d]).reshape([B, d]),
        this.w("copy.wq"),
      ) as tf.Tensor2D;
    // The last position's query, for the next call (decoding keeps it).
    const last = opts.returnKV ? { lastQuery: queryAt(T - 1) } : {};
    if (Q === T && T > 1 && pastLen === 0 && !opts.copyPrevKey) {
      // a_{t-1}(j-1): row t-1 and key j-1 of the [T, S] attention (S = T). A fixed feature of
      // the scores (no gradient flows back through it): its [T, S] intermediates are not kept for
      // the backward pass, which a long sequence's memory (wasm: 4 GB) cannot afford.
      return { prior: shiftedAttention(content, allowed), ...last };
    }
    if (Q !== 1)
      throw new Error(
        "copy continuation: a call with cached keys must ask for the last position only",
      );
    const prevKey =
      opts.copyPrevKey ??
      (tf.tile(tf.range(-1, S - 1, 1, "int32").reshape([1, S]), [B, 1]) as tf.Tensor2D);
    // The previous position of the last query: its index among the keys, and its copy query
    // (from this call when it is the key right before, else the cached one).
    const prevIndex = prevKey.slice([0, S - 1], [B, 1]); // [B, 1]
    const past = opts.pastCopyQuery ?? tf.zeros([B, d]);
    let prevQuery: tf.Tensor = past;
    if (T >= 2) {
      const inCall = tf
        .equal(prevIndex, S - 2)
        .logicalAnd(tf.scalar(S - 2 >= pastLen))
        .toFloat(); // [B, 1]
      prevQuery = queryAt(T - 2)
        .mul(inCall)
        .add(past.mul(tf.scalar(1).sub(inCall)));
    }
    // Its keys: the allowed ones before it.
    const before = tf
      .less(tf.range(0, S, 1, "int32").reshape([1, S]), prevIndex)
      .toFloat()
      .mul(opts.keyMask ?? tf.ones([B, S]));
    const prevContent = tf
      .matMul(prevQuery.reshape([B, 1, d]), keys, false, true)
      .mul(1 / Math.sqrt(d))
      .reshape([B, S]);
    const a = maskedSoftmax(prevContent, before); // [B, S]
    // Each key j reads a at its predecessor (index -1 reads the zero column). A flat gather,
    // row b's entries at b * (S + 1): tfjs wasm's gather with batchDims reads other rows'
    // entries (tfjs #8658), which sampled from a wrong distribution on wasm.
    const padded = tf.concat([tf.zeros([B, 1]), a], 1).reshape([B * (S + 1)]);
    const rowOffset = tf.range(0, B * (S + 1), S + 1, "int32").reshape([B, 1]);
    const prior = tf
      .gather(padded, prevKey.add(rowOffset).add(tf.scalar(1, "int32")))
      .reshape([B, 1, S]) as tf.Tensor3D;
    return { prior, ...last };
  }

  /** decodeLayer (webgpu/decodestep.ts) for layer i: one token per row over its cached keys. */
  private fusedDecodeLayer(
    i: number,
    x: tf.Tensor2D,
    past: LayerKV,
    keyMask: tf.Tensor2D | undefined,
    B: number,
    S: number,
  ): { x: tf.Tensor2D; k: tf.Tensor4D; v: tf.Tensor4D } {
    const w = (n: string) => this.w(`h${i}.${n}`) as tf.Tensor as never;
    return decodeLayer(
      x,
      {
        ln1g: w("ln1.g"),
        ln1b: w("ln1.b"),
        wqkv: w("attn.wqkv"),
        bqkv: w("attn.bqkv"),
        wo: w("attn.wo"),
        bo: w("attn.bo"),
        ln2g: w("ln2.g"),
        ln2b: w("ln2.b"),
        w1: w("mlp.w1"),
        b1: w("mlp.b1"),
        w2: w("mlp.w2"),
        b2: w("mlp.b2"),
      },
      past.k,
      past.v,
      keyMask ?? (tf.ones([B, S]) as tf.Tensor2D),
    );
  }

  /**
   * forward()'s heads as one kernel (webgpu/decodestep.ts) for a decoding step: one new token per
   * row with cached copy keys, mixture false, copyHead + copyContinue + copyTarget; else null.
   */
  private fusedDecodeHeads(
    out: tf.Tensor2D,
    hidden: tf.Tensor3D,
    opts: ForwardOptions,
    T: number,
  ): ForwardResult | null {
    const c = this.config;
    if (
      T !== 1 ||
      !c.copyHead ||
      !c.copyContinue ||
      !c.copyTarget ||
      opts.mixture !== false ||
      !opts.pastCopyKeys ||
      !opts.copyNext ||
      !opts.copyPrevKey ||
      !opts.pastCopyQuery ||
      recordingGradients()
    )
      return null;
    const [B, P] = opts.pastCopyKeys.shape;
    const S = P + 1;
    const w = (n: string) => this.w(n) as tf.Tensor as never;
    const r = copyDecodeHead(
      {
        h: out,
        wte: w("wte"),
        wq: w("copy.wq"),
        wk: w("copy.wk"),
        cb: w("copy.b"),
        cont: w("copy.cont"),
        wc: w("copy.wc"),
        tok: w("copy.tok"),
        tbias: w("copy.bias"),
        pastKeys: opts.pastCopyKeys,
        keyMask: opts.keyMask ?? (tf.ones([B, S]) as tf.Tensor2D),
        prevKey: opts.copyPrevKey,
        pastQuery: opts.pastCopyQuery,
        next: opts.copyNext,
        ...(this.copyEmitTable ? { emit: this.emitTensor(this.copyEmitTable) } : {}),
      },
      COPY_CONTINUE_SCALE,
      COPY_TARGET_SCALE,
    );
    return {
      logits: r.logits,
      hidden,
      copy: { scores: r.scores, next: r.writes },
      ...(opts.returnKV ? { copyKeys: r.keys, copyQuery: r.query } : {}),
    };
  }

  /** Copies every weight from a model of the same config (e.g. a frozen reference, or a restore). */
  copyFrom(other: GPT): void {
    const theirs = new Map(other.weights().map((w) => [w.name, w.variable]));
    for (const { name, variable } of this.weights()) {
      const src = theirs.get(name);
      if (!src || src.shape.join() !== variable.shape.join())
        throw new Error(`copyFrom: parameter ${name} does not match`);
      variable.assign(src);
    }
  }

  /**
   * `from` grown new parameters: more previous-token embeddings (prevToken 1 -> 2), the copy
   * continuation prior, more layers (appended after the last). Its weights are copied and the new
   * ones start so that the new model computes exactly what `from` does, then learns: new tables
   * and the prior at zero; a new layer keeps its random init except its two output projections
   * (attention's wo, the MLP's w2) and their biases, at zero, so the block adds nothing to the
   * residual stream yet still gets a gradient (an all-zero block would get none).
   */
  static grow(
    from: GPT,
    changes: Partial<Pick<ModelConfig, "prevToken" | "copyContinue" | "copyTarget" | "nLayers">>,
    seed = 0,
  ): GPT {
    const config = { ...from.config, ...changes };
    if (config.nLayers < from.config.nLayers)
      throw new Error(`cannot drop layers (${from.config.nLayers} -> ${config.nLayers})`);
    if (config.prevToken < from.config.prevToken)
      throw new Error(
        `cannot drop previous-token embeddings (${from.config.prevToken} -> ${config.prevToken})`,
      );
    if (from.config.copyContinue && !config.copyContinue)
      throw new Error("cannot drop the copy continuation prior");
    if (from.config.copyTarget && !config.copyTarget)
      throw new Error("cannot drop the copy head's copied-token term");
    const model = new GPT(validateConfig(config), seed);
    const theirs = new Map(from.weights().map((w) => [w.name, w.variable]));
    const outputOfNewLayer = /^h\d+\.(attn\.wo|attn\.bo|mlp\.w2|mlp\.b2)$/;
    // The copied-token term's query side keeps its init: with both sides at zero it would get
    // no gradient (its table at zero is what keeps the function).
    const keepsInit = (name: string) => /^h\d+\./.test(name) || name === "copy.wc";
    for (const { name, variable } of model.weights()) {
      const src = theirs.get(name);
      if (src) variable.assign(src);
      else if (!keepsInit(name) || outputOfNewLayer.test(name))
        tf.tidy(() => variable.assign(tf.zerosLike(variable)));
    }
    return model;
  }

  /** A copy with its own weights (not trainable, e.g. GRPO's frozen reference). */
  clone(): GPT {
    const copy = new GPT(this.config, 0);
    copy.copyFrom(this);
    return copy;
  }

  /** The copyEmit table as an int32 tensor, kept out of any enclosing tidy. */
  private emitTensor(table: Int32Array): tf.Tensor1D {
    this.copyEmitTensor ??= tf.keep(tf.tensor1d(table, "int32"));
    return this.copyEmitTensor;
  }

  dispose(): void {
    for (const v of this.vars.values()) v.dispose();
    this.vars.clear();
    this.copyEmitTensor?.dispose();
    this.copyEmitTensor = null;
  }
}
