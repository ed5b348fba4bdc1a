/**
 * The kernel check page (kernels.html): on tf.setBackend("webgpu"), runs each custom kernel of
 * src/model/webgpu against its reference in plain tfjs ops (seeded random inputs, several shapes)
 * and reports the max abs difference of outputs and gradients, and how many GPU dispatches each
 * path took. Results go to window.__kernelResults and, as JSON, into data-testid="kernel-results";
 * e2e/kernels.spec.ts asserts on them.
 *
 * Dispatch counting: tfjs-webgpu has no cumulative counter (dispatchCountInPass resets at every
 * submit), so GPUComputePassEncoder.prototype.dispatchWorkgroups is wrapped: every compute
 * dispatch tfjs records (its own kernels and ours) bumps `dispatches`. Uploads and read-backs are
 * buffer copies, not dispatches, and are not counted.
 */
import * as tf from "@tensorflow/tfjs";
import type { WebGPUBackend } from "@tensorflow/tfjs-backend-webgpu";
import { AdamW, type OptimizerState, type StepReport } from "../../model/optim";
import {
  copyDecodeHead,
  decodeAttention,
  decodeLayer,
  embedSum,
  fusedAttention,
  fusedAttentionPacked,
  layerNorm,
  linear,
  matMulBiasGelu,
  referenceAttention,
  referenceAttentionPacked,
  referenceCopyDecodeHead,
  referenceDecodeAttention,
  referenceDecodeLayer,
  referenceEmbedSum,
  referenceLayerNorm,
  referenceLinear,
  referenceMatMulBiasGelu,
  referenceWriteKV,
  registerWebGpuKernels,
  setFusedKernels,
  writeKV,
} from "../../model/webgpu";

export interface KernelCheck {
  name: string;
  /** Max abs difference, kernel vs reference, per compared quantity (output, dq, ...). */
  diffs: Record<string, number>;
  /** Dispatches of the kernel path and of the reference path, when counted. */
  dispatches?: { kernel: number; reference: number };
  seconds: number;
}

export interface KernelResults {
  backend: string;
  checks: KernelCheck[];
  /** Dispatch counts at B*H=4, T=S=256, hd=32 (forward, forward+backward), and wall times. */
  dispatchBench?: Record<string, number>;
  /** One AdamW step of the model's 36 variables: dispatches and tf.profile kernels, both paths. */
  optimizer?: Record<string, number>;
  /** WebGPU validation / shader compilation errors seen during the run. */
  gpuErrors: string[];
  error?: string;
}

declare global {
  interface Window {
    __kernelResults?: KernelResults;
  }
}

const progressEl = document.querySelector<HTMLElement>("[data-testid=kernel-progress]");
const resultsEl = document.querySelector<HTMLElement>("[data-testid=kernel-results]");
const t0 = performance.now();

function progress(line: string): void {
  const stamped = `[${((performance.now() - t0) / 1000).toFixed(1)}s] ${line}`;
  console.log(`[kernels] ${stamped}`);
  if (progressEl) progressEl.textContent += `${stamped}\n`;
}

let dispatches = 0;

/** Wraps dispatchWorkgroups once so that every compute dispatch counts. */
function countDispatches(): void {
  const proto = (globalThis as { GPUComputePassEncoder?: { prototype: GPUComputePassEncoder } })
    .GPUComputePassEncoder?.prototype;
  if (!proto) throw new Error("no GPUComputePassEncoder");
  const original = proto.dispatchWorkgroups;
  proto.dispatchWorkgroups = function (this: GPUComputePassEncoder, x, y, z) {
    dispatches++;
    return original.call(this, x, y, z);
  };
}

/** mulberry32: a small seeded generator; normal draws by Box-Muller. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function randn<R extends tf.Rank>(rand: () => number, shape: number[]): tf.Tensor<R> {
  const n = shape.reduce((a, b) => a * b, 1);
  const vals = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const u = Math.max(rand(), 1e-12);
    vals[i] = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rand());
  }
  return tf.tensor(vals, shape) as unknown as tf.Tensor<R>;
}

async function maxAbsDiff(a: tf.Tensor, b: tf.Tensor): Promise<number> {
  const d = tf.tidy(() => a.sub(b).abs().max());
  const v = (await d.data())[0] as number;
  d.dispose();
  return v;
}

/** Dispatches of `f` (results read back, then disposed). */
async function countOf(f: () => tf.Tensor | tf.Tensor[]): Promise<number> {
  const before = dispatches;
  const out = tf.tidy(f);
  const outs = Array.isArray(out) ? out : [out];
  await Promise.all(outs.map((t) => t.data()));
  const n = dispatches - before;
  tf.dispose(outs);
  return n;
}

type Attn = (
  q: tf.Tensor3D,
  k: tf.Tensor3D,
  v: tf.Tensor3D,
  opts: { keyMask?: tf.Tensor2D },
) => tf.Tensor3D;

