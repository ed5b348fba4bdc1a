import * as tf from "@tensorflow/tfjs";

/**
 * Sequence lengths are padded up to a few fixed sizes: the WebGPU buffer pool is keyed by exact
 * size and never shrinks, so varying shapes would grow GPU memory without bound.
 */
export const BUCKET_STEP = 128;

/**
 * The length a batch of sequences is padded to: a bucket on the GPU backends (their buffer
 * pools), the longest sequence itself on wasm and cpu (padding there is only wasted work).
 */
export function paddedLength(length: number, context: number): number {
  const backend = tf.getBackend();
  if (backend === "webgpu" || backend === "webgl") return bucketLength(length, context);
  if (length > context)
    throw new Error(`sequence of ${length} tokens exceeds the context of ${context}`);
  return Math.max(1, length);
}

export function bucketLength(length: number, context: number): number {
  if (length > context)
    throw new Error(`sequence of ${length} tokens exceeds the context of ${context}`);
  return Math.min(context, Math.max(BUCKET_STEP, Math.ceil(length / BUCKET_STEP) * BUCKET_STEP));
}
