import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  groupNormalized,
  histogram,
  keepMask,
  leaveOneOut,
  leaveOneOutNormalized,
  terminalGae,
} from "./advantages";

const close = (xs: number[], ys: number[]) =>
  xs.forEach((x, i) => {
    expect(x).toBeCloseTo(ys[i] as number, 5);
  });

describe("leave-one-out advantage", () => {
  it("K=2: each rollout against the other", () => {
    close(leaveOneOut([1, 0]), [1, -1]);
    close(leaveOneOut([0.25, 0.75]), [-0.5, 0.5]);
  });

  it("K=6, worked by hand: A_k = R_k - (sum - R_k)/5", () => {
    // sum = 3: R=1 -> 1 - 2/5 = 0.6; R=0 -> 0 - 3/5 = -0.6; R=0.5 -> 0.5 - 2.5/5 = 0.
    close(leaveOneOut([1, 0, 0.5, 0.5, 0, 1]), [0.6, -0.6, 0, 0, -0.6, 0.6]);
    // Mixed signs, uneven: sum = 2.1, K/(K-1) (R - mean) with mean 0.35.
    close(
      leaveOneOut([0.9, 0.1, 0.4, 0.2, 0.5, 0]),
      [0.9, 0.1, 0.4, 0.2, 0.5, 0].map((r) => 1.2 * (r - 0.35)),
    );
  });

  it("all-equal returns give zero advantages, all filtered out", () => {
    const a = leaveOneOut([0.4, 0.4, 0.4, 0.4, 0.4, 0.4]);
    close(a, [0, 0, 0, 0, 0, 0]);
    expect(keepMask(a, 0.01)).toEqual([false, false, false, false, false, false]);
  });

  it("the filter keeps |A| >= 0.01 only", () => {
    expect(keepMask([0.6, -0.6, 0, 0.005, -0.01, 0.02])).toEqual([
      true,
      true,
      false,
      false,
      true,
      true,
    ]);
  });

  it("sums to zero and equals K/(K-1)(R - mean) for any group (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 2, maxLength: 12 }),
        (rs) => {
          const a = leaveOneOut(rs);
          const K = rs.length;
          const m = rs.reduce((x, y) => x + y, 0) / K;
          expect(Math.abs(a.reduce((x, y) => x + y, 0))).toBeLessThan(1e-9);
          a.forEach((x, i) => {
            expect(x).toBeCloseTo((K / (K - 1)) * ((rs[i] as number) - m), 9);
          });
        },
      ),
    );
  });

  it("refuses a group of one", () => {
    expect(() => leaveOneOut([1])).toThrow(/K >= 2/);
  });
});

describe("std-normalized advantages", () => {
  it("GRPO K=2: +-1/sqrt(2) with the sample std", () => {
    close(groupNormalized([1, 0]), [Math.SQRT1_2, -Math.SQRT1_2]);
  });

  it("all-equal groups give 0, not NaN", () => {
    close(groupNormalized([0.5, 0.5, 0.5]), [0, 0, 0]);
  });

  it("LOOP + std: the leave-one-out advantage over the group std", () => {
    // [1, 0, 0.5, 0.5, 0, 1]: mean 0.5, squared deviations sum to 1, sample std = sqrt(1/5).
    const s = Math.sqrt(1 / 5);
    close(
      leaveOneOutNormalized([1, 0, 0.5, 0.5, 0, 1]),
      [0.6, -0.6, 0, 0, -0.6, 0.6].map((a) => a / s),
    );
  });
});

describe("critic advantages and histogram", () => {
  it("GAE with gamma = lambda = 1 and a terminal reward is R - V(s_t)", () => {
    close(terminalGae(1, [0.2, 0.5, 0.9]), [0.8, 0.5, 0.1]);
  });

  it("histogram counts every value once, clamping the tails", () => {
    const h = histogram([-5, -0.95, 0, 0.5, 3], 4, -1, 1);
    expect(h.counts).toEqual([2, 0, 1, 2]);
    expect(h.edges).toEqual([-1, -0.5, 0, 0.5, 1]);
  });

  it("histogram puts a value on an edge in the bin it starts, despite float rounding", () => {
    // Leave-one-out advantages of [1, 0.5, 0, 0, 0, 0] and [0, 0.5, 0.5, 0, 0, 0]: 0.9, -0.3, 0.4.
    const a = leaveOneOut([1, 0.5, 0, 0, 0, 0]);
    const b = leaveOneOut([0, 0.5, 0.5, 0, 0, 0]);
    const h = histogram([a[0] as number, a[2] as number, b[1] as number], 20, -1, 1);
    const bin = (i: number) => [h.edges[i], h.edges[i + 1]];
    const filled = h.counts.flatMap((c, i) => (c > 0 ? [bin(i)] : []));
    expect(filled.map(([l]) => Number(l?.toFixed(6)))).toEqual([-0.3, 0.4, 0.9]);
  });
});