/** Output and d(sum(out * w))/d(q, k, v) of one attention implementation. */
function attentionWithGrads(
  attn: Attn,
  q: tf.Tensor3D,
  k: tf.Tensor3D,
  v: tf.Tensor3D,
  w: tf.Tensor3D,
  keyMask?: tf.Tensor2D,
): tf.Tensor[] {
  const out = tf.tidy(() => attn(q, k, v, { keyMask }));
  const grads = tf.grads((a: tf.Tensor, b: tf.Tensor, c: tf.Tensor) =>
    attn(a as tf.Tensor3D, b as tf.Tensor3D, c as tf.Tensor3D, { keyMask })
      .mul(w)
      .sum(),
  )([q, k, v]);
  return [out, ...grads];
}

interface AttnCase {
  b: number;
  h: number;
  t: number;
  s: number;
  hd: number;
  masked: boolean;
}

/** Runs `run` and reads its outputs back: the outputs and the GPU dispatches they took. */
async function counted(run: () => tf.Tensor[]): Promise<[tf.Tensor[], number]> {
  const before = dispatches;
  const out = run();
  await Promise.all(out.map((t) => t.data()));
  return [out, dispatches - before];
}

/** A key mask [B, S] with padding: row 0 left-padded by 3, other rows random holes. */
function makeMask(rand: () => number, b: number, s: number): tf.Tensor2D {
  const vals = new Float32Array(b * s);
  for (let r = 0; r < b; r++)
    for (let j = 0; j < s; j++) vals[r * s + j] = r === 0 ? (j < 3 ? 0 : 1) : rand() < 0.3 ? 0 : 1;
  return tf.tensor2d(vals, [b, s]);
}

async function checkAttention(c: AttnCase, seed: number): Promise<KernelCheck> {
  const start = performance.now();
  const rand = rng(seed);
  const bh = c.b * c.h;
  const q = randn<tf.Rank.R3>(rand, [bh, c.t, c.hd]);
  const k = randn<tf.Rank.R3>(rand, [bh, c.s, c.hd]);
  const v = randn<tf.Rank.R3>(rand, [bh, c.s, c.hd]);
  const w = randn<tf.Rank.R3>(rand, [bh, c.t, c.hd]);
  const mask = c.masked ? makeMask(rand, c.b, c.s) : undefined;
  const [mine, kernelDispatches] = await counted(() =>
    attentionWithGrads(fusedAttention, q, k, v, w, mask),
  );
  const [ref, refDispatches] = await counted(() =>
    attentionWithGrads(referenceAttention, q, k, v, w, mask),
  );
  const names = ["out", "dq", "dk", "dv"];
  const diffs = await diffsOf(names, mine, ref);
  tf.dispose([...mine, ...ref, q, k, v, w, ...(mask ? [mask] : [])]);
  return {
    name: `attention B=${c.b} H=${c.h} T=${c.t} S=${c.s} hd=${c.hd}${c.masked ? " masked" : ""}`,
    diffs,
    dispatches: { kernel: kernelDispatches, reference: refDispatches },
    seconds: (performance.now() - start) / 1000,
  };
}

/** Attention from packed qkv [B*T, 3D] against the reference: output and d(qkv). */
async function checkAttentionPacked(
  b: number,
  h: number,
  t: number,
  hd: number,
  seed: number,
): Promise<KernelCheck> {
  const start = performance.now();
  const rand = rng(seed);
  const qkv = randn<tf.Rank.R2>(rand, [b * t, 3 * h * hd]);
  const w = randn<tf.Rank.R2>(rand, [b * t, h * hd]);
  const mask = makeMask(rand, b, t);
  type Packed = (qkv: tf.Tensor2D, heads: number, mask: tf.Tensor2D) => tf.Tensor2D;
  const run = (f: Packed) => {
    const out = tf.tidy(() => f(qkv, h, mask));
    const [grad] = tf.grads((x: tf.Tensor) =>
      f(x as tf.Tensor2D, h, mask)
        .mul(w)
        .sum(),
    )([qkv]);
    return [out, grad as tf.Tensor];
  };
  const [mine, kernelDispatches] = await counted(() => run(fusedAttentionPacked));
  const [ref, refDispatches] = await counted(() => run(referenceAttentionPacked));
  const diffs = await diffsOf(["out", "dqkv"], mine, ref);
  tf.dispose([...mine, ...ref, qkv, w, mask]);
  return {
    name: `attentionPacked B=${b} H=${h} T=${t} hd=${hd} masked`,
    diffs,
    dispatches: { kernel: kernelDispatches, reference: refDispatches },
    seconds: (performance.now() - start) / 1000,
  };
}

