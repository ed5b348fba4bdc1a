import { describe, expect, it } from "vitest";
import { type ModelConfig, presetConfig } from "../model/config";
import { ATTENTION_BUDGET, attentionMaps, prefillRows } from "../model/decode";

/** The shipped base's shape: preset small with a copy head (2 layers of 2 heads). */
const shipped: ModelConfig = { ...presetConfig("small", 1479), copyHead: true };
const deeper: ModelConfig = { ...shipped, nLayers: 4 };

describe("prefill chunks of a decoding wave", () => {
  it("counts every layer's attention maps and the copy head's", () => {
    expect(attentionMaps(shipped)).toBe(5);
    expect(attentionMaps(deeper)).toBe(9);
    expect(attentionMaps({ ...deeper, copyHead: false })).toBe(8);
  });

  it("keeps a chunk's attention scores within one budget, and gives a deeper model fewer rows", () => {
    for (const config of [shipped, deeper, presetConfig("default", 1479)])
      for (const [fresh, keys] of [
        [1900, 1900],
        [600, 1400],
        [40, 2000],
        [1, 2048],
      ] as const) {
        const n = prefillRows(config, fresh, keys);
        expect(n).toBeGreaterThanOrEqual(1);
        if (n > 1)
          expect(n * attentionMaps(config) * fresh * keys).toBeLessThanOrEqual(ATTENTION_BUDGET);
        expect((n + 1) * attentionMaps(config) * fresh * keys).toBeGreaterThan(ATTENTION_BUDGET);
      }
    expect(prefillRows(deeper, 600, 1400)).toBeLessThan(prefillRows(shipped, 600, 1400));
    // A whole context is one row at a time; a turn's new tokens over a long cache, many.
    expect(prefillRows(shipped, 1900, 1900)).toBe(4);
    expect(prefillRows(shipped, 40, 2000)).toBeGreaterThan(200);
  });
});
