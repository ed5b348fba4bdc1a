import { describe, expect, it } from "vitest";
import { Rng } from "./rng";

/** Kolmogorov-Smirnov distance of a sample from the uniform distribution on [0, 1). */
function ksUniform(xs: number[]): number {
  const sorted = xs.slice().sort((a, b) => a - b);
  return Math.max(
    ...sorted.map((x, i) =>
      Math.max(Math.abs(x - i / xs.length), Math.abs(x - (i + 1) / xs.length)),
    ),
  );
}

describe("Rng", () => {
  it("a derived stream's first draw is uniform over seeds (rollouts sample their first token with it)", () => {
    const first = Array.from({ length: 2000 }, (_, s) => Rng.derive(s, "sampling").float());
    expect(ksUniform(first)).toBeLessThan(0.05);
  });

  it("is reproducible per seed and differs between seeds", () => {
    const a = Rng.derive(3, "x");
    const b = Rng.derive(3, "x");
    const c = Rng.derive(4, "x");
    const draw = (r: Rng) => Array.from({ length: 5 }, () => r.float());
    expect(draw(a)).toEqual(draw(b));
    expect(draw(Rng.derive(3, "x"))).not.toEqual(draw(c));
  });
});