async function checkDecode(seed: number): Promise<KernelCheck> {
  const start = performance.now();
  const rand = rng(seed);
  const [b, h, smax, hd, length] = [3, 2, 70, 16, 67];
  const bh = b * h;
  const q = randn<tf.Rank.R3>(rand, [bh, 1, hd]);
  const kc = randn<tf.Rank.R3>(rand, [bh, smax, hd]);
  const vc = randn<tf.Rank.R3>(rand, [bh, smax, hd]);
  // Rows 0 and 1 padded (makeMask), row 2 with no valid key at all (its output must be 0).
  const mask = tf.tidy(() =>
    tf.concat([makeMask(rand, b - 1, smax), tf.zeros([1, smax])], 0),
  ) as tf.Tensor2D;
  const [[mine], kernelDispatches] = await counted(() => [
    decodeAttention(q, kc, vc, mask, { length }),
  ]);
  const [[ref], refDispatches] = await counted(() => [
    referenceDecodeAttention(q, kc, vc, mask, { length }),
  ]);
  // Full length, no explicit bound.
  const mineFull = decodeAttention(q, kc, vc, mask);
  const refFull = referenceDecodeAttention(q, kc, vc, mask);
  const diffs = {
    out: await maxAbsDiff(mine, ref),
    outFullLength: await maxAbsDiff(mineFull, refFull),
  };
  tf.dispose([mine, ref, mineFull, refFull, q, kc, vc, mask]);
  return {
    name: `decodeAttention B=${b} H=${h} Smax=${smax} hd=${hd} length=${length}`,
    diffs,
    dispatches: { kernel: kernelDispatches, reference: refDispatches },
    seconds: (performance.now() - start) / 1000,
  };
}

async function checkWriteKV(seed: number): Promise<KernelCheck> {
  const start = performance.now();
  const rand = rng(seed);
  const cache0 = randn<tf.Rank.R3>(rand, [4, 10, 8]);
  const kv1 = randn<tf.Rank.R3>(rand, [4, 2, 8]);
  const kv2 = randn<tf.Rank.R3>(rand, [4, 2, 8]);
  const expected1 = referenceWriteKV(cache0, kv1, 3);
  const expected2 = referenceWriteKV(expected1, kv2, 8);
  // Read the cache back first: the kernel must not leave stale CPU-cached values behind.
  await cache0.data();
  const [[written], kernelDispatches] = await counted(() => [writeKV(cache0, kv1, 3)]);
  const cache1 = written as tf.Tensor3D;
  const afterFirstWrite = await maxAbsDiff(cache1, expected1);
  // 0: the input tensor sees the write (in place, one buffer).
  const inputAliasesOutput = await maxAbsDiff(cache0, cache1);
  cache0.dispose();
  const cache2 = writeKV(cache1, kv2, 8);
  cache1.dispose();
  const afterSecondWrite = await maxAbsDiff(cache2, expected2);
  const [[r], refDispatches] = await counted(() => [referenceWriteKV(expected1, kv2, 8)]);
  tf.dispose([r, cache2, expected1, expected2, kv1, kv2]);
  return {
    name: "writeKV [4, 10, 8]: rows 3-4, then 8-9, in place",
    diffs: { afterFirstWrite, afterSecondWrite, inputAliasesOutput },
    dispatches: { kernel: kernelDispatches, reference: refDispatches },
    seconds: (performance.now() - start) / 1000,
  };
}

async function checkLayerNorm(n: number, d: number, seed: number): Promise<KernelCheck> {
  const start = performance.now();
  const rand = rng(seed);
  const x = randn<tf.Rank.R2>(rand, [n, d]).mul(2).add(0.5) as tf.Tensor2D;
  const g = randn<tf.Rank.R1>(rand, [d]);
  const b = randn<tf.Rank.R1>(rand, [d]);
  const w = randn<tf.Rank.R2>(rand, [n, d]);
  type Ln = (x: tf.Tensor2D, g: tf.Tensor1D, b: tf.Tensor1D) => tf.Tensor2D;
  const run = (ln: Ln) => {
    const out = tf.tidy(() => ln(x, g, b));
    const grads = tf.grads((xx: tf.Tensor, gg: tf.Tensor, bb: tf.Tensor) =>
      ln(xx as tf.Tensor2D, gg as tf.Tensor1D, bb as tf.Tensor1D)
        .mul(w)
        .sum(),
    )([x, g, b]);
    return [out, ...grads];
  };
  const [mine, kernelDispatches] = await counted(() => run((a, c, e) => layerNorm(a, c, e)));
  const [ref, refDispatches] = await counted(() => run((a, c, e) => referenceLayerNorm(a, c, e)));
  const names = ["out", "dx", "dgamma", "dbeta"];
  const diffs = await diffsOf(names, mine, ref);
  tf.dispose([...mine, ...ref, x, g, b, w]);
  return {
    name: `layerNorm N=${n} d=${d}`,
    diffs,
    dispatches: { kernel: kernelDispatches, reference: refDispatches },
    seconds: (performance.now() - start) / 1000,
  };
}

type Affine = (x: tf.Tensor2D, w: tf.Tensor2D, b: tf.Tensor1D) => tf.Tensor2D;

