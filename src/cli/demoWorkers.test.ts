import { describe, expect, it } from "vitest";
import { parseFlaws } from "../agent/demonstrator";
import { collectDemonstrations } from "../agent/demos";
import { collectDemonstrationsParallel, pretrainTasks } from "./demoWorkers";

describe("collectDemonstrationsParallel", () => {
  it("gives the same episodes in the same order as one thread", async () => {
    const flaws = parseFlaws("mild");
    const seeds = [7, 3, 11];
    const serial = collectDemonstrations(pretrainTasks(1), seeds, flaws);
    const parallel = await collectDemonstrationsParallel(1, seeds, flaws, 2);
    expect(parallel.length).toBe(serial.length);
    expect(parallel).toEqual(serial);
    // Seeds differ, so the lanes really did different work.
    expect(parallel.slice(0, 5)).not.toEqual(
      parallel.slice(serial.length / 3, serial.length / 3 + 5),
    );
  }, 120_000);
});
