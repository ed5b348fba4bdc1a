import { describe, expect, it } from "vitest";
import { listTasks, parseAction, tasksOf, trainWorldTasks } from "../env";
import { Tokenizer } from "../model/tokenizer";
import {
  collectDemonstrations,
  type EpisodeText,
  episodeCorpus,
  parseTemplateWeights,
  repeatByTemplate,
  templateIdOf,
  tokenizeEpisode,
} from "./demos";
import { NO_FLAWS } from "./scriptActor";
import { contextBudget, contextStarts } from "./transcript";

const tasks = tasksOf("train");
const plain = collectDemonstrations(tasks, [0], NO_FLAWS);
const tok = Tokenizer.build(episodeCorpus(plain), { maxWords: 400, minCount: 3 });

/**
 * Passwords and access tokens an episode sends that its policy's context does not show: in the
 * actions it imitates, or (`slips`) in the ones it does not.
 */
function unseenSecrets(eps: readonly EpisodeText[], context: number, slips = false): string[] {
  const out: string[] = [];
  for (const ep of eps) {
    const t = tokenizeEpisode(tok, ep);
    const lengths = t.turns.map((x) => x.action.length + x.observation.length);
    const starts = contextStarts(t.prompt.length, lengths, contextBudget(context));
    ep.actions.forEach((action, i) => {
      const parsed = parseAction(action);
      if (!parsed.ok || ep.slips.includes(i) !== slips) return;
      const seen = [ep.prompt];
      for (let j = starts[i] as number; j < i; j++)
        seen.push(ep.actions[j] as string, ep.observations[j] as string);
      for (const key of ["password", "access_token"]) {
        const value = parsed.call.args[key];
        if (typeof value === "string" && !seen.join("\n").includes(value))
          out.push(`${ep.taskId} turn ${i}: ${key} ${value}`);
      }
    });
  }
  return out;
}

describe("a demonstrator that forgets what left the policy's context", () => {
  const context = 1024;
  const aware = collectDemonstrations(tasks, [0], NO_FLAWS, { tokenizer: tok, context });

  it("sends only passwords and access tokens the context shows, and still solves its tasks", () => {
    // The plain expert remembers them after the context rule has dropped the turns that showed them.
    expect(unseenSecrets(plain, context).length).toBeGreaterThan(10);
    expect(unseenSecrets(aware, context)).toEqual([]);
    // What it loses, it loses to the turn budget (looking things up again takes turns), never
    // to a wrong value.
    const lost = aware.filter((e, i) => !e.success && plain[i]?.success);
    expect(lost.length).toBeLessThan(aware.length / 10);
    for (const e of lost) expect(e.observations.at(-1)).toMatch(/Turn budget exhausted/);
    // It looked them up again: longer episodes, some more logins.
    const logins = (eps: readonly EpisodeText[]) =>
      eps.flatMap((e) => e.actions).filter((a) => a.includes(".login(")).length;
    expect(logins(aware)).toBeGreaterThan(logins(plain));
  });

  it("swaps in only another record's secret that the context shows", () => {
    const swaps = collectDemonstrations(
      tasks,
      [0],
      { ...NO_FLAWS, swap: 0.3 },
      { tokenizer: tok, context },
    );
    expect(swaps.reduce((n, e) => n + e.slips.length, 0)).toBeGreaterThan(tasks.length);
    expect(unseenSecrets(swaps, context, true)).toEqual([]);
    expect(unseenSecrets(swaps, context)).toEqual([]);
  });

  it("acts as the plain demonstrator while nothing leaves the context", () => {
    const roomy = collectDemonstrations(tasks, [0], NO_FLAWS, { tokenizer: tok, context: 1 << 20 });
    expect(roomy).toEqual(plain);
  });
});

describe("template weights (the data mix)", () => {
  it("parses template=K pairs and refuses unknown templates, bad weights and empty specs", () => {
    expect([...parseTemplateWeights("todo_create=4, notes_append=2")]).toEqual([
      ["todo_create", 4],
      ["notes_append", 2],
    ]);
    expect(() => parseTemplateWeights("todo_creat=4")).toThrow(/unknown template 'todo_creat'/);
    expect(() => parseTemplateWeights("todo_create=0")).toThrow(/at least 1/);
    expect(() => parseTemplateWeights("todo_create=1.5")).toThrow(/bad template weight/);
    expect(() => parseTemplateWeights("todo_create")).toThrow(/bad template weight/);
    expect(() => parseTemplateWeights(",")).toThrow(/no template weight/);
  });

  it("repeats each named template's episodes K times, in order, the rest once", () => {
    const eps = ["todo_create.train0.1", "pay_contact.train2.0", "todo_create.train3.2"].map(
      (taskId) => ({ taskId }),
    );
    const mix = repeatByTemplate(eps, parseTemplateWeights("todo_create=3"));
    expect(mix.map((e) => e.taskId)).toEqual([
      ...Array(3).fill("todo_create.train0.1"),
      "pay_contact.train2.0",
      ...Array(3).fill("todo_create.train3.2"),
    ]);
  });

  it("a task id names its template, on every split and on the fresh train worlds", () => {
    for (const t of [...listTasks("all"), ...trainWorldTasks(2)])
      expect(templateIdOf(t.id)).toBe(t.templateId);
  });
});