/** An x W + b kernel (with or without GELU) against its reference: output and gradients. */
async function checkAffine(
  name: string,
  kernel: Affine,
  reference: Affine,
  n: number,
  k: number,
  m: number,
  seed: number,
): Promise<KernelCheck> {
  const start = performance.now();
  const rand = rng(seed);
  const x = randn<tf.Rank.R2>(rand, [n, k]);
  const w = randn<tf.Rank.R2>(rand, [k, m]).mul(1 / Math.sqrt(k)) as tf.Tensor2D;
  const b = randn<tf.Rank.R1>(rand, [m]);
  const dy = randn<tf.Rank.R2>(rand, [n, m]);
  const run = (f: Affine) => {
    const out = tf.tidy(() => f(x, w, b));
    const grads = tf.grads((xx: tf.Tensor, ww: tf.Tensor, bb: tf.Tensor) =>
      f(xx as tf.Tensor2D, ww as tf.Tensor2D, bb as tf.Tensor1D),
    )([x, w, b], dy);
    return [out, ...grads];
  };
  const [mine, kernelDispatches] = await counted(() => run(kernel));
  const [ref, refDispatches] = await counted(() => run(reference));
  const names = ["out", "dx", "dw", "db"];
  const diffs = await diffsOf(names, mine, ref);
  tf.dispose([...mine, ...ref, x, w, b, dy]);
  return {
    name: `${name} N=${n} K=${k} M=${m}`,
    diffs,
    dispatches: { kernel: kernelDispatches, reference: refDispatches },
    seconds: (performance.now() - start) / 1000,
  };
}

/**
 * embedSum over `rows.length` tables of width d against gather + add: output and the gradient of
 * sum(out * w) in every table; ids random, one row of them position-like, a few repeated.
 */
/** Max abs diffs of two lists of tensors, under the given names (int tensors compared as floats). */
async function diffsOf(
  names: string[],
  a: tf.Tensor[],
  b: tf.Tensor[],
): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (let i = 0; i < names.length; i++)
    out[names[i] as string] = await maxAbsDiff(
      (a[i] as tf.Tensor).toFloat(),
      (b[i] as tf.Tensor).toFloat(),
    );
  return out;
}

/** decodeLayer (one block, one token per row over a cache) against its plain-ops reference. */
async function checkDecodeLayer(seed: number): Promise<KernelCheck> {
  const start = performance.now();
  const rand = rng(seed);
  const [B, H, P, hd, m] = [3, 2, 20, 16, 72];
  const d = H * hd;
  const small = <R extends tf.Rank>(shape: number[], s = 0.2) =>
    tf.tidy(() => randn<R>(rand, shape).mul(s)) as tf.Tensor<R>;
  const wts = {
    ln1g: tf.tidy(() => small<tf.Rank.R1>([d]).add(1)) as tf.Tensor1D,
    ln1b: small<tf.Rank.R1>([d]),
    wqkv: small<tf.Rank.R2>([d, 3 * d]),
    bqkv: small<tf.Rank.R1>([3 * d]),
    wo: small<tf.Rank.R2>([d, d]),
    bo: small<tf.Rank.R1>([d]),
    ln2g: tf.tidy(() => small<tf.Rank.R1>([d]).add(1)) as tf.Tensor1D,
    ln2b: small<tf.Rank.R1>([d]),
    w1: small<tf.Rank.R2>([d, m]),
    b1: small<tf.Rank.R1>([m]),
    w2: small<tf.Rank.R2>([m, d]),
    b2: small<tf.Rank.R1>([d]),
  };
  const x = randn<tf.Rank.R2>(rand, [B, d]);
  const pk = randn<tf.Rank.R4>(rand, [B, H, P, hd]);
  const pv = randn<tf.Rank.R4>(rand, [B, H, P, hd]);
  // Row 0 left-padded, row 1 holes, row 2 with only its new key.
  const mask = tf.tidy(() =>
    tf.concat([makeMask(rand, 2, P + 1), tf.oneHot([P], P + 1).toFloat()], 0),
  ) as tf.Tensor2D;
  const [mine, kernelDispatches] = await counted(() => {
    const r = decodeLayer(x, wts, pk, pv, mask);
    return [r.x, r.k, r.v];
  });
  const [ref, refDispatches] = await counted(() => {
    const r = referenceDecodeLayer(x, wts, pk, pv, mask);
    return [r.x, r.k, r.v];
  });
  const diffs = await diffsOf(["x", "k", "v"], mine, ref);
  tf.dispose([...mine, ...ref, x, pk, pv, mask, ...Object.values(wts)]);
  return {
    name: `decodeLayer B=${B} H=${H} P=${P} hd=${hd} mlp=${m}`,
    diffs,
    dispatches: { kernel: kernelDispatches, reference: refDispatches },
    seconds: (performance.now() - start) / 1000,
  };
}

