import { describe, expect, it } from "vitest";
import { wilsonInterval } from "./evaluate";
import { Rng } from "./rng";

describe("wilsonInterval", () => {
  it("gives the Wilson score interval (values from an independent computation)", () => {
    const [lo, hi] = wilsonInterval(50, 336);
    expect(lo).toBeCloseTo(0.11473, 5);
    expect(hi).toBeCloseTo(0.19083, 5);
    const [lo7, hi7] = wilsonInterval(7, 42);
    expect(lo7).toBeCloseTo(0.08316, 5);
    expect(hi7).toBeCloseTo(0.30604, 5);
  });

  it("stays inside [0, 1] at the ends, mirrors failures and successes, narrows with n", () => {
    expect(wilsonInterval(0, 42)[0]).toBe(0);
    expect(wilsonInterval(0, 42)[1]).toBeCloseTo(1.96 ** 2 / (42 + 1.96 ** 2), 10);
    expect(wilsonInterval(42, 42)[1]).toBe(1);
    const [a, b] = wilsonInterval(9, 40);
    const [c, d] = wilsonInterval(31, 40);
    expect(a).toBeCloseTo(1 - d, 12);
    expect(b).toBeCloseTo(1 - c, 12);
    const width = (s: number, n: number) => wilsonInterval(s, n)[1] - wilsonInterval(s, n)[0];
    expect(width(40, 400)).toBeLessThan(width(4, 40));
    expect(wilsonInterval(0, 0)).toEqual([0, 1]);
  });

  it("covers the success rate of a fixed set of tasks, sampled k times each, at least 95% of the time", () => {
    // 42 tasks with very different success rates (most never solved, a few nearly always), 8
    // samples each: the pooled interval treats 336 episodes as independent, which overstates the
    // variance of this mean, so it covers the true rate more often than 95%.
    const rng = new Rng(7);
    const p = Array.from({ length: 42 }, (_, i): number => (i < 25 ? 0 : i < 35 ? 0.2 : 0.75));
    const truth = p.reduce((s, x) => s + x, 0) / p.length;
    let covered = 0;
    const runs = 2000;
    for (let r = 0; r < runs; r++) {
      let successes = 0;
      for (const pi of p) for (let k = 0; k < 8; k++) if (rng.float() < pi) successes++;
      const [lo, hi] = wilsonInterval(successes, p.length * 8);
      if (lo <= truth && truth <= hi) covered++;
    }
    expect(covered / runs).toBeGreaterThanOrEqual(0.95);
  });

  it("refuses counts that are not a share", () => {
    expect(() => wilsonInterval(5, 4)).toThrow(/0 <= successes <= n/);
    expect(() => wilsonInterval(-1, 4)).toThrow(/0 <= successes <= n/);
    expect(() => wilsonInterval(1.5, 4)).toThrow(/integers/);
  });
});
