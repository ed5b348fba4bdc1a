import { uniformFloat64 } from "pure-rand/distribution/uniformFloat64";
import { uniformInt } from "pure-rand/distribution/uniformInt";
import { xoroshiro128plus } from "pure-rand/generator/xoroshiro128plus";

type Generator = ReturnType<typeof xoroshiro128plus>;

/** FNV-1a hash of a string to a 32-bit unsigned integer: stable seeds from names. */
export function hashString(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** A seeded random source (xoroshiro128+ from pure-rand); every random choice in env/ goes through one. */
export class Rng {
  private readonly gen: Generator;

  /**
   * Beware: seeded with a small integer, the first draw is close to 1 (xoroshiro128+ needs its state
   * mixed); where the first draw matters, use `Rng.derive` (hashed seed), whose first draw is uniform.
   */
  constructor(seed: number | string) {
    this.gen = xoroshiro128plus(typeof seed === "string" ? hashString(seed) : seed | 0);
  }

  /** A new independent stream derived from this seed and a label. */
  static derive(seed: number | string, label: string): Rng {
    return new Rng(hashString(`${seed}/${label}`));
  }

  /** Uniform float in [0, 1). */
  float(): number {
    return uniformFloat64(this.gen);
  }

  /** Uniform integer in [lo, hi], both included. */
  int(lo: number, hi: number): number {
    return uniformInt(this.gen, lo, hi);
  }

  chance(p: number): boolean {
    return this.float() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error("Rng.pick on an empty list");
    return items[this.int(0, items.length - 1)] as T;
  }

  shuffle<T>(items: readonly T[]): T[] {
    const out = items.slice();
    for (let i = out.length - 1; i > 0; i--) {
      const j = this.int(0, i);
      [out[i], out[j]] = [out[j] as T, out[i] as T];
    }
    return out;
  }

  /** n distinct items, in random order. */
  sample<T>(items: readonly T[], n: number): T[] {
    return this.shuffle(items).slice(0, n);
  }
}
