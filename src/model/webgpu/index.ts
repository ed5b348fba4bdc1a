/**
 * Custom WebGPU kernels for the model, registered with tfjs, and the functions callers use: on the
 * webgpu backend they run the kernels, on any other backend the reference implementations (plain
 * tfjs ops, same signatures, exported too).
 *
 *   registerWebGpuKernels();              // idempotent; the functions below also call it
 *   const o = fusedAttention(q, k, v, { keyMask });   // differentiable (tf.grads, variableGrads)
 *   const o1 = decodeAttention(q1, kCache, vCache, keyMask, { length });
 *   const next = writeKV(cache, kv, position); cache.dispose(); cache = next;
 *   const h = layerNorm(x, g, b);  const m = matMulBiasGelu(h, w1, b1);   // differentiable
 *   const e = embedSum([wte, wpe, ...wprev], ids);   // [N, d], differentiable (one dispatch each way)
 *   const parts = sumOfSquares(grads); const next = fusedAdamW(entries, hyper);   // optim.ts, webgpu only
 */
import * as tf from "@tensorflow/tfjs";
import {
  type AdamWEntry,
  type AdamWHyper,
  type AdamWResult,
  adamWKernelConfigs,
  runAdamW,
  runSumOfSquares,
} from "./adamw";
import {
  type AttentionOptions,
  attentionGradConfigs,
  attentionKernelConfigs,
  referenceAttention,
  referenceAttentionPacked,
  runFusedAttention,
  runFusedAttentionPacked,
} from "./attention";
import {
  type CopyDecodeInputs,
  type CopyDecodeResult,
  type DecodeLayerResult,
  type DecodeLayerWeights,
  decodeStepKernelConfigs,
  referenceCopyDecodeHead,
  referenceDecodeLayer,
  runCopyDecodeHead,
  runDecodeLayer,
} from "./decodestep";
import { embedGradConfigs, embedKernelConfigs, referenceEmbedSum, runEmbedSum } from "./embed";
import {
  geluGradConfigs,
  geluKernelConfigs,
  referenceMatMulBiasGelu,
  runMatMulBiasGelu,
} from "./gelu";
import {
  type DecodeOptions,
  kvCacheKernelConfigs,
  referenceDecodeAttention,
  referenceWriteKV,
  runDecodeAttention,
  runWriteKV,
} from "./kvcache";
import {
  layerNormGradConfigs,
  layerNormKernelConfigs,
  referenceLayerNorm,
  runLayerNorm,
} from "./layernorm";
import { linearKernelConfigs, referenceLinear, runLinear } from "./linear";

export { dispatchCount, watchDispatches } from "./dispatches";
export type {
  AdamWEntry,
  AdamWHyper,
  AdamWResult,
  AttentionOptions,
  CopyDecodeInputs,
  CopyDecodeResult,
  DecodeLayerResult,
  DecodeLayerWeights,
  DecodeOptions,
};
export {
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
};

let registered = false;

/** Registers every kernel of this folder for 'webgpu', and their gradients (idempotent). */
export function registerWebGpuKernels(): void {
  if (registered) return;
  for (const config of [
    ...attentionKernelConfigs(),
    ...kvCacheKernelConfigs(),
    ...layerNormKernelConfigs(),
    ...geluKernelConfigs(),
    ...linearKernelConfigs(),
    ...adamWKernelConfigs(),
    ...embedKernelConfigs(),
    ...decodeStepKernelConfigs(),
  ])
    if (!tf.getKernel(config.kernelName, config.backendName)) tf.registerKernel(config);
  for (const config of [
    ...attentionGradConfigs(),
    ...layerNormGradConfigs(),
    ...geluGradConfigs(),
    ...embedGradConfigs(),
  ])
    if (!tf.getGradient(config.kernelName)) tf.registerGradient(config);
  registered = true;
}

let enabled = true;

/** Turns the fused kernels on or off (off: the reference ops on webgpu too, e.g. to compare). */
export function setFusedKernels(on: boolean): void {
  enabled = on;
}

/** Whether the model runs its fused kernels: on the webgpu backend, unless turned off. */
export function fusedKernelsActive(): boolean {
  return enabled && tf.getBackend() === "webgpu";
}

/** True while tfjs records gradients (decodeLayer and copyDecodeHead have none). */
export function recordingGradients(): boolean {
  return tf.engine().state.gradientDepth > 0;
}

function onWebGpu(): boolean {
  if (!fusedKernelsActive()) return false;
  registerWebGpuKernels();
  return true;
}

/**
 * Causal multi-head attention: q [B*H, T, hd], k, v [B*H, S, hd] (S >= T, query i at key position
 * S - T + i), optional keyMask [B, S] -> [B*H, T, hd]. Fused FlashAttention kernels on webgpu.
 */
export function fusedAttention(
  q: tf.Tensor3D,
  k: tf.Tensor3D,
  v: tf.Tensor3D,
  opts: AttentionOptions = {},
): tf.Tensor3D {
  return onWebGpu() ? runFusedAttention(q, k, v, opts) : referenceAttention(q, k, v, opts);
}

/**
 * Causal multi-head attention from qkv [B*T, 3D] (x W_qkv + b: q, k, v column blocks, heads side
 * by side) with keyMask [B, T] -> [B*T, D] (heads side by side, as W_o takes them). On webgpu the
 * fused kernels read and write these layouts directly: no split, no transposes.
 */
