import * as tf from "@tensorflow/tfjs";
import { beforeAll, describe, expect, it } from "vitest";
import { selectBackend } from "../backend";
import {
  decodeAttention,
  fusedAttention,
  referenceAttention,
  referenceDecodeAttention,
  writeKV,
} from "./index";

// The references are what the WebGPU kernels are checked against (e2e/kernels.spec.ts), so they
// are checked here against plain loops; on the cpu backend the exported functions use them.

beforeAll(async () => {
  await selectBackend({ force: "cpu" });
});

function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a * 1103515245 + 12345) % 2147483648;
    return a / 2147483648 - 0.5;
  };
}

function fill(rand: () => number, n: number): Float32Array {
  return Float32Array.from({ length: n }, () => rand() * 3);
}

/** out[r, i] = sum_j softmax_j(scale q_i . k_j over allowed j) v_j, zeros if none allowed. */
function naiveAttention(
  q: Float32Array,
  k: Float32Array,
  v: Float32Array,
  dims: { bh: number; t: number; s: number; hd: number; h: number },
  allowed: (b: number, i: number, j: number) => boolean,
): Float32Array {
  const { bh, t, s, hd, h } = dims;
  const out = new Float32Array(bh * t * hd);
  for (let r = 0; r < bh; r++)
    for (let i = 0; i < t; i++) {
      const scores: number[] = [];
      for (let j = 0; j < s; j++) {
        if (!allowed(Math.floor(r / h), i, j)) continue;
        let dot = 0;
        for (let d = 0; d < hd; d++)
          dot += (q[(r * t + i) * hd + d] as number) * (k[(r * s + j) * hd + d] as number);
        scores.push(j, dot / Math.sqrt(hd));
      }
      if (scores.length === 0) continue;
      let max = -Infinity;
      for (let n = 1; n < scores.length; n += 2) max = Math.max(max, scores[n] as number);
      let sum = 0;
      for (let n = 1; n < scores.length; n += 2) sum += Math.exp((scores[n] as number) - max);
      for (let n = 0; n < scores.length; n += 2) {
        const j = scores[n] as number;
        const p = Math.exp((scores[n + 1] as number) - max) / sum;
        for (let d = 0; d < hd; d++)
          out[(r * t + i) * hd + d] =
            (out[(r * t + i) * hd + d] as number) + p * (v[(r * s + j) * hd + d] as number);
      }
    }
  return out;
}

function maxDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs((a[i] as number) - (b[i] as number)));
  return m;
}

describe("reference attention", () => {
  it("is causal with query i at key position S - T + i, honours the key mask, zero rows when nothing is allowed", async () => {
    const rand = seeded(7);
    const [b, h, t, s, hd] = [2, 2, 3, 6, 4];
    const bh = b * h;
    const q = fill(rand, bh * t * hd);
    const k = fill(rand, bh * s * hd);
    const v = fill(rand, bh * s * hd);
    // Row 1 masks keys 0..4: its first query (keys 0..3 visible) has nothing left.
    const mask = [1, 1, 0, 1, 1, 1, 0, 0, 0, 0, 0, 1];
    const qt = tf.tensor3d(q, [bh, t, hd]);
    const kt = tf.tensor3d(k, [bh, s, hd]);
    const vt = tf.tensor3d(v, [bh, s, hd]);
    const mt = tf.tensor2d(mask, [b, s]);
    const dims = { bh, t, s, hd, h };
    const plain = referenceAttention(qt, kt, vt);
    const masked = referenceAttention(qt, kt, vt, { keyMask: mt });
    const viaExport = fusedAttention(qt, kt, vt, { keyMask: mt });
    const want = naiveAttention(q, k, v, dims, (_, i, j) => j <= s - t + i);
    const wantMasked = naiveAttention(
      q,
      k,
      v,
      dims,
      (row, i, j) => j <= s - t + i && mask[row * s + j] === 1,
    );
    expect(maxDiff(await plain.data(), want)).toBeLessThan(1e-5);
    const got = await masked.data();
    expect(maxDiff(got, wantMasked)).toBeLessThan(1e-5);
    expect(maxDiff(await viaExport.data(), got)).toBe(0);
    // Row 1 (heads 2, 3), query 0: all zeros.
    for (const r of [2, 3]) for (let d = 0; d < hd; d++) expect(got[r * t * hd + d]).toBe(0);
    tf.dispose([qt, kt, vt, mt, plain, masked, viaExport]);
  });

  it("decodes one query against the valid cache entries below length", async () => {
    const rand = seeded(3);
    const [b, h, smax, hd, length] = [2, 1, 7, 4, 5];
    const q = fill(rand, b * h * hd);
    const k = fill(rand, b * h * smax * hd);
    const v = fill(rand, b * h * smax * hd);
    const mask = [1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 1, 0, 0];
    const args = [
      tf.tensor3d(q, [b * h, 1, hd]),
      tf.tensor3d(k, [b * h, smax, hd]),
      tf.tensor3d(v, [b * h, smax, hd]),
    ] as const;
    const mt = tf.tensor2d(mask, [b, smax]);
    const got = referenceDecodeAttention(...args, mt, { length });
    const viaExport = decodeAttention(...args, mt, { length });
    const want = naiveAttention(
      q,
      k,
      v,
      { bh: b * h, t: 1, s: smax, hd, h },
      (row, _, j) => j < length && mask[row * smax + j] === 1,
    );
    expect(maxDiff(await got.data(), want)).toBeLessThan(1e-5);
    expect(maxDiff(await viaExport.data(), await got.data())).toBe(0);
    tf.dispose([...args, mt, got, viaExport]);
  });

  it("writeKV replaces rows position.. and leaves the rest (a new tensor off webgpu)", async () => {
    const cache = tf.tensor3d(
      Float32Array.from({ length: 2 * 5 * 2 }, (_, i) => i),
      [2, 5, 2],
    );
    const kv = tf.fill([2, 2, 2], -1) as tf.Tensor3D;
    const next = writeKV(cache, kv, 3);
    const got = (await next.array()) as number[][][];
    expect(got[0]).toEqual([
      [0, 1],
      [2, 3],
      [4, 5],
      [-1, -1],
      [-1, -1],
    ]);
    expect(got[1]?.[2]).toEqual([14, 15]);
    expect((await cache.array())[0]?.[3]).toEqual([6, 7]);
    tf.dispose([cache, kv, next]);
  });
});