/** copyDecodeHead (vocabulary + copy heads of one decoding step) against its plain-ops reference. */
async function checkCopyDecodeHead(seed: number): Promise<KernelCheck> {
  const start = performance.now();
  const rand = rng(seed);
  const [B, P, d, V, r] = [3, 25, 32, 90, 8];
  const S = P + 1;
  const small = <R extends tf.Rank>(shape: number[], s = 0.3) =>
    tf.tidy(() => randn<R>(rand, shape).mul(s)) as tf.Tensor<R>;
  const ints = (n: number, hi: number, lo = 0) =>
    Array.from({ length: n }, () => lo + Math.floor(rand() * (hi - lo)));
  // Key j's predecessor: j - 1, with a row-0 left padding of 3 (-1 there) and a jump in row 1.
  const prev = new Int32Array(B * S);
  for (let b = 0; b < B; b++)
    for (let j = 0; j < S; j++)
      prev[b * S + j] = b === 0 && j < 4 ? -1 : b === 1 && j === 10 ? 6 : j - 1;
  const next = ints(B * S, V);
  const emitTable = Int32Array.from({ length: V }, (_, i) => (i % 7 === 3 ? 5 : i));
  const inputs = {
    h: randn<tf.Rank.R2>(rand, [B, d]),
    wte: small<tf.Rank.R2>([V, d]),
    wq: small<tf.Rank.R2>([d, d]),
    wk: small<tf.Rank.R2>([d, d]),
    cb: small<tf.Rank.R1>([1]),
    cont: small<tf.Rank.R1>([1], 1),
    wc: small<tf.Rank.R2>([d, r]),
    tok: small<tf.Rank.R2>([V, r]),
    tbias: small<tf.Rank.R2>([V, 1]),
    pastKeys: randn<tf.Rank.R3>(rand, [B, P, d]),
    keyMask: tf.tidy(() =>
      makeMask(rand, B, S)
        .mul(
          tf
            .oneHot([S - 1], S)
            .toFloat()
            .sub(1)
            .neg(),
        )
        .add(tf.oneHot([S - 1], S).toFloat()),
    ) as tf.Tensor2D,
    prevKey: tf.tensor2d(prev, [B, S], "int32"),
    pastQuery: randn<tf.Rank.R2>(rand, [B, d]),
    next: tf.tensor2d(next, [B, S], "int32"),
    emit: tf.tensor1d(emitTable, "int32"),
  };
  const flat = (o: ReturnType<typeof copyDecodeHead>) => [
    o.logits,
    // Masked scores are ~-1e9 (float32 steps of 64 there): compared clamped.
    tf.maximum(o.scores, -1e6),
    o.keys,
    o.query,
    o.writes,
  ];
  const before = dispatches;
  const mine = copyDecodeHead(inputs, 10, 30);
  await Promise.all(
    [mine.logits, mine.scores, mine.keys, mine.query, mine.writes].map((t) => t.data()),
  );
  const kernelDispatches = dispatches - before;
  const before2 = dispatches;
  const ref = referenceCopyDecodeHead(inputs, 10, 30);
  await Promise.all([ref.logits, ref.scores, ref.keys, ref.query, ref.writes].map((t) => t.data()));
  const refDispatches = dispatches - before2;
  const a = tf.tidy(() => flat(mine));
  const b = tf.tidy(() => flat(ref));
  const diffs = await diffsOf(["logits", "scores", "keys", "query", "writes"], a, b);
  tf.dispose([...a, ...b, ...Object.values(mine), ...Object.values(ref), ...Object.values(inputs)]);
  return {
    name: `copyDecodeHead B=${B} P=${P} d=${d} V=${V} r=${r}`,
    diffs,
    dispatches: { kernel: kernelDispatches, reference: refDispatches },
    seconds: (performance.now() - start) / 1000,
  };
}

async function checkEmbedSum(
  rows: number[],
  n: number,
  d: number,
  seed: number,
): Promise<KernelCheck> {
  const start = performance.now();
  const rand = rng(seed);
  const tables = rows.map((r) => randn<tf.Rank.R2>(rand, [r, d]));
  const ids = rows.map((r, t) =>
    tf.tensor1d(
      Int32Array.from({ length: n }, (_, i) => (t === 1 ? i % r : Math.floor(rand() * r))),
      "int32",
    ),
  );
  const w = randn<tf.Rank.R2>(rand, [n, d]);
  type Emb = (tables: tf.Tensor2D[], ids: tf.Tensor1D[]) => tf.Tensor2D;
  const run = (f: Emb) => {
    const out = tf.tidy(() => f(tables, ids));
    const grads = tf.grads((...ts: tf.Tensor[]) =>
      f(ts as tf.Tensor2D[], ids)
        .mul(w)
        .sum(),
    )(tables);
    return [out, ...grads];
  };
  const [mine, kernelDispatches] = await counted(() => run(embedSum));
  const [ref, refDispatches] = await counted(() => run(referenceEmbedSum));
  const diffs: Record<string, number> = {
    out: await maxAbsDiff(mine[0] as tf.Tensor, ref[0] as tf.Tensor),
  };
  for (let t = 0; t < rows.length; t++)
    diffs[`dTable${t}`] = await maxAbsDiff(mine[t + 1] as tf.Tensor, ref[t + 1] as tf.Tensor);
  tf.dispose([...mine, ...ref, ...tables, ...ids, w]);
  return {
    name: `embedSum tables=[${rows.join(", ")}] N=${n} d=${d}`,
    diffs,
    dispatches: { kernel: kernelDispatches, reference: refDispatches },
    seconds: (performance.now() - start) / 1000,
  };
}

