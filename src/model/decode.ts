import * as tf from "@tensorflow/tfjs";
import type { Rng } from "../env/rng";
import { paddedLength } from "./buckets";
import type { ModelConfig } from "./config";
import type { ForwardResult, GPT, LayerKV } from "./gpt";
import type { TimeSplit } from "./timeSplit";
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
  /**
   * Per row, a constraint on what it may sample (null: none). A constrained row samples from its
   * distribution restricted to the allowed tokens and renormalized; its log-probs are those.
   */
  constraints?: readonly (TokenConstraint | null)[];
  /** Adds the seconds spent in the prefill and in the decoding steps here. */
  timings?: TimeSplit;
}

/** Restricts the tokens a row may sample next (e.g. to the action grammar). */
export interface TokenConstraint {
  /** 1 for each token id that may come next. */
  allowed(): Uint8Array;
  /** Records the token sampled. */
  push(token: number): void;
}

/** Logits with the disallowed tokens at -Infinity (a copy, float64). */
export function restrict(
  logits: ArrayLike<number>,
  offset: number,
  size: number,
  allowed: Uint8Array,
): Float64Array {
  const out = new Float64Array(size);
  for (let i = 0; i < size; i++) out[i] = allowed[i] ? (logits[offset + i] as number) : -Infinity;
  return out;
}

export interface Generated {
  /** Sampled ids per row, the stop token included when it was reached. */
  tokens: number[][];
  /** log p(token) under the sampling distribution (temperature applied), per sampled token. */
  logprobs: number[][];
}

