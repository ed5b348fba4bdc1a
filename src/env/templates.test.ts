import { describe, expect, it } from "vitest";
import { createDemonstrator, MILD_FLAWS, parseFlaws } from "../agent/demonstrator";
import { createExpert } from "../agent/expert";
import { runEpisode } from "../agent/run";
import type { Flaws } from "../agent/scriptActor";
import { NO_FLAWS } from "../agent/scriptActor";
import { createEpisode, parseAction, SPLITS, TEMPLATES, tasksOf } from ".";
import { type Change, cloneDb, diffDb, nextId } from "./db";
import { runTests } from "./evaluate";
import type { Task } from "./tasks/types";
import type { Db, Json, Row } from "./types";

/** Fields an agent does not choose directly: perturbing them is not a "wrong value". */
const UNCHOSEN = new Set(["id", "created_at", "sent_at", "updated_at", "liked_at", "size"]);

function perturb(value: Json | undefined): Json {
  if (typeof value === "string") return `${value}x`;
  if (typeof value === "number") return value + 1;
  if (typeof value === "boolean") return !value;
  if (Array.isArray(value)) return value.length > 0 ? value.slice(1) : ["x"];
  return "x";
}

function wrongAnswer(expected: string | number | string[]): Json {
  if (typeof expected === "number") return String(expected + 1);
  if (Array.isArray(expected)) return expected.slice(1).join(", ") || "nothing";
  return `${expected} and more`;
}

function solved(task: Task) {
  const ep = createEpisode(task.id, { mode: "eval" });
  const policy = createExpert(task);
  const run = runEpisode(ep, policy);
  return { ep, policy, run, initial: ep.initialDb, final: ep.db, answer: ep.answer };
}

/** The expert's changes that the task's expected changes match. */
function requested(task: Task, changes: Change[]): Change[] {
  return changes.filter((c) => task.expect.changes.some((w) => w.match(c)));
}

function replaceRow(db: Db, table: string, row: Row): void {
  const rows = db[table] as Row[];
  const i = rows.findIndex((r) => r.id === row.id);
  rows[i] = row;
}

const everyTask = SPLITS.flatMap((s) => tasksOf(s));

describe("the expert", () => {
  it.each(SPLITS)("solves every task of %s", (split) => {
    const failures: string[] = [];
    const turns: number[] = [];
    for (const task of tasksOf(split)) {
      const { run, policy } = solved(task);
      turns.push(run.actions.length);
      if (!run.evaluation.success)
        failures.push(
          `${task.id}: ${policy.failure ?? ""} ${run.evaluation.tests
            .filter((t) => !t.passed)
            .map((t) => `${t.name} (${t.message})`)
            .join("; ")}`,
        );
    }
    expect(failures).toEqual([]);
    expect(tasksOf(split).length).toBeGreaterThan(0);
  });
});

describe("the demonstrator", () => {
  it("succeeds on roughly 30-50% of train with the default flaw rates, and less with more flaws", () => {
    const train = tasksOf("train");
    const rate = (flaws?: Partial<Flaws>) => {
      let success = 0;
      for (const seed of [0, 1, 2])
        for (const task of train)
          if (
            runEpisode(createEpisode(task.id), createDemonstrator(task, seed, flaws)).evaluation
              .success
          )
            success++;
      return success / (3 * train.length);
    };
    const base = rate();
    console.log(`demonstrator success on train (3 seeds): ${(100 * base).toFixed(1)}%`);
    expect(base).toBeGreaterThan(0.3);
    expect(base).toBeLessThan(0.5);
    expect(rate({ giveUp: 1, skipDoc: 1, wrongArgName: 1 })).toBeLessThan(base);
    expect(rate({ skipDoc: 0, firstPageOnly: 0, assume: 0, giveUp: 0, wrongArgName: 0 })).toBe(1);
    const mild = rate(parseFlaws("mild"));
    console.log(`demonstrator success on train with mild flaws: ${(100 * mild).toFixed(1)}%`);
    expect(mild).toBeGreaterThan(0.6);
    expect(mild).toBeLessThan(0.9);
  });

  /**
   * Plays 30 train tasks with one kind of non-imitated mistake; `check` sees each one (its turn)
   * after the test that it was refused. Returns how many there were and how many tasks were solved.
   */
  function playMistakes(
    flaws: Partial<Flaws>,
    check: (run: ReturnType<typeof runEpisode>, turn: number) => void,
  ): { mistakes: number; solved: number; tasks: number } {
    const train = tasksOf("train").slice(0, 30);
    let mistakes = 0;
    let solved = 0;
    for (const task of train) {
      const policy = createDemonstrator(task, 1, { ...NO_FLAWS, ...flaws });
      const run = runEpisode(createEpisode(task.id), policy);
      expect(policy.failure).toBeNull();
      for (const i of policy.slips) {
        expect(run.observations[i]).toMatch(/^Error: /);
        check(run, i);
      }
      mistakes += policy.slips.length;
      if (run.evaluation.success) solved++;
    }
    return { mistakes, solved, tasks: train.length };
  }

  it("slips: a broken call that fails and changes nothing, then the right one", () => {
    const { mistakes, solved, tasks } = playMistakes({ slip: 0.5 }, (run, i) =>
      expect(run.actions[i + 1]).not.toBe(run.actions[i]),
    );
    expect(mistakes).toBeGreaterThan(tasks);
    // Slips change nothing: with no other flaw every task is still solved.
    expect(solved).toBe(tasks);
  });

  it("swaps: another record's password or token, refused, then the right call copied from the record", () => {
    const { mistakes, solved, tasks } = playMistakes({ swap: 0.5 }, (run, i) => {
      const wrong = parseAction(run.actions[i] as string);
      const right = parseAction(run.actions[i + 1] as string);
      if (!wrong.ok || !right.ok) throw new Error("a swap or its retry does not parse");
      const key = "password" in right.call.args ? "password" : "access_token";
      const bad = wrong.call.args[key] as string;
      // The same call but for the secret, which is another record's: one an earlier
      // observation showed, not a near miss of the right one.
      expect({ ...wrong.call.args, [key]: right.call.args[key] }).toEqual(right.call.args);
      expect(bad).not.toBe(right.call.args[key]);
      expect(run.observations.slice(0, i).some((o) => o.includes(`"${bad}"`))).toBe(true);
    });
    expect(mistakes).toBeGreaterThan(tasks);
    expect(solved).toBe(tasks);
  });

  it("reads flaw rates from a spec and refuses a bad one with a message", () => {
    expect(parseFlaws("giveUp=0.2, assume=0")).toEqual({ giveUp: 0.2, assume: 0 });
    expect(parseFlaws("mild")).toEqual(MILD_FLAWS);
    expect(parseFlaws("none").giveUp).toBe(0);
    expect(parseFlaws("mild,slip=0")).toEqual({ ...MILD_FLAWS, slip: 0 });
    expect(() => parseFlaws("giveup=0.2")).toThrow(/unknown flaw 'giveup'/);
    expect(() => parseFlaws("giveUp=2")).toThrow(/must be in \[0, 1\]/);
    expect(() => parseFlaws("giveUp")).toThrow(/write name=rate/);
  });

  it("is reproducible: same task and seed, same episode; another seed, other flaws", () => {
    const task = tasksOf("train")[10] as Task;
    const run = (seed: number) =>
      runEpisode(createEpisode(task.id), createDemonstrator(task, seed)).actions;
    expect(run(3)).toEqual(run(3));
    const variety = new Set([0, 1, 2, 3, 4, 5].map((s) => JSON.stringify(run(s))));
    expect(variety.size).toBeGreaterThan(1);
  });
});

