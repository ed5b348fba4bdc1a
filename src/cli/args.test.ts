import { describe, expect, it } from "vitest";
import type { ParsedCheckpoint } from "../model/checkpoint";
import { chosenDecoding, usageOf } from "./args";

describe("CLI usage", () => {
  it("is the header comment of the CLI's source, without comment markers", () => {
    const usage = usageOf(new URL("./eval.ts", import.meta.url).href);
    expect(usage.startsWith("Evaluates a checkpoint's policy on a split:")).toBe(true);
    expect(usage).toContain("npm run eval -- --checkpoint DIR");
    expect(usage).not.toMatch(/^\s*\*/m);
    expect(usage).not.toContain("import");
  });
});

describe("chosenDecoding", () => {
  const ckpt = (decoding?: "free" | "grammar") =>
    ({ manifest: { meta: decoding ? { decoding } : {} } }) as unknown as ParsedCheckpoint;

  it("takes --grammar, then --decoding, then the checkpoint's meta, then free", () => {
    expect(chosenDecoding({ grammar: true, decoding: "free" }, ckpt("free"))).toBe("grammar");
    expect(chosenDecoding({ grammar: false, decoding: "free" }, ckpt("grammar"))).toBe("free");
    expect(chosenDecoding({ grammar: false, decoding: "grammar" }, ckpt())).toBe("grammar");
    expect(chosenDecoding({ grammar: false }, ckpt("grammar"))).toBe("grammar");
    expect(chosenDecoding({}, ckpt())).toBe("free");
  });

  it("refuses an unknown decoding with the choices", () => {
    expect(() => chosenDecoding({ decoding: "greedy" }, ckpt())).toThrow(
      /--decoding must be one of free, grammar, got 'greedy'/,
    );
  });
});
