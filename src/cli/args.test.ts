import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import type { ParsedCheckpoint } from "../model/checkpoint";
import { chosenDecoding, commaList, num, usageOf } from "./args";

describe("CLI usage", () => {
  it("is the header comment of the CLI's source, without comment markers", () => {
    const usage = usageOf(new URL("./eval.ts", import.meta.url).href);
    expect(usage.startsWith("Evaluates a checkpoint's policy on a split:")).toBe(true);
    expect(usage).toContain("npm run eval -- --checkpoint DIR");
    expect(usage).not.toMatch(/^\s*\*/m);
    expect(usage).not.toContain("import");
  });

  it("in a bundle (no header comment, a library's comment first) says where the usage is", () => {
    const dir = mkdtempSync(join(tmpdir(), "usage-"));
    const file = join(dir, "eval.mjs");
    writeFileSync(file, "/** @license some library */\nconst x = 1;\n");
    expect(usageOf(pathToFileURL(file).href)).toBe(
      "usage: see the header comment of src/cli/eval.ts (a bundle keeps no comments)",
    );
    rmSync(dir, { recursive: true });
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

describe("num", () => {
  it("reads integers, numbers and bounds", () => {
    expect(num("k", "6")).toBe(6);
    expect(num("lr", "3e-4", false)).toBe(0.0003);
    expect(num("limit", "0", true, 0)).toBe(0);
    expect(num("seed", "-2")).toBe(-2);
  });

  it("refuses what is not the number asked for, naming the flag and the value", () => {
    expect(() => num("k", "six")).toThrow("--k must be an integer, got 'six'");
    expect(() => num("k", "1.5")).toThrow("--k must be an integer, got '1.5'");
    expect(() => num("k", "")).toThrow("--k must be an integer, got ''");
    expect(() => num("k", undefined)).toThrow("--k must be an integer, got 'undefined'");
    expect(() => num("k", true)).toThrow("--k must be an integer");
    expect(() => num("lr", "Infinity", false)).toThrow("--lr must be a number, got 'Infinity'");
    expect(() => num("samples", "0", true, 1)).toThrow(
      "--samples must be an integer of at least 1, got '0'",
    );
    expect(() => num("temperature", "-1", false, 0)).toThrow(
      "--temperature must be a number of at least 0, got '-1'",
    );
  });
});

describe("commaList", () => {
  it("splits, trims and drops empty items", () => {
    expect(commaList("a, b,,c ,")).toEqual(["a", "b", "c"]);
    expect(commaList("")).toEqual([]);
    expect(commaList(undefined)).toEqual([]);
  });
});