describe("every template's tests catch wrong outcomes", () => {
  // One scenario's tasks per template keeps this fast while covering every template.
  const sample = TEMPLATES.flatMap((t) =>
    everyTask.filter((x) => x.templateId === t.id).slice(0, 3),
  );

  it.each(sample.map((t) => [t.id, t] as const))("%s", (_id, task) => {
    const { initial, final, answer, run } = solved(task);
    expect(run.evaluation.success).toBe(true);
    const fails = (db: Db, ans: Json = answer) =>
      !runTests(task.expect, initial, db, ans, true).success;

    // Doing nothing (and completing) fails.
    expect(fails(cloneDb(initial), null)).toBe(true);

    // A wrong answer fails.
    if (task.expect.answer !== undefined)
      expect(fails(final, wrongAnswer(task.expect.answer))).toBe(true);

    const changes = diffDb(initial, final);
    const wanted = requested(task, changes);
    expect(wanted.length).toBe(task.expect.changes.length);
    for (const c of wanted) {
      // The right change made twice fails.
      if (c.kind === "added" && c.after) {
        const db = cloneDb(final);
        db[c.table]?.push({ ...c.after, id: nextId(db, c.table) });
        expect(fails(db), `${c.table} added twice`).toBe(true);
      }
      // A wrong value fails, whichever chosen field is wrong.
      const fields =
        c.kind === "added"
          ? Object.keys(c.after ?? {})
          : c.kind === "updated"
            ? (c.fields ?? [])
            : [];
      for (const f of fields.filter((x) => !UNCHOSEN.has(x))) {
        const db = cloneDb(final);
        const row = { ...(c.after as Row) };
        row[f] = perturb(row[f]);
        replaceRow(db, c.table, row);
        expect(fails(db), `${c.table}.${f} wrong`).toBe(true);
      }
      // The change made on the wrong record fails.
      if (c.kind === "updated" || c.kind === "removed") {
        const db = cloneDb(final);
        const other = (initial[c.table] ?? []).find(
          (r) => r.id !== c.id && (db[c.table] ?? []).some((x) => x.id === r.id),
        );
        if (other) {
          replaceRow(db, c.table, c.before as Row);
          if (c.kind === "removed")
            db[c.table] = (db[c.table] ?? []).filter((r) => r.id !== other.id);
          else {
            const moved = { ...other };
            for (const f of c.fields ?? []) moved[f] = (c.after as Row)[f] as Json;
            replaceRow(db, c.table, moved);
          }
          expect(fails(db), `${c.table} change on the wrong record`).toBe(true);
        }
      }
    }

    // An extra, unrelated change fails: a new row, and an edit to an untouched row.
    const extraRow = cloneDb(final);
    extraRow.people?.push({
      ...(initial.people?.[1] as Row),
      id: nextId(extraRow, "people"),
      first_name: "Extra",
    });
    expect(fails(extraRow)).toBe(true);
    const edited = cloneDb(final);
    const victim = (edited.contacts ?? []).find(
      (r) => !changes.some((c) => c.table === "contacts" && c.id === r.id),
    );
    if (victim) {
      victim.city = `${victim.city}x`;
      expect(fails(edited)).toBe(true);
    }
  });
});
