import { describe, expect, it } from "vitest";
import { type ModelConfig, presetConfig } from "../model/config";
import { attentionMaps, chunks, type RowSize } from "./modelRollout";

/** The shipped base's shape: preset small with a copy head (2 layers of 2 heads). */
const shipped: ModelConfig = { ...presetConfig("small", 1479), copyHead: true };
const deeper: ModelConfig = { ...shipped, nLayers: 4 };

/** 42 rollouts re-reading contexts of 600-1900 tokens (a wave after the context rule dropped turns). */
const prefills: RowSize[] = Array.from({ length: 42 }, (_, i) => ({
  past: 0,
  fresh: 600 + ((i * 331) % 1300),
}));

function scores(sizes: readonly RowSize[], rows: readonly number[], maps: number): number {
  const fresh = Math.max(...rows.map((i) => (sizes[i] as RowSize).fresh));
  const total = Math.max(
    ...rows.map((i) => (sizes[i] as RowSize).past + (sizes[i] as RowSize).fresh),
  );
  return rows.length * maps * fresh * total;
}

describe("decoding batches (chunks)", () => {
  it("counts every layer's attention maps and the copy head's", () => {
    expect(attentionMaps(shipped)).toBe(5);
    expect(attentionMaps(deeper)).toBe(9);
    expect(attentionMaps({ ...deeper, copyHead: false })).toBe(8);
  });

  it("keeps every row once, in order, and a batch's attention scores within one budget", () => {
    for (const config of [shipped, deeper, presetConfig("default", 1479)]) {
      const maps = attentionMaps(config);
      const out = chunks(prefills, 16, maps);
      expect(out.flat()).toEqual(prefills.map((_, i) => i));
      for (const rows of out) {
        expect(rows.length).toBeLessThanOrEqual(16);
        if (rows.length > 1) expect(scores(prefills, rows, maps)).toBeLessThanOrEqual(5 * 2 ** 24);
      }
    }
  });

  it("gives a deeper model smaller prefill batches, and decoding steps the full batch", () => {
    const few = chunks(prefills, 16, attentionMaps(shipped)).length;
    const more = chunks(prefills, 16, attentionMaps(deeper)).length;
    expect(more).toBeGreaterThan(few);
    // The shipped model's batches as the rule before layers counted (2 heads against 2^25) made them.
    expect(chunks(prefills, 16, attentionMaps(shipped)).map((c) => c.length)).toEqual([
      6, 6, 6, 5, 5, 5, 5, 4,
    ]);
    const steps: RowSize[] = prefills.map((s) => ({ past: s.fresh, fresh: 1 }));
    expect(chunks(steps, 16, attentionMaps(deeper)).map((c) => c.length)).toEqual([16, 16, 10]);
  });
});
