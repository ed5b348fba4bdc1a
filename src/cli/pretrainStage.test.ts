import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { collectDemonstrations } from "../agent/demos";
import { takeover } from "../agent/takeover";
import { tasksOf } from "../env";
import { Tokenizer } from "../model/tokenizer";
import { parseTakeovers, runStage } from "./pretrainStage";

/** A tiny one-step stage on the train split's own tasks (the flag tests' base). */
const flags = { preset: "tiny", worlds: "0", "batch-tokens": "1024", "max-steps": "1" };

/** The manifest a stage saved in dir/name. */
async function readManifest(dir: string, name: string) {
  return JSON.parse(await readFile(join(dir, name, "manifest.json"), "utf8"));
}

/** Runs fn in a fresh temporary directory, removed afterwards. */
async function inTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "stage-"));
  try {
    await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe("runStage --episodes", () => {
  it("imitates the episodes of a file as well, and refuses a bad file before writing anything", async () => {
    await inTempDir(async (dir) => {
      const d = collectDemonstrations(tasksOf("train").slice(0, 2), [1]);
      const lines = d.map((e) => JSON.stringify(takeover(e, 1))).join("\n");
      const good = join(dir, "good.jsonl.gz");
      await writeFile(good, gzipSync(lines));
      const logs: string[] = [];
      const s = await runStage({ ...flags, episodes: good, out: join(dir, "a") }, "cpu", (m) =>
        logs.push(m),
      );
      expect(logs).toContain(`2 more episodes from ${good}`);
      expect(s.episodes).toBe(tasksOf("train").length + 2);
      expect(await readManifest(dir, "a")).toBeTruthy();

      const bad = join(dir, "bad.jsonl");
      await writeFile(bad, `${lines}\n{"taskId": 3}\n`);
      await expect(
        runStage({ ...flags, episodes: bad, out: join(dir, "b") }, "cpu", () => {}),
      ).rejects.toThrow(/bad.jsonl line 3: taskId/);
      await expect(stat(join(dir, "b"))).rejects.toThrow();
    });
  }, 120_000);
});

describe("runStage --takeovers", () => {
  it("parses batches and refuses a bad spec", () => {
    expect(parseTakeovers("free:96,grammar:8")).toEqual([
      { grammar: false, count: 96 },
      { grammar: true, count: 8 },
    ]);
    for (const bad of ["free", "free:0", "greedy:3", "free:2,"])
      expect(() => parseTakeovers(bad)).toThrow(/bad --takeovers part/);
  });

  it("needs an --init policy to play", async () => {
    const flags = { preset: "tiny", worlds: "0", takeovers: "free:1", out: "/nonexistent/x" };
    await expect(runStage(flags, "cpu", () => {})).rejects.toThrow(/--takeovers needs an --init/);
  });
});

describe("runStage --decoding", () => {
  it("writes the decoding into the checkpoint's meta, a stage from it inherits it, a bad one is refused", async () => {
    await inTempDir(async (dir) => {
      const meta = async (d: string) => (await readManifest(dir, d)).meta;
      await runStage({ ...flags, decoding: "grammar", out: join(dir, "a") }, "cpu", () => {});
      expect((await meta("a")).decoding).toBe("grammar");
      await runStage({ ...flags, init: join(dir, "a"), out: join(dir, "b") }, "cpu", () => {});
      expect((await meta("b")).decoding).toBe("grammar");
      await expect(
        runStage({ ...flags, decoding: "greedy", out: join(dir, "c") }, "cpu", () => {}),
      ).rejects.toThrow(/--decoding must be one of free, grammar, got 'greedy'/);
      await expect(stat(join(dir, "c"))).rejects.toThrow();
    });
  }, 120_000);
});

describe("runStage --average-from", () => {
  it("saves the mean of the last steps' weights, and refuses a step that is not one before running", async () => {
    await inTempDir(async (dir) => {
      const flags = { preset: "tiny", worlds: "0", "batch-tokens": "1024", "max-steps": "2" };
      await runStage({ ...flags, out: join(dir, "raw") }, "cpu", () => {});
      const logs: string[] = [];
      await runStage({ ...flags, "average-from": "1", out: join(dir, "avg") }, "cpu", (m) =>
        logs.push(m),
      );
      expect(logs).toContain("saved the mean of the weights after steps 1-2 (--average-from)");
      const raw = await readFile(join(dir, "raw", "weights.bin"));
      const avg = await readFile(join(dir, "avg", "weights.bin"));
      expect(avg.length).toBe(raw.length);
      expect(avg.equals(raw)).toBe(false);
      for (const bad of ["0", "1.5", "x"])
        await expect(
          runStage({ ...flags, "average-from": bad, out: join(dir, "bad") }, "cpu", () => {}),
        ).rejects.toThrow(/average-from/);
      await expect(stat(join(dir, "bad"))).rejects.toThrow();
    });
  }, 120_000);
});

describe("runStage --copy-emit", () => {
  it("adds the quote map to a copy-head model without training (--epochs 0), weights unchanged", async () => {
    await inTempDir(async (dir) => {
      const manifest = (d: string) => readManifest(dir, d);
      await runStage({ ...flags, "copy-head": true, out: join(dir, "a") }, "cpu", () => {});
      expect((await manifest("a")).config.copyEmit).toBeUndefined();
      await runStage(
        { ...flags, init: join(dir, "a"), "copy-emit": true, epochs: "0", out: join(dir, "b") },
        "cpu",
        () => {},
      );
      const b = await manifest("b");
      expect(b.config.copyEmit.length).toBeGreaterThan(0);
      expect(b.meta.notes).toMatch(/no SFT step \(--epochs 0\).*quote map/);
      const tok = Tokenizer.fromJSON(b.tokenizer);
      for (const [from, to] of b.config.copyEmit as [number, number][]) {
        expect(tok.tokenText(from)[0]).toBe("'");
        expect(tok.tokenText(to)).toBe('"');
      }
      const wa = await readFile(join(dir, "a", "weights.bin"));
      const wb = await readFile(join(dir, "b", "weights.bin"));
      expect(wb.equals(wa)).toBe(true);
      // A model with the map trains (a step) and keeps it.
      await runStage({ ...flags, init: join(dir, "b"), out: join(dir, "e") }, "cpu", () => {});
      expect((await manifest("e")).config.copyEmit).toEqual(b.config.copyEmit);
      expect((await readFile(join(dir, "e", "weights.bin"))).equals(wb)).toBe(false);
      // A model without a copy head cannot take it.
      await runStage({ ...flags, out: join(dir, "c") }, "cpu", () => {});
      await expect(
        runStage(
          { ...flags, init: join(dir, "c"), "copy-emit": true, out: join(dir, "d") },
          "cpu",
          () => {},
        ),
      ).rejects.toThrow(/--copy-emit needs a copy head/);
    });
  }, 120_000);
});

describe("runStage --split-plural", () => {
  it("writes relationships' plurals as singular + s, in a new vocabulary and an --init one", async () => {
    await inTempDir(async (dir) => {
      const manifest = (d: string) => readManifest(dir, d);
      await runStage({ ...flags, out: join(dir, "a") }, "cpu", () => {});
      const a = await manifest("a");
      expect(a.tokenizer.plurals).toBeUndefined();
      await runStage(
        { ...flags, init: join(dir, "a"), "split-plural": true, epochs: "0", out: join(dir, "b") },
        "cpu",
        () => {},
      );
      const b = await manifest("b");
      expect(b.tokenizer.plurals).toEqual(expect.arrayContaining(["classmates", "friends"]));
      expect(b.tokenizer.words).toEqual(a.tokenizer.words);
      const tok = Tokenizer.fromJSON(b.tokenizer);
      expect(tok.encode("my friends").map((id) => tok.tokenText(id))).toEqual([
        "my",
        " ",
        "friend",
        "s",
      ]);
      const weights = (d: string) => readFile(join(dir, d, "weights.bin"));
      expect((await weights("b")).equals(await weights("a"))).toBe(true);
      // A stage from it keeps them; a new vocabulary gets them with the flag.
      await runStage({ ...flags, init: join(dir, "b"), out: join(dir, "c") }, "cpu", () => {});
      expect((await manifest("c")).tokenizer.plurals).toEqual(b.tokenizer.plurals);
      await runStage({ ...flags, "split-plural": true, out: join(dir, "d") }, "cpu", () => {});
      expect((await manifest("d")).tokenizer.plurals).toEqual(b.tokenizer.plurals);
    });
  }, 120_000);
});
