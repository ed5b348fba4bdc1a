import { hashString } from "./rng";
import { generateWorld } from "./world";

/** A short fingerprint of the world of a seed: equal in Node and in every browser, or determinism broke. */
export function worldFingerprint(seed: number): string {
  return hashString(JSON.stringify(generateWorld(seed)))
    .toString(16)
    .padStart(8, "0");
}
