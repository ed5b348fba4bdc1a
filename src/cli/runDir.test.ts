import { describe, expect, it } from "vitest";
import { getAlgorithm } from "../rl/algorithms";
import { parseRunConfig } from "./runDir";

// A config.json as `npm run train` writes it (trainer.options, the algorithm, the run's fields).
const config = {
  algo: "grpo",
  seed: 3,
  tasks: 6,
  k: 6,
  lr: 0.0003,
  weightDecay: 0.01,
  clipNorm: 1,
  temperature: 1,
  evalEvery: 5,
  evalSplit: "dev",
  evalTemperature: 0,
  evalLimit: 0,
  maxTurns: 0,
  maxActionTokens: 0,
  rolloutBatch: 16,
  microTokens: 2048,
  abortLogRatio: 20,
  tokenStats: false,
  grammar: true,
  pool: 4,
  algorithm: getAlgorithm("grpo", { minibatch: 8 }),
  iterations: 4,
  checkpoint: "public/checkpoints/base",
  backend: "wasm",
  params: 712642,
  trainTasks: ["a.train0.0", "b.train0.1"],
  startedAt: "2026-12-05T10:00:00.000Z",
};

describe("run config", () => {
  it("reads back the trainer options a run was started with", () => {
    const r = parseRunConfig(JSON.parse(JSON.stringify(config)), "config.json");
    expect(r.options).toMatchObject({
      algo: "grpo",
      seed: 3,
      tasks: 6,
      k: 6,
      lr: 0.0003,
      pool: 4,
      grammar: true,
      evalEvery: 5,
      overrides: { minibatch: 8, klCoef: 0.04, eps: 0.1, clip: "paper", epochs: 2, filter: 0 },
    });
    expect(r.iterations).toBe(4);
    expect(r.checkpoint).toBe("public/checkpoints/base");
    expect(r.trainTasks).toEqual(config.trainTasks);
    // Runs from before the task pool drew from every task.
    const { pool: _, ...old } = config;
    expect(parseRunConfig(old, "config.json").options.pool).toBe(0);
  });

  it("refuses a file that is not such a config, naming the field", () => {
    const bad: [unknown, RegExp][] = [
      [[], /not a JSON object/],
      [{ ...config, seed: "3" }, /seed must be a number/],
      [{ ...config, algorithm: null }, /algorithm must be an object/],
      [{ ...config, algorithm: { ...config.algorithm, clip: "wide" } }, /algorithm.clip/],
      [{ ...config, evalSplit: "nope" }, /evalSplit/],
      [{ ...config, grammar: "yes" }, /grammar/],
      [{ ...config, trainTasks: [1] }, /trainTasks/],
      [{ ...config, checkpoint: undefined }, /checkpoint must be a string/],
    ];
    for (const [json, message] of bad)
      expect(() => parseRunConfig(json, "runs/x/config.json")).toThrow(message);
    expect(() => parseRunConfig([], "runs/x/config.json")).toThrow(/^runs\/x\/config.json: /);
  });
});
