import { describe, expect, it } from "vitest";
import { listTasks } from "../env";
import { evalTasks, tgcBy } from "./evaluate";

describe("evalTasks", () => {
  const train = listTasks("train").map((t) => t.id);

  it("is the whole split, or its first `limit` tasks", () => {
    expect(evalTasks("train").map((t) => t.id)).toEqual(train);
    expect(evalTasks("train", undefined, 3).map((t) => t.id)).toEqual(train.slice(0, 3));
    expect(evalTasks("train", []).map((t) => t.id)).toEqual(train);
  });

  it("plays the named tasks in the order given", () => {
    const ids = [train[5], train[1]] as string[];
    expect(evalTasks("train", ids).map((t) => t.id)).toEqual(ids);
    expect(evalTasks("train", ids, 1).map((t) => t.id)).toEqual([train[5]]);
  });

  it("refuses an id that is not the split's, naming it", () => {
    const dev = listTasks("dev")[0]?.id as string;
    expect(() => evalTasks("train", [train[0] as string, dev, "nope"])).toThrow(
      `not train tasks: ${dev}, nope`,
    );
  });
});

describe("tgcBy", () => {
  it("is each group's share of successes, groups in the order first met", () => {
    const rs = [
      { t: "pay_contact", success: true },
      { t: "notes_append", success: false },
      { t: "pay_contact", success: false },
      { t: "notes_append", success: false },
      { t: "todo_create", success: true },
    ];
    const by = tgcBy(rs, (r) => r.t);
    expect(by).toEqual({ pay_contact: 0.5, notes_append: 0, todo_create: 1 });
    expect(Object.keys(by)).toEqual(["pay_contact", "notes_append", "todo_create"]);
    expect(tgcBy([], (r: { success: boolean }) => String(r.success))).toEqual({});
  });
});
