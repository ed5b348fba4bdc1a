import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as tf from "@tensorflow/tfjs";
import { beforeAll, describe, expect, it } from "vitest";
import { modelFromCheckpoint } from "../model/checkpoint";
import { readCheckpointDir } from "../model/checkpointFs";
import { parseStageFlags } from "./pretrainStage";
import { planRun, RECIPES, type Recipe, runPlan } from "./recipes";

beforeAll(async () => {
  await tf.setBackend("cpu");
});

describe("planRun", () => {
  it("runs the shipped recipe when no stage flag is given: the copy chain, then the agent stages", () => {
    const plan = planRun({ seed: 0, out: "OUT", stageFlags: {} });
    const chain = (RECIPES["copy-chain"] as Recipe).stages.map((s) => s.name);
    expect(plan.map((s) => s.name)).toEqual([
      ...chain,
      "takeover",
      "expert",
      "expert2",
      "aware",
      "mix",
      "quotes",
      "plurals",
    ]);
    expect(plan.at(-3)?.values).toMatchObject({
      seed: "21",
      flaws: "none,slip=0.1",
      "copy-target": true,
      "template-weights": "todo_create=4,notes_append=4",
    });
    expect(plan.at(-2)?.values).toMatchObject({ seed: "22", "copy-emit": true, epochs: "0" });
    expect(plan.at(-1)?.values).toMatchObject({
      seed: "23",
      out: "OUT",
      "split-plural": true,
      "max-steps": "200",
    });
    expect(plan.find((s) => s.name === "takeover")?.values.takeovers).toBe("free:96,grammar:96");
    const small = planRun({ recipe: "small", seed: 0, out: "OUT", stageFlags: {} });
    expect(small).toEqual([
      {
        index: 0,
        name: "small",
        last: true,
        values: { "max-steps": "804", seed: "0", out: "OUT" },
      },
    ]);
  });

  it("runs a chain: each stage from the one before, seeds offset, the last to --out", () => {
    const plan = planRun({
      recipe: "copy-chain",
      seed: 5,
      out: "OUT",
      stageFlags: {},
      stagesDir: "ST",
    });
    const base = RECIPES["copy-chain"] as Recipe;
    expect(plan.map((s) => s.name)).toEqual(base.stages.map((s) => s.name));
    expect(plan[0]?.values.init).toBeUndefined();
    plan.forEach((s, i) => {
      expect(s.values.seed).toBe(String(5 + (base.stages[i]?.seed ?? 0)));
      if (i > 0) expect(s.values.init).toBe(plan[i - 1]?.values.out);
    });
    expect(plan.at(-1)?.values.out).toBe("OUT");
    expect(plan.at(-1)?.last).toBe(true);
    expect(plan[0]?.values.out).toBe(join("ST", `0-${base.stages[0]?.name}`));
  });

  it("every recipe's stages parse, and none stops on the clock (a stage must be reproducible)", () => {
    for (const recipe of Object.values(RECIPES))
      for (const stage of recipe.stages) {
        const flags = parseStageFlags(stage.args.split(/\s+/));
        expect(flags.minutes).toBeUndefined();
        expect(Number(flags["max-steps"])).toBeGreaterThan(0);
      }
  });

  it("stage flags without --recipe make one custom stage over the single-stage defaults", () => {
    const plan = planRun({
      seed: 2,
      out: "O",
      init: "I",
      stageFlags: { lr: "0.01", "copy-head": true },
    });
    expect(plan).toEqual([
      {
        index: 0,
        name: "custom",
        last: true,
        values: { seed: "2", out: "O", lr: "0.01", "copy-head": true, init: "I" },
      },
    ]);
  });

  it("starts mid-chain from a given checkpoint, and refuses what does not make sense", () => {
    const chain = { recipe: "copy-chain", seed: 0, out: "O", stageFlags: {} };
    const plan = planRun({ ...chain, fromStage: 4, init: "K" });
    expect(plan[0]?.index).toBe(4);
    expect(plan[0]?.values.init).toBe("K");
    expect(() => planRun({ ...chain, fromStage: 4 })).toThrow(/needs --init/);
    expect(() => planRun({ ...chain, init: "K" })).toThrow(/from scratch/);
    expect(() => planRun({ ...chain, fromStage: 99, init: "K" })).toThrow(/--from-stage must be/);
    expect(() => planRun({ seed: 0, out: "O", recipe: "nope", stageFlags: {} })).toThrow(
      /unknown recipe 'nope'/,
    );
    expect(() => planRun({ seed: 0, out: "O", recipe: "base", stageFlags: { lr: "1" } })).toThrow(
      /--lr is set by the recipe/,
    );
    expect(() => parseStageFlags(["--out", "x"])).toThrow();
  });
});

describe("runPlan", () => {
  it("runs a chain (the second stage grows the first's model) and resumes without redoing a finished stage", async () => {
    const tiny: Record<string, Recipe> = {
      t: {
        about: "test",
        stages: [
          {
            name: "a",
            seed: 0,
            args: "--preset tiny --worlds 0 --batch-tokens 1024 --max-steps 2",
            about: "",
          },
          {
            name: "b",
            seed: 1,
            args: "--prev-token 2 --batch-tokens 1024 --max-steps 1 --lr 0.001",
            about: "",
          },
        ],
      },
    };
    const dir = await mkdtemp(join(tmpdir(), "recipe-"));
    try {
      const out = join(dir, "out");
      const plan = planRun(
        { recipe: "t", seed: 3, out, stagesDir: join(dir, "stages"), stageFlags: {} },
        tiny,
      );
      const logs: string[] = [];
      const first = await runPlan(plan, "cpu", (m) => logs.push(m), { "save-every": "0" });
      expect(first.map((s) => s.steps)).toEqual([2, 1]);
      const a = modelFromCheckpoint(await readCheckpointDir(join(dir, "stages", "0-a")));
      const b = modelFromCheckpoint(await readCheckpointDir(out));
      expect(a.model.config.prevToken).toBe(1);
      expect(b.model.config.prevToken).toBe(2);
      expect(b.tokenizer.size).toBe(a.tokenizer.size);
      a.model.dispose();
      b.model.dispose();
      const stage = JSON.parse(await readFile(join(out, "stage.json"), "utf8"));
      expect(stage.values).toMatchObject({ seed: "4", init: join(dir, "stages", "0-a") });
      // The same command again: both stages are found finished, nothing is trained.
      const again = await runPlan(plan, "cpu", (m) => logs.push(m));
      expect(again).toEqual([]);
      expect(logs.filter((m) => m.includes("already done"))).toHaveLength(2);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
