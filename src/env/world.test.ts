import { describe, expect, it } from "vitest";
import { createExpert } from "../agent/expert";
import { runEpisode } from "../agent/run";
import { createEpisode, findTask, generateWorld, listTasks, type Task, trainWorldTasks } from ".";
import { hashString } from "./rng";

describe("determinism", () => {
  it("same seed, same world, byte for byte; another seed, another world", () => {
    const a = JSON.stringify(generateWorld(7));
    expect(JSON.stringify(generateWorld(7))).toBe(a);
    expect(JSON.stringify(generateWorld(8))).not.toBe(a);
  });

  it("the world of seed 1 has a pinned hash (same in every JS engine)", () => {
    // If this fails after an intended change to the world, update the pinned value (and e2e/world.spec.ts).
    expect(hashString(JSON.stringify(generateWorld(1)))).toMatchInlineSnapshot(`1546494310`);
  });

  it("task ids and instructions are fixed", () => {
    const a = listTasks("all");
    const b = listTasks("all");
    expect(b).toEqual(a);
    expect(new Set(a.map((t) => t.id)).size).toBe(a.length);
  });

  it("the same episode twice gives the same observations", () => {
    const id = listTasks("dev")[0]?.id as string;
    const run = () => runEpisode(createEpisode(id), createExpert(findTask(id) as Task));
    expect(JSON.stringify(run())).toBe(JSON.stringify(run()));
  });
});

describe("re-seeded train worlds", () => {
  it("instantiate the train scenarios on fresh worlds, with ids no split uses", () => {
    const extra = trainWorldTasks(2);
    const train = listTasks("train");
    expect(extra.length).toBe(2 * train.length);
    expect(extra.every((t) => t.split === "train")).toBe(true);
    const all = new Set(listTasks("all").map((t) => t.id));
    expect(extra.filter((t) => all.has(t.id))).toEqual([]);
    expect(new Set(extra.map((t) => t.id)).size).toBe(extra.length);
    // The same templates as the train split, each on a world unlike the split's own.
    expect(new Set(extra.map((t) => t.templateId))).toEqual(
      new Set(train.map((t) => t.templateId)),
    );
    const first = findTask(train[0]?.id as string) as Task;
    const again = extra.find((t) => t.id === first.id.replace(".train0.", ".train1.")) as Task;
    expect(again.templateId).toBe(first.templateId);
    expect(generateWorld(again.world.seed).user).not.toEqual(first.world.user);
  });

  it("are found by id, deterministically, and only for train templates", () => {
    const t = trainWorldTasks(3)[2 * 84] as Task;
    expect(t.id).toMatch(/\.train3\.\d$/);
    expect(findTask(t.id)?.instruction).toBe(t.instruction);
    expect(JSON.stringify(findTask(t.id)?.world)).toBe(JSON.stringify(t.world));
    const challenge = listTasks("test_challenge")[0]?.id as string;
    expect(findTask(challenge.replace(/test_challenge\d/, "train1"))).toBeUndefined();
    expect(findTask(t.id.replace(".train3.", ".train99999."))).toBeUndefined();
    expect(() => trainWorldTasks(-1)).toThrow(/non-negative/);
  });

  it("a demonstrator episode runs on them like on any task", () => {
    const t = trainWorldTasks(1)[5] as Task;
    const run = runEpisode(createEpisode(t.id), createExpert(t));
    expect(run.evaluation.success).toBe(true);
  });
});
