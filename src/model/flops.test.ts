import * as tf from "@tensorflow/tfjs";
import { beforeAll, describe, expect, it } from "vitest";
import { bucketLength, paddedLength } from "./buckets";
import { presetConfig } from "./config";
import { decodeStepFlops, headFlops, scoreFlops, trainFlops, trunkFlops } from "./flops";

beforeAll(async () => {
  await tf.setBackend("cpu");
});

describe("matmul FLOPs (what the bench divides by the ceiling)", () => {
  const plain = presetConfig("small", 1000); // d 64, 2 layers, MLP 256, no copy head

  it("counts the trunk's products per token: projections, attention over the keys, the MLP", () => {
    // Per layer: qkv 2*64*192, output 2*64*64, MLP 2*2*64*256, q.k and p.v 4*keys*64.
    expect(trunkFlops(plain, 10)).toBe(2 * (24576 + 8192 + 65536 + 4 * 10 * 64));
    expect(headFlops(plain, 10)).toBe(2 * 64 * 1000);
  });

  it("scores every position's trunk over its causal keys and the heads only where wanted", () => {
    const T = 8;
    const all = scoreFlops(plain, T, T);
    const few = scoreFlops(plain, T, 1);
    expect(all - few).toBe(7 * headFlops(plain, (T + 1) / 2));
    expect(trainFlops(plain, T, 2)).toBe(3 * scoreFlops(plain, T, 2));
  });

  it("charges the copy head's terms per key, growing with the keys", () => {
    const copy = { ...plain, copyHead: true, copyContinue: true, copyTarget: true };
    expect(decodeStepFlops(copy, 100)).toBeGreaterThan(decodeStepFlops(plain, 100));
    expect(headFlops(copy, 200) - headFlops(copy, 100)).toBe(100 * (2 * 64 * 2 + 2 * 16));
  });
});

describe("padding", () => {
  it("pads to the longest sequence on cpu and wasm, to a bucket on the GPU backends", () => {
    expect(paddedLength(37, 2048)).toBe(37);
    expect(bucketLength(37, 2048)).toBe(128);
    expect(() => paddedLength(3000, 2048)).toThrow(/exceeds the context/);
  });
});
