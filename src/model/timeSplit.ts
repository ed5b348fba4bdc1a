/** Where an iteration's time goes, in seconds, added up by the parts that spend it. */
export interface TimeSplit {
  /** Decoding: each turn's new tokens through the model (the cache filled). */
  prefill: number;
  /** Decoding: one token per row per step. */
  decode: number;
  /** The world: parsing and executing actions, tokenizing observations. */
  environment: number;
  /** The scoring pass (old log-probs, entropy, reference, values). */
  scoring: number;
  /** Forward and backward passes of the updates. */
  backward: number;
  /** Optimizer steps (clipping, AdamW). */
  optimizer: number;
}

export function emptyTimeSplit(): TimeSplit {
  return { prefill: 0, decode: 0, environment: 0, scoring: 0, backward: 0, optimizer: 0 };
}

/** Runs `f` and adds the seconds it took to `split[part]` (when a split is given). */
export async function timed<T>(
  split: TimeSplit | undefined,
  part: keyof TimeSplit,
  f: () => Promise<T> | T,
): Promise<T> {
  const t = performance.now();
  try {
    return await f();
  } finally {
    if (split) split[part] += (performance.now() - t) / 1000;
  }
}

/** "prefill 1.2s, decode 3.4s, ..." */
export function formatTimeSplit(split: TimeSplit): string {
  return (Object.keys(split) as (keyof TimeSplit)[])
    .map((k) => `${k} ${split[k].toFixed(1)}s`)
    .join(", ");
}