/** Log-softmax of one row of logits at a temperature (in JS, float64). */
export function logSoftmax(
  logits: ArrayLike<number>,
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

/**
 * A copy head's next-token log-probs over the vocabulary for one row (in JS, float64), from the
 * vocabulary logits and the copy scores of the row's keys:
 * p(y) = [exp(l_y) + sum_{j: emit(next_j) = y} exp(s_j)] / Z (ModelConfig.copyHead, copyEmit).
 */
export function copyMixture(
  vocab: Float32Array,
  vOffset: number,
  V: number,
  scores: Float32Array,
  sOffset: number,
  next: readonly number[],
  /** GPT.copyEmitTable: what a pointer to a key followed by a token writes (null: that token). */
  emit: Int32Array | null = null,
): Float64Array {
  let max = -Infinity;
  for (let i = 0; i < V; i++) max = Math.max(max, vocab[vOffset + i] as number);
  for (let j = 0; j < next.length; j++) max = Math.max(max, scores[sOffset + j] as number);
  const p = new Float64Array(V);
  for (let i = 0; i < V; i++) p[i] = Math.exp((vocab[vOffset + i] as number) - max);
  for (let j = 0; j < next.length; j++) {
    const raw = next[j] as number;
    const y = emit && raw >= 0 && raw < V ? (emit[raw] as number) : raw;
    if (y >= 0 && y < V) p[y] = (p[y] as number) + Math.exp((scores[sOffset + j] as number) - max);
  }
  let z = 0;
  for (let i = 0; i < V; i++) z += p[i] as number;
  for (let i = 0; i < V; i++) p[i] = Math.log(p[i] as number) - Math.log(z);
  return p;
}

function sample(logp: Float64Array, temperature: number, rng: Rng): number {
  if (temperature <= 0) {
    let best = 0;
    for (let i = 1; i < logp.length; i++)
      if ((logp[i] as number) > (logp[best] as number)) best = i;
    return best;
  }
  let u = rng.float();
  let last = 0;
  for (let i = 0; i < logp.length; i++) {
    const p = Math.exp(logp[i] as number);
    if (p > 0) last = i;
    u -= p;
    if (u <= 0 && p > 0) return i;
  }
  return last; // rounding: the last token with any mass
}

/** A row's cached keys and values, [1, heads, length, headDim] per layer, for its context so far. */
export interface RowCache {
  kv: LayerKV[];
  length: number;
  /**
   * The context's token ids: its last two are the tokens one and two before the next one
   * (prevToken models), and a copy pointer to position j copies ids[j + 1].
   */
  ids: number[];
  /** Copy head: the context's copy keys [1, length, d]. */
  copyKeys?: tf.Tensor3D;
  /** Copy continuation: the copy query of the context's last position [1, d]. */
  copyQuery?: tf.Tensor2D;
}

export function disposeCache(cache: RowCache | null | undefined): void {
  if (!cache) return;
  for (const l of cache.kv) tf.dispose([l.k, l.v]);
  cache.copyKeys?.dispose();
  cache.copyQuery?.dispose();
}

/**
 * Attention scores a prefill holds at once, over every layer and the copy head (floats): a
 * forward pass keeps each layer's scores (and about three copies) until it ends, so this keeps
 * wasm's heap safe (a 4-layer model's prefill crashed it when only one layer was counted).
 */
export const ATTENTION_BUDGET = 5 * 2 ** 24;

/** The attention maps a forward pass holds per row and query: heads x layers, plus the copy head's. */
export function attentionMaps(config: ModelConfig): number {
  return config.nHeads * config.nLayers + (config.copyHead ? 1 : 0);
}

/** Rows whose prefill of `fresh` queries over `keys` keys fits ATTENTION_BUDGET at once (>= 1). */
export function prefillRows(config: ModelConfig, fresh: number, keys: number): number {
  return Math.max(1, Math.floor(ATTENTION_BUDGET / (attentionMaps(config) * fresh * keys)));
}

/** Rows of `width` ints as one packed Int32Array (Array.prototype.flat is slow per step). */
function flatRows(rows: readonly (readonly number[])[], width: number): Int32Array {
  const out = new Int32Array(rows.length * width);
  rows.forEach((row, i) => {
    for (let j = 0; j < width; j++) out[i * width + j] = row[j] as number;
  });
  return out;
}

/** What a decoding call keeps of a forward pass over n rows with `keys` keys: logits [n, V], the cache, the copy head's scores [n, keys]. */
function stepTensors(r: ForwardResult, n: number, V: number, keys: number) {
  return {
    logits: r.logits.reshape([n, V]) as tf.Tensor2D,
    kv: r.kv as LayerKV[],
    copyKeys: r.copyKeys,
    scores: r.copy ? (r.copy.scores.reshape([n, keys]) as tf.Tensor2D) : undefined,
    copyQuery: r.copyQuery,
  };
}

/** One row to decode: its cache (null = none) and the tokens that extend it (the whole context without one). */
export interface DecodeRow {
  cache: RowCache | null;
  tokens: number[];
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
  const r = await extendAndGenerate(
    model,
    contexts.map((tokens) => ({ cache: null, tokens })),
    opts,
    false,
  );
  return { tokens: r.tokens, logprobs: r.logprobs };
}

/**
 * Like `generate`, but each row may come with the cache of its earlier context, so that only
 * its new tokens (the last action and observation) go through the model: a rollout's context is
 * computed once across turns, not once per turn. With `keepCaches`, returns every row's cache
 * extended by its new tokens (the context before the sampled action); the caller owns them and
 * still owns (and disposes) the caches it passed in.
 */
export async function extendAndGenerate(
  model: GPT,
  rows: readonly DecodeRow[],
  opts: GenerateOptions,
  keepCaches: boolean,
): Promise<Generated & { caches: RowCache[] }> {
  const { vocabSize: V, context: C, nHeads: H, dModel: d, nLayers: L } = model.config;
  const hd = d / H;
  const stop = opts.stopToken ?? EOA;
  const started = performance.now();
  let prefilled = 0;
  const B = rows.length;
  const past = rows.map((r) => r.cache?.length ?? 0);
  const fresh = rows.map((r) => r.tokens.length);
  rows.forEach((r, b) => {
    if (fresh[b] === 0) throw new Error("every row needs at least one new token");
    const total = (past[b] as number) + (fresh[b] as number);
    if (total + opts.maxTokens > C)
      throw new Error(
        `context (${total}) + max tokens (${opts.maxTokens}) exceed the model's ${C}`,
      );
    if (r.cache && r.cache.kv.length !== L) throw new Error("a cache from another model");
  });
  // Each row's whole context: the cached one, then the new tokens.
  const contexts = rows.map((r) => [...(r.cache?.ids ?? []), ...r.tokens]);
  const copying = model.config.copyHead;
  const maxPast = Math.max(...past);
  const P = maxPast > 0 ? paddedLength(maxPast, C) : 0;
  const N = paddedLength(Math.max(...fresh), C);
  const ids = new Int32Array(B * N);
  const K = model.config.prevToken;
  // back[k]: the token k + 1 before each input (<pad> before the start).
  const back = Array.from({ length: K }, () => new Int32Array(B * N));
  const pos = new Int32Array(B * N);
  const mask = new Float32Array(B * (P + N));
  // Copy head: the token after each key, per row, over the keys so far (grows by one per step).
  const copyNext = copying ? rows.map(() => new Array<number>(P + N).fill(PAD)) : null;
  // Copy continuation: the index of the key before each key in its row (-1: none), over the keys
  // so far; a row's past and new tokens are contiguous in its context, not in the padded layout.
  const continuing = model.config.copyContinue;
  const prevKey = continuing ? rows.map(() => new Array<number>(P + N).fill(-1)) : null;
  rows.forEach((r, b) => {
    const S = past[b] as number;
    const ctx = contexts[b] as number[];
    const pad = N - r.tokens.length;
    for (let j = 0; j < P; j++) mask[b * (P + N) + j] = j >= P - S ? 1 : 0;
    for (let j = 0; j < N; j++) {
      const c = S + j - pad; // the token's index in its context
      ids[b * N + j] = j < pad ? PAD : (ctx[c] as number);
      back.forEach((t, k) => {
        t[b * N + j] = j < pad ? PAD : (ctx[c - k - 1] ?? PAD);
      });
      pos[b * N + j] = j < pad ? 0 : c;
      mask[b * (P + N) + P + j] = j < pad ? 0 : 1;
    }
    const keyBefore = prevKey?.[b];
    if (keyBefore) {
      for (let c = 1; c < S; c++) keyBefore[P - S + c] = P - S + c - 1;
      for (let j = pad; j < N; j++) keyBefore[P + j] = j > pad ? P + j - 1 : S > 0 ? P - 1 : -1;
    }
    const row = copyNext?.[b];
    if (!row) return;
    for (let c = 0; c < S; c++) row[P - S + c] = ctx[c + 1] as number;
    for (let j = pad; j < N; j++) row[P + j] = ctx[S + j - pad + 1] ?? PAD;
  });
  // Cached tensors have the context on `axis`: stacked, each left-padded to P (zeros without a
  // cache); and cut back out per row (its valid past, then its new tokens).
  const stackPast = (
    part: readonly DecodeRow[],
    from: number,
    get: (c: RowCache) => tf.Tensor | undefined,
    axis: number,
    empty: number[],
  ): tf.Tensor =>
    tf.concat(
      part.map((r, i) => {
        const t = r.cache ? get(r.cache) : undefined;
        if (!t) return tf.zeros(empty);
        const pads = t.shape.map(() => [0, 0] as [number, number]);
        pads[axis] = [P - (past[from + i] as number), 0];
        return tf.pad(t, pads);
      }),
      0,
    );
  // A row's part of a stacked tensor: split into rows in one op (a slice costs as much as its
  // source on wasm, so B slices of a stacked cache cost B times the cache), then its valid past
  // and new tokens cut from its own row.
  const cutRows = <T extends tf.Tensor>(t: T, axis: number): T[] =>
    (B === 1 ? [t] : (tf.split(t, B, 0) as T[])).map((row, b) => {
      const S = past[b] as number;
      const n = fresh[b] as number;
      const part = (from: number, length: number) => {
        const begin = row.shape.map(() => 0);
        const size = row.shape.slice();
        begin[axis] = from;
        size[axis] = length;
        return tf.slice(row, begin, size);
      };
      const added = part(P + N - n, n);
      return (S === 0 ? added : tf.concat([part(P - S, S), added], axis)) as T;
    });
  let keyMask = tf.tensor2d(mask, [B, P + N]);
  // The prefill of rows from..from+n-1: their new tokens through the model over their caches.
  const prefill = (from: number, n: number) =>
    tf.tidy(() => {
      const part = rows.slice(from, from + n);
      const cols = (a: ArrayLike<number>, width: number) =>
        Array.prototype.slice.call(a, from * width, (from + n) * width) as number[];
      const stack = (get: (c: RowCache) => tf.Tensor | undefined, axis: number, empty: number[]) =>
        stackPast(part, from, get, axis, empty);
      const pastKV: LayerKV[] | undefined =
        P > 0
          ? Array.from({ length: L }, (_, l) => {
              const side = (which: "k" | "v") =>
                stack((c) => c.kv[l]?.[which], 2, [1, H, P, hd]) as tf.Tensor4D;
              return { k: side("k"), v: side("v") };
            })
          : undefined;
      const pastCopyKeys =
        copying && P > 0 ? (stack((c) => c.copyKeys, 1, [1, P, d]) as tf.Tensor3D) : undefined;
      const r = model.forward(tf.tensor2d(cols(ids, N), [n, N], "int32"), {
        positions: tf.tensor2d(cols(pos, N), [n, N], "int32"),
        backIds: back.map((t) => tf.tensor2d(cols(t, N), [n, N], "int32")),
        keyMask: tf.tensor2d(cols(mask, P + N), [n, P + N]),
        ...(pastKV ? { past: pastKV } : {}),
        ...(pastCopyKeys ? { pastCopyKeys } : {}),
        ...(copyNext
          ? {
              copyNext: tf.tensor2d(
                flatRows(copyNext.slice(from, from + n), P + N),
                [n, P + N],
                "int32",
              ),
            }
          : {}),
        ...(prevKey
          ? {
              copyPrevKey: tf.tensor2d(
                flatRows(prevKey.slice(from, from + n), P + N),
                [n, P + N],
                "int32",
              ),
              pastCopyQuery: tf.concat(
                part.map((r) => r.cache?.copyQuery ?? tf.zeros([1, d])),
                0,
              ) as tf.Tensor2D,
            }
          : {}),
        returnKV: true,
        lastOnly: true,
        mixture: false,
      });
      return stepTensors(r, n, V, P + N);
    });
  // Rows in chunks whose attention maps fit the budget (wasm's heap), then stacked.
  const perChunk = prefillRows(model.config, N, P + N);
  const parts: ReturnType<typeof prefill>[] = [];
  for (let from = 0; from < B; from += perChunk)
    parts.push(prefill(from, Math.min(perChunk, B - from)));
  let { logits, kv, copyKeys, scores, copyQuery } =
    parts.length === 1
      ? (parts[0] as ReturnType<typeof prefill>)
      : tf.tidy(() => {
          const cat = <T extends tf.Tensor>(
            get: (p: ReturnType<typeof prefill>) => T | undefined,
          ) =>
            parts[0] && get(parts[0])
              ? (tf.concat(
                  parts.map((p) => get(p) as T),
                  0,
                ) as T)
              : undefined;
          return {
            logits: cat((p) => p.logits) as tf.Tensor2D,
            kv: (parts[0] as ReturnType<typeof prefill>).kv.map((_, l) => ({
              k: cat((p) => p.kv[l]?.k) as tf.Tensor4D,
              v: cat((p) => p.kv[l]?.v) as tf.Tensor4D,
            })),
            copyKeys: cat((p) => p.copyKeys),
            scores: cat((p) => p.scores),
            copyQuery: cat((p) => p.copyQuery),
          };
        });
  if (parts.length > 1)
    for (const p of parts) {
      tf.dispose([p.logits, ...p.kv.flatMap((l) => [l.k, l.v])]);
      for (const t of [p.copyKeys, p.scores, p.copyQuery]) t?.dispose();
    }
  // Each row's extended cache: its valid past keys, then its new tokens' keys. On wasm and cpu
  // cut in JS from one read of each stacked tensor (a tensor slice there costs as much as its
  // source, so B slices of a stacked cache would cost B times the cache); on a GPU with tf ops.
  const onCpu = tf.getBackend() === "wasm" || tf.getBackend() === "cpu";
  const cutAll = async <T extends tf.Tensor>(t: T, axis: number): Promise<T[]> => {
    if (!onCpu) return tf.tidy(() => cutRows(t, axis));
    const data = (await t.data()) as Float32Array;
    const W = t.shape[axis] as number;
    const outer = t.shape.slice(1, axis).reduce((a, x) => a * x, 1);
    const inner = t.shape.slice(axis + 1).reduce((a, x) => a * x, 1);
    return rows.map((_, b) => {
      const S = past[b] as number;
      const n = fresh[b] as number;
      const out = new Float32Array(outer * (S + n) * inner);
      const base = b * outer * W * inner;
      for (let o = 0; o < outer; o++) {
        const from = base + o * W * inner;
        const to = o * (S + n) * inner;
        out.set(data.subarray(from + (P - S) * inner, from + P * inner), to);
        out.set(data.subarray(from + (P + N - n) * inner, from + (P + N) * inner), to + S * inner);
      }
      const shape = t.shape.slice();
      shape[0] = 1;
      shape[axis] = S + n;
      return tf.tensor(out, shape) as T;
    });
  };
  const caches: RowCache[] = [];
  if (keepCaches) {
    const layers: { k: tf.Tensor4D[]; v: tf.Tensor4D[] }[] = [];
    for (const l of kv) layers.push({ k: await cutAll(l.k, 2), v: await cutAll(l.v, 2) });
    const keys = copyKeys ? await cutAll(copyKeys, 1) : null;
    const queries = copyQuery
      ? B === 1
        ? [tf.clone(copyQuery)]
        : (tf.split(copyQuery, B, 0) as tf.Tensor2D[])
      : null;
    for (let b = 0; b < B; b++)
      caches.push({
        kv: layers.map((l) => ({ k: l.k[b] as tf.Tensor4D, v: l.v[b] as tf.Tensor4D })),
        length: (past[b] as number) + (fresh[b] as number),
        ids: contexts[b] as number[],
        ...(keys ? { copyKeys: keys[b] as tf.Tensor3D } : {}),
        ...(queries ? { copyQuery: queries[b] as tf.Tensor2D } : {}),
      });
  }
  // The step's tensors (the cache so far, its last logits and copy scores), freed when replaced.
  const release = () => {
    logits.dispose();
    keyMask.dispose();
    for (const l of kv) tf.dispose([l.k, l.v]);
    copyKeys?.dispose();
    scores?.dispose();
    copyQuery?.dispose();
  };
  const tokens: number[][] = rows.map(() => []);
  const logprobs: number[][] = rows.map(() => []);
  const done = rows.map(() => false);
  // The rows still decoding, in the order the step's tensors hold them: rows that have stopped
  // are dropped (compacted out) once a quarter of the batch has, so a step computes live rows.
  let live = rows.map((_, b) => b);
  // The tokens one to K before each row's next input: the context's tail, then the sampled ones.
  let before = Array.from({ length: K }, (_, k) =>
    Int32Array.from(contexts.map((c) => c.at(-k - 1) ?? PAD)),
  );
  let copyRows = copyNext;
  let prevRows = prevKey;
  try {
    for (let step = 0; step < opts.maxTokens; step++) {
      const values = (await logits.data()) as Float32Array;
      if (step === 0) prefilled = performance.now();
      // Copy head: the mixture of the vocabulary and the pointers to every key so far, in JS.
      const copyValues = scores ? ((await scores.data()) as Float32Array) : null;
      const width = P + N + step; // keys so far
      const nb = live.length;
      const next = new Int32Array(nb);
      for (let i = 0; i < nb; i++) {
        const b = live[i] as number;
        if (done[b]) {
          next[i] = PAD;
          continue;
        }
        const constraint = opts.constraints?.[b] ?? null;
        let row: ArrayLike<number> = values;
        let offset = i * V;
        if (copyValues && copyRows) {
          row = copyMixture(
            values,
            i * V,
            V,
            copyValues,
            i * width,
            copyRows[i] as number[],
            model.copyEmitTable,
          );
          offset = 0;
        }
        if (constraint) {
          row = restrict(row, offset, V, constraint.allowed());
          offset = 0;
        }
        const lp = logSoftmax(row, offset, V, opts.temperature);
        const token = sample(lp, opts.temperature, opts.rng);
        constraint?.push(token);
        tokens[b]?.push(token);
        logprobs[b]?.push(lp[token] as number);
        next[i] = token;
        if (token === stop) done[b] = true;
      }
      if (done.every(Boolean) || step === opts.maxTokens - 1) break;
      // The last key's next token is the one fed now; the new key's is not known yet.
      copyRows?.forEach((row, i) => {
        row[width - 1] = next[i] as number;
        row.push(PAD);
      });
      // The new key follows the last one.
      for (const row of prevRows ?? []) row.push(width - 1);
      // Drop the stopped rows once they are a quarter of the batch.
      const keep = live.map((b, i) => (done[b] ? -1 : i)).filter((i) => i >= 0);
      let fedNext = next;
      if (keep.length <= (nb * 3) / 4) {
        const idx = tf.tensor1d(keep, "int32");
        const pick = <T extends tf.Tensor>(t: T): T => {
          const out = tf.gather(t, idx, 0) as T;
          t.dispose();
          return out;
        };
        kv = kv.map((l) => ({ k: pick(l.k), v: pick(l.v) }));
        if (copyKeys) copyKeys = pick(copyKeys);
        if (copyQuery) copyQuery = pick(copyQuery);
        keyMask = pick(keyMask);
        idx.dispose();
        live = keep.map((i) => live[i] as number);
        copyRows = copyRows ? keep.map((i) => copyRows?.[i] as number[]) : null;
        prevRows = prevRows ? keep.map((i) => prevRows?.[i] as number[]) : null;
        before = before.map((t) => Int32Array.from(keep, (i) => t[i] as number));
        fedNext = Int32Array.from(keep, (i) => next[i] as number);
      }
      const n = live.length;
      const positions = new Int32Array(n);
      for (let i = 0; i < n; i++) {
        const b = live[i] as number;
        positions[i] = (past[b] as number) + (fresh[b] as number) + step;
      }
      const nextMask = tf.tidy(() => tf.concat([keyMask, tf.ones([n, 1])], 1) as tf.Tensor2D);
      const r = tf.tidy(() => {
        const out = model.forward(tf.tensor2d(fedNext, [n, 1], "int32"), {
          positions: tf.tensor2d(positions, [n, 1], "int32"),
          backIds: before.map((t) => tf.tensor2d(t.slice(), [n, 1], "int32")),
          keyMask: nextMask,
          past: kv,
          ...(copyKeys && copyRows
            ? {
                pastCopyKeys: copyKeys,
                copyNext: tf.tensor2d(flatRows(copyRows, width + 1), [n, width + 1], "int32"),
              }
            : {}),
          ...(prevRows && copyQuery
            ? {
                copyPrevKey: tf.tensor2d(flatRows(prevRows, width + 1), [n, width + 1], "int32"),
                pastCopyQuery: copyQuery,
              }
            : {}),
          returnKV: true,
          mixture: false,
        });
        return stepTensors(out, n, V, width + 1);
      });
      for (let k = K - 1; k > 0; k--) before[k]?.set(before[k - 1] as Int32Array);
      before[0]?.set(fedNext);
      release();
      logits = r.logits;
      kv = r.kv;
      copyKeys = r.copyKeys;
      scores = r.scores;
      copyQuery = r.copyQuery;
      keyMask = nextMask;
    }
  } finally {
    release();
    if (opts.timings) {
      const end = performance.now();
      opts.timings.prefill += ((prefilled || end) - started) / 1000;
      opts.timings.decode += (end - (prefilled || end)) / 1000;
    }
  }
  return { tokens, logprobs, caches };
}
