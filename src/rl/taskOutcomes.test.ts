import { describe, expect, it } from "vitest";
import { taskOutcomes } from "./taskOutcomes";

describe("taskOutcomes", () => {
  it("groups episodes by task in first-seen order with successes and mean reward", () => {
    const out = taskOutcomes([
      { taskId: "b", evaluation: { reward: 1, success: true } },
      { taskId: "a", evaluation: { reward: 0.5, success: false } },
      { taskId: "b", evaluation: { reward: 0, success: false } },
      { taskId: "b", evaluation: { reward: 0.5, success: false } },
    ]);
    expect(out).toEqual([
      { taskId: "b", meanReward: 0.5, successes: 1, k: 3 },
      { taskId: "a", meanReward: 0.5, successes: 0, k: 1 },
    ]);
    expect(taskOutcomes([])).toEqual([]);
  });
});