/** The shipped model's variables (2 layers, 4 previous-token tables, copy head), small sizes. */
function modelShapes(): [string, number[]][] {
  const [V, C, d, m] = [40, 16, 16, 64];
  const shapes: [string, number[]][] = [
    ["wte", [V, d]],
    ["wpe", [C, d]],
  ];
  for (let k = 0; k < 4; k++) shapes.push([`wprev${k}`, [V, d]]);
  for (let i = 0; i < 2; i++)
    shapes.push(
      [`h${i}.ln1.g`, [d]],
      [`h${i}.ln1.b`, [d]],
      [`h${i}.attn.wqkv`, [d, 3 * d]],
      [`h${i}.attn.bqkv`, [3 * d]],
      [`h${i}.attn.wo`, [d, d]],
      [`h${i}.attn.bo`, [d]],
      [`h${i}.ln2.g`, [d]],
      [`h${i}.ln2.b`, [d]],
      [`h${i}.mlp.w1`, [d, m]],
      [`h${i}.mlp.b1`, [m]],
      [`h${i}.mlp.w2`, [m, d]],
      [`h${i}.mlp.b2`, [d]],
    );
  shapes.push(["lnf.g", [d]], ["lnf.b", [d]], ["copy.wq", [d, d]], ["copy.wk", [d, d]]);
  shapes.push(["copy.b", [1]], ["copy.tok", [V, 4]]);
  return shapes;
}

interface OptimizerRun {
  weights: Float32Array[];
  state: OptimizerState;
  reports: StepReport[];
  /** Max abs change of the clones taken before step 2 (0: the in-place step left them alone). */
  snapshotDrift: number;
  dispatches: number;
  kernels: number;
}

let optimizerRuns = 0;

/**
 * Steps of AdamW on model-shaped variables with seeded gradients, fused kernels on or off: step 0
 * clipped, step 1 not, step 2 with two weights cloned first (shared buffers: not in place), step 3
 * non-finite (skipped), step 4 counted (dispatches), step 5 under tf.profile (kernels).
 */
async function runOptimizer(fused: boolean, seed: number): Promise<OptimizerRun> {
  setFusedKernels(fused);
  const prefix = `adamw${optimizerRuns++}/`;
  const rand = rng(seed);
  const shapes = modelShapes();
  const vars = shapes.map(([name, shape]) => {
    const t = randn(rand, shape);
    const v = tf.variable(t, true, prefix + name);
    t.dispose();
    return v;
  });
  const opt = new AdamW({
    lr: 0.01,
    weightDecay: 0.1,
    clipNorm: 1,
    sgd: { variables: new Set([`${prefix}copy.tok`]), lr: 0.05 },
  });
  const gradsOf = (scale: number, nan: boolean): tf.NamedTensorMap => {
    const g: tf.NamedTensorMap = {};
    vars.forEach((v, i) => {
      const t = randn(rand, v.shape);
      g[v.name] = tf.tidy(() => (nan && i === 3 ? t.mul(scale).div(0) : t.mul(scale)));
      t.dispose();
    });
    return g;
  };
  const reports: StepReport[] = [];
  let snapshotDrift = 0;
  let dispatchCount = 0;
  let kernels = 0;
  for (let step = 0; step < 6; step++) {
    const grads = gradsOf(step === 1 ? 0.01 : 1, step === 3);
    await Promise.all(Object.values(grads).map((g) => g.data()));
    let snaps: tf.Tensor[] = [];
    let before: Float32Array[] = [];
    if (step === 2) {
      snaps = [tf.clone(vars[0] as tf.Variable), tf.clone(vars[8] as tf.Variable)];
      before = (await Promise.all(snaps.map((t) => t.data()))) as Float32Array[];
    }
    const d0 = dispatches;
    if (step === 5) {
      const info = await tf.profile(async () => {
        reports.push(await opt.apply(grads, vars));
        return tf.scalar(0);
      });
      tf.dispose(info.result);
      kernels = info.kernels.length;
    } else reports.push(await opt.apply(grads, vars));
    if (step === 4) dispatchCount = dispatches - d0;
    await (vars[0] as tf.Variable).data();
    for (const [i, snap] of snaps.entries()) {
      const now = (await snap.data()) as Float32Array;
      const was = before[i] as Float32Array;
      for (let j = 0; j < now.length; j++)
        snapshotDrift = Math.max(snapshotDrift, Math.abs((now[j] as number) - (was[j] as number)));
    }
    tf.dispose(snaps);
  }
  const weights = (await Promise.all(vars.map((v) => v.data()))) as Float32Array[];
  const state = await opt.exportState(vars);
  opt.dispose();
  tf.dispose(vars);
  setFusedKernels(true);
  return { weights, state, reports, snapshotDrift, dispatches: dispatchCount, kernels };
}