export function fusedAttentionPacked(
  qkv: tf.Tensor2D,
  heads: number,
  keyMask: tf.Tensor2D,
): tf.Tensor2D {
  return onWebGpu()
    ? runFusedAttentionPacked(qkv, heads, keyMask)
    : referenceAttentionPacked(qkv, heads, keyMask);
}

/** One query per row against a pre-sized KV cache [B*H, Smax, hd] with keyMask [B, Smax]. */
export function decodeAttention(
  q: tf.Tensor3D,
  kCache: tf.Tensor3D,
  vCache: tf.Tensor3D,
  keyMask: tf.Tensor2D,
  opts: DecodeOptions = {},
): tf.Tensor3D {
  return onWebGpu()
    ? runDecodeAttention(q, kCache, vCache, keyMask, opts)
    : referenceDecodeAttention(q, kCache, vCache, keyMask, opts);
}

/**
 * The cache [B*H, Smax, hd] with rows position..position+n-1 set to kv [B*H, n, hd]. On webgpu the
 * write happens in place and the result aliases the input (kvcache.ts); elsewhere it is a new
 * tensor. Either way: dispose the input and keep the result.
 */
export function writeKV(cache: tf.Tensor3D, kv: tf.Tensor3D, position: number): tf.Tensor3D {
  return onWebGpu() ? runWriteKV(cache, kv, position) : referenceWriteKV(cache, kv, position);
}

/** Layer norm over the last axis of x [N, d]: (x - mean) / sqrt(var + eps) * g + b. */
export function layerNorm(
  x: tf.Tensor2D,
  gamma: tf.Tensor1D,
  beta: tf.Tensor1D,
  eps = 1e-5,
): tf.Tensor2D {
  return onWebGpu() ? runLayerNorm(x, gamma, beta, eps) : referenceLayerNorm(x, gamma, beta, eps);
}

/** x W + b: x [N, K], w [K, M], b [M] -> [N, M]. One dispatch on webgpu, three backward (linear.ts). */
export function linear(x: tf.Tensor2D, w: tf.Tensor2D, b: tf.Tensor1D): tf.Tensor2D {
  return onWebGpu() ? runLinear(x, w, b) : referenceLinear(x, w, b);
}

/** GELU(x W + b), tanh approximation: x [N, K], w [K, M], b [M] -> [N, M]. */
export function matMulBiasGelu(x: tf.Tensor2D, w: tf.Tensor2D, b: tf.Tensor1D): tf.Tensor2D {
  return onWebGpu() ? runMatMulBiasGelu(x, w, b) : referenceMatMulBiasGelu(x, w, b);
}

/**
 * sum_t tables[t][ids[t, n]] -> [N, d]: tables [rows_t, d], ids k int32 [N] tensors or one [k, N]
 * (e.g. token, position and previous-token ids). One dispatch forward and one backward per 6
 * tables on webgpu (embed.ts); tf.gather and add elsewhere. Differentiable in the tables.
 */
export function embedSum(tables: tf.Tensor2D[], ids: tf.Tensor1D[] | tf.Tensor2D): tf.Tensor2D {
  return onWebGpu() ? runEmbedSum(tables, ids) : referenceEmbedSum(tables, ids);
}

/**
 * One pre-norm block for one new token per row over cached keys and values (decoding, no
 * gradient): x [B, d], pastK/V [B, H, P, hd], keyMask [B, P + 1] -> x', k, v [B, H, P + 1, hd].
 * One kernel (7 dispatches) on webgpu (decodestep.ts); plain ops elsewhere.
 */
export function decodeLayer(
  x: tf.Tensor2D,
  weights: DecodeLayerWeights,
  pastK: tf.Tensor4D,
  pastV: tf.Tensor4D,
  keyMask: tf.Tensor2D,
): DecodeLayerResult {
  return onWebGpu()
    ? runDecodeLayer(x, weights, pastK, pastV, keyMask)
    : referenceDecodeLayer(x, weights, pastK, pastV, keyMask);
}

/**
 * gpt.ts forward()'s heads at one query per row with cached copy keys (copyHead, copyContinue,
 * copyTarget; decoding, no gradient): vocabulary logits, copy scores, keys, query, what each
 * pointer writes. One kernel (7-8 dispatches) on webgpu; plain ops elsewhere.
 */
export function copyDecodeHead(
  inputs: CopyDecodeInputs,
  contScale: number,
  targetScale: number,
): CopyDecodeResult {
  return onWebGpu()
    ? runCopyDecodeHead(inputs, contScale, targetScale)
    : referenceCopyDecodeHead(inputs, contScale, targetScale);
}

function requireWebGpu(what: string): void {
  if (!onWebGpu()) throw new Error(`${what}: the fused kernels are not active (webgpu only)`);
}

/**
 * Sums of squares of float32 gradients, [groups] partial sums (their total: the squared global
 * norm). Webgpu with the fused kernels only: elsewhere optim.ts keeps its plain ops.
 */
export function sumOfSquares(grads: tf.Tensor[]): tf.Tensor1D {
  requireWebGpu("sumOfSquares");
  return runSumOfSquares(grads);
}

/**
 * One AdamW / SGD step of every entry, w, m, v updated in place where they own their buffers
 * (adamw.ts). Webgpu with the fused kernels only: optim.ts's plain ops are the reference.
 */
export function fusedAdamW(entries: AdamWEntry[], hyper: AdamWHyper): AdamWResult[] {
  requireWebGpu("fusedAdamW");
  return runAdamW(entries, hyper);
}
