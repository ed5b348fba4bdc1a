import { describe, expect, it } from "vitest";
import { parseFlaws } from "../agent/demonstrator";
import { collectDemonstrations, episodeCorpus } from "../agent/demos";
import { Tokenizer } from "../model/tokenizer";
import { collectDemonstrationsParallel, pretrainTasks } from "./demoWorkers";

describe("collectDemonstrationsParallel", () => {
  it("gives the same episodes in the same order as one thread", async () => {
    const flaws = parseFlaws("mild");
    const seeds = [7, 3, 11];
    const serial = collectDemonstrations(pretrainTasks(1), seeds, flaws);
    const parallel = await collectDemonstrationsParallel(1, seeds, flaws, undefined, 2);
    expect(parallel.length).toBe(serial.length);
    expect(parallel).toEqual(serial);
    // Seeds differ, so the lanes really did different work.
    expect(parallel.slice(0, 5)).not.toEqual(
      parallel.slice(serial.length / 3, serial.length / 3 + 5),
    );
  }, 120_000);

  it("gives the workers the policy's context: the same forgetting demonstrator as one thread", async () => {
    const flaws = parseFlaws("none");
    const seeds = [1, 2];
    const tokenizer = Tokenizer.build(episodeCorpus(collectDemonstrations("train", [0], flaws)), {
      maxWords: 300,
      minCount: 3,
    });
    const policy = { tokenizer, context: 1024 };
    const serial = collectDemonstrations(pretrainTasks(0), seeds, flaws, policy);
    const parallel = await collectDemonstrationsParallel(0, seeds, flaws, policy, 2);
    expect(parallel).toEqual(serial);
    // The context mattered: without it the episodes differ.
    expect(collectDemonstrations(pretrainTasks(0), seeds, flaws)).not.toEqual(serial);
  }, 120_000);
});