/** max |a - b| / max |b|: the difference relative to the reference's scale. */
function relDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let diff = 0;
  let scale = 0;
  for (let i = 0; i < b.length; i++) {
    diff = Math.max(diff, Math.abs((a[i] as number) - (b[i] as number)));
    scale = Math.max(scale, Math.abs(b[i] as number));
  }
  return scale > 0 ? diff / scale : diff;
}

/** Fused AdamW (webgpu/adamw.ts) against the plain ops (setFusedKernels(false)), same steps. */
async function checkAdamW(
  seed: number,
): Promise<{ check: KernelCheck; counts: Record<string, number> }> {
  const start = performance.now();
  const numTensors = tf.memory().numTensors;
  const fused = await runOptimizer(true, seed);
  const stock = await runOptimizer(false, seed);
  if (tf.memory().numTensors !== numTensors)
    throw new Error(`adamW tensor leak: ${numTensors} -> ${tf.memory().numTensors}`);
  const max = (xs: number[]) => xs.reduce((a, b) => Math.max(a, b), 0);
  const momentDiff = (pick: "m" | "v") =>
    max(
      stock.state.moments.map((s, k) => {
        const f = fused.state.moments[k];
        if (!f || f.index !== s.index) return Number.POSITIVE_INFINITY;
        return relDiff(f[pick], s[pick]);
      }),
    );
  const applied = (r: OptimizerRun) => r.reports.map((x) => (x.applied ? 1 : 0)).join("");
  const diffs: Record<string, number> = {
    weightsRel: max(fused.weights.map((w, i) => relDiff(w, stock.weights[i] as Float32Array))),
    mRel: momentDiff("m"),
    vRel: momentDiff("v"),
    gradNormRel: max(
      fused.reports.map((r, i) => {
        const s = (stock.reports[i] as StepReport).gradNorm;
        return Number.isFinite(s)
          ? Math.abs(r.gradNorm - s) / s
          : Number.isFinite(r.gradNorm)
            ? 1
            : 0;
      }),
    ),
    // 1 when the paths disagree on the step count, the moments kept or which steps were applied.
    stateMismatch:
      fused.state.step === stock.state.step &&
      fused.state.moments.length === stock.state.moments.length &&
      applied(fused) === applied(stock) &&
      applied(fused) === "111011"
        ? 0
        : 1,
    snapshotDriftFused: fused.snapshotDrift,
    snapshotDriftStock: stock.snapshotDrift,
  };
  return {
    check: {
      name: `adamW ${modelShapes().length} model-shaped variables, 6 steps (clip, no clip, shared buffers, skip)`,
      diffs,
      dispatches: { kernel: fused.dispatches, reference: stock.dispatches },
      seconds: (performance.now() - start) / 1000,
    },
    counts: {
      fusedDispatches: fused.dispatches,
      stockDispatches: stock.dispatches,
      fusedKernels: fused.kernels,
      stockKernels: stock.kernels,
    },
  };
}

/** Dispatches of one attention forward, and forward+backward, at B*H=4, T=S=256, hd=32. */
async function dispatchBench(): Promise<Record<string, number>> {
  const rand = rng(99);
  const [bh, t, hd] = [4, 256, 32];
  const q = randn<tf.Rank.R3>(rand, [bh, t, hd]);
  const k = randn<tf.Rank.R3>(rand, [bh, t, hd]);
  const v = randn<tf.Rank.R3>(rand, [bh, t, hd]);
  const w = randn<tf.Rank.R3>(rand, [bh, t, hd]);
  // The stock core as gpt.ts runs it, causal bias built once outside: matMul, mul, add, softmax, matMul.
  const bias = tf.tidy(() =>
    tf.linalg
      .bandPart(tf.ones([t, t]), -1, 0)
      .sub(1)
      .mul(1e9),
  );
  const stockCore: Attn = (a, b, c) =>
    tf.matMul(
      tf.softmax(
        tf
          .matMul(a, b, false, true)
          .mul(1 / Math.sqrt(hd))
          .add(bias),
      ),
      c,
    );
  // Forward + backward of the attention alone: tf.grads with dy = w (no loss ops), i.e. the
  // gradient of sum(out * w).
  const fwdBwd = (attn: Attn) => () =>
    tf.grads((a: tf.Tensor, b: tf.Tensor, c: tf.Tensor) =>
      attn(a as tf.Tensor3D, b as tf.Tensor3D, c as tf.Tensor3D, {}),
    )([q, k, v], w);
  const out: Record<string, number> = {};
  // Warm-up (pipelines compiled) so that counts are steady.
  await countOf(fwdBwd(fusedAttention));
  await countOf(fwdBwd(stockCore));
  out.kernelForward = await countOf(() => fusedAttention(q, k, v));
  out.stockCoreForward = await countOf(() => stockCore(q, k, v, {}));
  out.referenceForward = await countOf(() => referenceAttention(q, k, v));
  out.kernelForwardBackward = await countOf(fwdBwd(fusedAttention));
  out.stockCoreForwardBackward = await countOf(fwdBwd(stockCore));
  out.referenceForwardBackward = await countOf(fwdBwd(referenceAttention));
  // Wall time, SwiftShader (CPU), one forward+backward, after the warm-up: ratios only.
  for (const [name, attn] of [
    ["kernel", fusedAttention],
    ["stockCore", stockCore],
  ] as const) {
    const t1 = performance.now();
    await countOf(fwdBwd(attn));
    out[`${name}ForwardBackwardMs`] = Math.round(performance.now() - t1);
  }
  tf.dispose([q, k, v, w, bias]);
  return out;
}

