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
import {
  decodeAttention,
  fusedAttention,
  layerNorm,
  matMulBiasGelu,
  referenceAttention,
  referenceDecodeAttention,
  referenceLayerNorm,
  referenceMatMulBiasGelu,
  referenceWriteKV,
  registerWebGpuKernels,
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
  const before = dispatches;
  const mine = attentionWithGrads(fusedAttention, q, k, v, w, mask);
  await Promise.all(mine.map((t) => t.data()));
  const kernelDispatches = dispatches - before;
  const before2 = dispatches;
  const ref = attentionWithGrads(referenceAttention, q, k, v, w, mask);
  await Promise.all(ref.map((t) => t.data()));
  const refDispatches = dispatches - before2;
  const names = ["out", "dq", "dk", "dv"];
  const diffs: Record<string, number> = {};
  for (let i = 0; i < names.length; i++)
    diffs[names[i] as string] = await maxAbsDiff(mine[i] as tf.Tensor, ref[i] as tf.Tensor);
  tf.dispose([...mine, ...ref, q, k, v, w, ...(mask ? [mask] : [])]);
  return {
    name: `attention B=${c.b} H=${c.h} T=${c.t} S=${c.s} hd=${c.hd}${c.masked ? " masked" : ""}`,
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
  const before = dispatches;
  const mine = decodeAttention(q, kc, vc, mask, { length });
  await mine.data();
  const kernelDispatches = dispatches - before;
  const before2 = dispatches;
  const ref = referenceDecodeAttention(q, kc, vc, mask, { length });
  await ref.data();
  const refDispatches = dispatches - before2;
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
  const before = dispatches;
  const cache1 = writeKV(cache0, kv1, 3);
  await cache1.data();
  const kernelDispatches = dispatches - before;
  const afterFirstWrite = await maxAbsDiff(cache1, expected1);
  // 0: the input tensor sees the write (in place, one buffer).
  const inputAliasesOutput = await maxAbsDiff(cache0, cache1);
  cache0.dispose();
  const cache2 = writeKV(cache1, kv2, 8);
  cache1.dispose();
  const afterSecondWrite = await maxAbsDiff(cache2, expected2);
  const before2 = dispatches;
  const r = referenceWriteKV(expected1, kv2, 8);
  await r.data();
  const refDispatches = dispatches - before2;
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
  const before = dispatches;
  const mine = run((a, c, e) => layerNorm(a, c, e));
  await Promise.all(mine.map((t) => t.data()));
  const kernelDispatches = dispatches - before;
  const before2 = dispatches;
  const ref = run((a, c, e) => referenceLayerNorm(a, c, e));
  await Promise.all(ref.map((t) => t.data()));
  const refDispatches = dispatches - before2;
  const names = ["out", "dx", "dgamma", "dbeta"];
  const diffs: Record<string, number> = {};
  for (let i = 0; i < names.length; i++)
    diffs[names[i] as string] = await maxAbsDiff(mine[i] as tf.Tensor, ref[i] as tf.Tensor);
  tf.dispose([...mine, ...ref, x, g, b, w]);
  return {
    name: `layerNorm N=${n} d=${d}`,
    diffs,
    dispatches: { kernel: kernelDispatches, reference: refDispatches },
    seconds: (performance.now() - start) / 1000,
  };
}

async function checkMatMulBiasGelu(
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
  type Mbg = (x: tf.Tensor2D, w: tf.Tensor2D, b: tf.Tensor1D) => tf.Tensor2D;
  const run = (f: Mbg) => {
    const out = tf.tidy(() => f(x, w, b));
    const grads = tf.grads((xx: tf.Tensor, ww: tf.Tensor, bb: tf.Tensor) =>
      f(xx as tf.Tensor2D, ww as tf.Tensor2D, bb as tf.Tensor1D),
    )([x, w, b], dy);
    return [out, ...grads];
  };
  const before = dispatches;
  const mine = run(matMulBiasGelu);
  await Promise.all(mine.map((t) => t.data()));
  const kernelDispatches = dispatches - before;
  const before2 = dispatches;
  const ref = run(referenceMatMulBiasGelu);
  await Promise.all(ref.map((t) => t.data()));
  const refDispatches = dispatches - before2;
  const names = ["out", "dx", "dw", "db"];
  const diffs: Record<string, number> = {};
  for (let i = 0; i < names.length; i++)
    diffs[names[i] as string] = await maxAbsDiff(mine[i] as tf.Tensor, ref[i] as tf.Tensor);
  tf.dispose([...mine, ...ref, x, w, b, dy]);
  return {
    name: `matMulBiasGelu N=${n} K=${k} M=${m}`,
    diffs,
    dispatches: { kernel: kernelDispatches, reference: refDispatches },
    seconds: (performance.now() - start) / 1000,
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
      await checkDecode(seed++),
      await checkWriteKV(seed++),
      await checkLayerNorm(37, 24, seed++),
      await checkLayerNorm(70, 64, seed++),
      await checkMatMulBiasGelu(37, 24, 50, seed++),
      await checkMatMulBiasGelu(64, 64, 256, seed++),
    ]) {
      progress(`${check.name}: ${JSON.stringify(check.diffs)} ${JSON.stringify(check.dispatches)}`);
      results.checks.push(check);
    }
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
