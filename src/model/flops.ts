import { COPY_TARGET_DIM, type ModelConfig } from "./config";

/**
 * Matmul FLOPs (2 per multiply-add) of the model's forward pass, the work a backend's matmul
 * ceiling is compared against. Elementwise ops, softmax and layer norms are left out: they are not
 * what a ceiling measures, and at this size they are a small share of the FLOPs.
 */

/** One token through the trunk attending to `keys` keys: projections, attention, MLP. */
export function trunkFlops(config: ModelConfig, keys: number): number {
  const { dModel: d, dMlp: m, nLayers: L } = config;
  // qkv (d x 3d), output (d x d), MLP (d x m, m x d); q.k and p.v over every head (4 keys d).
  return L * (2 * d * 3 * d + 2 * d * d + 2 * 2 * d * m + 4 * keys * d);
}

/** The heads at one position whose next token is wanted, over `keys` keys: tied LM head, copy head. */
export function headFlops(config: ModelConfig, keys: number): number {
  const { dModel: d, vocabSize: V } = config;
  let f = 2 * d * V;
  if (config.copyHead) {
    f += 2 * d * d + 2 * keys * d; // the query, its scores over the keys
    if (config.copyContinue) f += 2 * d * d + 2 * keys * d; // the previous position's, again
    if (config.copyTarget) f += 2 * d * COPY_TARGET_DIM + 2 * keys * COPY_TARGET_DIM;
  }
  return f;
}

/** A copy head's key projection per token (every position is a key). */
function keyFlops(config: ModelConfig): number {
  return config.copyHead ? 2 * config.dModel * config.dModel : 0;
}

/**
 * A scoring pass over a sequence of T tokens with `wanted` positions scored (causal: position t
 * attends to t + 1 keys, so T (T + 1) / 2 key reads in all).
 */
export function scoreFlops(config: ModelConfig, T: number, wanted: number): number {
  const meanKeys = (T + 1) / 2;
  return (
    T * (trunkFlops(config, meanKeys) + keyFlops(config)) + wanted * headFlops(config, meanKeys)
  );
}

/** A training step's forward and backward pass: about three forward passes of matmul work. */
export function trainFlops(config: ModelConfig, T: number, wanted: number): number {
  return 3 * scoreFlops(config, T, wanted);
}

/** One decoding step of one row over `keys` cached keys. */
export function decodeStepFlops(config: ModelConfig, keys: number): number {
  return trunkFlops(config, keys) + keyFlops(config) + headFlops(config, keys);
}