async function main(): Promise<void> {
  const results: KernelResults = { backend: "", checks: [], gpuErrors: [] };
  try {
    if (!("gpu" in navigator)) throw new Error("navigator.gpu is missing");
    // Imported here, not at the top: the package registers the backend only if navigator.gpu
    // exists at import time (as src/model/backend.ts does).
    await import("@tensorflow/tfjs-backend-webgpu");
    if (!(await tf.setBackend("webgpu"))) throw new Error("tf.setBackend('webgpu') failed");
    await tf.ready();
    results.backend = tf.getBackend();
    const device = (tf.backend() as WebGPUBackend).device;
    device.addEventListener("uncapturederror", (e) => {
      const msg = (e as GPUUncapturedErrorEvent).error.message;
      results.gpuErrors.push(msg.slice(0, 2000));
      progress(`GPU error: ${msg.slice(0, 500)}`);
    });
    countDispatches();
    registerWebGpuKernels();
    registerWebGpuKernels(); // idempotent
    const cases: AttnCase[] = [
      { b: 1, h: 2, t: 5, s: 5, hd: 8, masked: false },
      { b: 2, h: 2, t: 37, s: 37, hd: 16, masked: false },
      { b: 2, h: 1, t: 9, s: 40, hd: 32, masked: true },
      { b: 2, h: 2, t: 21, s: 21, hd: 64, masked: true },
      { b: 1, h: 3, t: 33, s: 50, hd: 24, masked: false },
    ];
    let seed = 1;
    for (const c of cases) {
      const check = await checkAttention(c, seed++);
      progress(`${check.name}: ${JSON.stringify(check.diffs)} ${JSON.stringify(check.dispatches)}`);
      results.checks.push(check);
    }
    for (const check of [
      await checkAttentionPacked(1, 2, 5, 8, seed++),
      await checkAttentionPacked(2, 2, 37, 16, seed++),
      await checkAttentionPacked(3, 4, 21, 32, seed++),
      await checkDecode(seed++),
      await checkWriteKV(seed++),
      await checkLayerNorm(37, 24, seed++),
      await checkLayerNorm(70, 64, seed++),
      await checkAffine(
        "matMulBiasGelu",
        matMulBiasGelu,
        referenceMatMulBiasGelu,
        37,
        24,
        50,
        seed++,
      ),
      await checkAffine(
        "matMulBiasGelu",
        matMulBiasGelu,
        referenceMatMulBiasGelu,
        64,
        64,
        256,
        seed++,
      ),
      await checkAffine("linear", linear, referenceLinear, 37, 24, 50, seed++),
      await checkAffine("linear", linear, referenceLinear, 256, 64, 192, seed++),
      await checkEmbedSum([50, 12, 50, 50, 50, 50], 40, 16, seed++),
      await checkEmbedSum([30, 8, 30, 30, 30, 30, 9], 37, 64, seed++),
      await checkDecodeLayer(seed++),
      await checkCopyDecodeHead(seed++),
    ]) {
      progress(`${check.name}: ${JSON.stringify(check.diffs)} ${JSON.stringify(check.dispatches)}`);
      results.checks.push(check);
    }
    const adamW = await checkAdamW(seed++);
    progress(`${adamW.check.name}: ${JSON.stringify(adamW.check.diffs)}`);
    progress(`one optimizer step: ${JSON.stringify(adamW.counts)}`);
    results.checks.push(adamW.check);
    results.optimizer = adamW.counts;
    const numTensors = tf.memory().numTensors;
    results.dispatchBench = await dispatchBench();
    progress(`dispatches at B*H=4, T=S=256, hd=32: ${JSON.stringify(results.dispatchBench)}`);
    if (tf.memory().numTensors !== numTensors)
      throw new Error(`tensor leak: ${numTensors} -> ${tf.memory().numTensors}`);
  } catch (e) {
    results.error = e instanceof Error ? `${e.message}\n${e.stack ?? ""}` : String(e);
    progress(`error: ${results.error}`);
  }
  window.__kernelResults = results;
  if (resultsEl) resultsEl.textContent = JSON.stringify(results, null, 2);
}

void main();
