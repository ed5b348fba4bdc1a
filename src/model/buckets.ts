/**
 * Sequence lengths are padded up to a few fixed sizes: the WebGPU buffer pool is keyed by exact
 * size and never shrinks, so varying shapes would grow GPU memory without bound.
 */
export const BUCKET_STEP = 128;

export function bucketLength(length: number, context: number): number {
  if (length > context)
    throw new Error(`sequence of ${length} tokens exceeds the context of ${context}`);
  return Math.min(context, Math.max(BUCKET_STEP, Math.ceil(length / BUCKET_STEP) * BUCKET_STEP));
}
