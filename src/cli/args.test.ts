import { describe, expect, it } from "vitest";
import { usageOf } from "./args";

describe("CLI usage", () => {
  it("is the header comment of the CLI's source, without comment markers", () => {
    const usage = usageOf(new URL("./eval.ts", import.meta.url).href);
    expect(usage.startsWith("Evaluates a checkpoint's policy on a split:")).toBe(true);
    expect(usage).toContain("npm run eval -- --checkpoint DIR");
    expect(usage).not.toMatch(/^\s*\*/m);
    expect(usage).not.toContain("import");
  });
});
