import { describe, expect, it } from "vitest";
import { tasksOf } from "../env";
import { presetConfig } from "../model/config";
import { GPT } from "../model/gpt";
import { Tokenizer } from "../model/tokenizer";
import { collectDemonstrations, episodeCorpus, parseEpisodeLines } from "./demos";
import { NO_FLAWS } from "./scriptActor";
import { afterFirstError, collectTakeovers, takeover, takeoverPoints } from "./takeover";

const tasks = tasksOf("train").slice(0, 12);

describe("expert takeover (DAgger relabelling)", () => {
  it("keeps the played turns as context only and lets the expert finish the task", () => {
    // The default demonstrator gives up after errors: its failed episodes are states to recover from.
    const played = collectDemonstrations(tasks, [3]);
    const failed = played.filter((d) => !d.success && afterFirstError(d) !== null);
    expect(failed.length).toBeGreaterThan(0);
    let recovered = 0;
    for (const d of failed) {
      const k = afterFirstError(d) as number;
      const t = takeover(d, k);
      if (!t) continue;
      expect(t.actions.slice(0, k)).toEqual(d.actions.slice(0, k));
      expect(t.observations.slice(0, k)).toEqual(d.observations.slice(0, k));
      expect(t.slips).toEqual(Array.from({ length: k }, (_, i) => i));
      if (t.success) recovered++;
    }
    expect(recovered).toBeGreaterThan(failed.length / 2);
  });

  it("does not repeat what the played turns found out (passwords, logins)", () => {
    const d = collectDemonstrations(tasks.slice(0, 1), [0], { slip: 0 })[0];
    if (!d) throw new Error("no episode");
    const logins = d.actions.filter((a) => a.includes(".login("));
    expect(logins.length).toBeGreaterThan(0);
    const k = d.actions.findIndex((a) => a.includes(".login(")) + 1;
    const t = takeover(d, k);
    expect(t?.success).toBe(true);
    const after = t?.actions.slice(k) ?? [];
    expect(after).not.toContain("supervisor.show_account_passwords()");
    expect(after).not.toContain(d.actions[k - 1]);
  });

  it("taking over at turn 0 is the expert's own episode", () => {
    const d = collectDemonstrations(tasks.slice(1, 2), [0])[0];
    if (!d) throw new Error("no episode");
    const expert = collectDemonstrations(tasks.slice(1, 2), [0], NO_FLAWS)[0];
    const t = takeover(d, 0);
    expect(t?.actions).toEqual(expert?.actions);
    expect(t?.slips).toEqual([]);
  });

  it("refuses a replay that does not reproduce the recorded observations, and a bad turn", () => {
    const d = collectDemonstrations(tasks.slice(0, 1), [0])[0];
    if (!d) throw new Error("no episode");
    const tampered = { ...d, observations: ["something else", ...d.observations.slice(1)] };
    expect(() => takeover(tampered, 1)).toThrow(/replayed to another observation/);
    expect(() => takeover(d, d.actions.length + 1)).toThrow(/outside/);
    expect(() => takeover({ ...d, taskId: "nope.train0.0" }, 0)).toThrow(/Unknown task/);
  });

  it("picks the turn after the first error and a seeded random one", () => {
    const d = {
      taskId: "x.train0.0",
      actions: ["a", "b", "c", "d", "e"],
      observations: ["ok", "Error: bad", "ok", "ok", "ok"],
    };
    expect(afterFirstError(d)).toBe(2);
    const p = takeoverPoints(d, 0);
    expect(p[0]).toBe(2);
    expect(takeoverPoints(d, 0)).toEqual(p);
    for (const k of p) expect(k >= 1 && k <= 4).toBe(true);
  });
});

describe("episode files", () => {
  it("round-trip takeovers, and refuse a malformed line by its number", () => {
    const d = collectDemonstrations(tasks.slice(0, 1), [0])[0];
    if (!d) throw new Error("no episode");
    const t = takeover(d, 2);
    const text = `${JSON.stringify(t)}\n\n${JSON.stringify(d)}\n`;
    expect(parseEpisodeLines(text)).toEqual([t, d]);
    const bad = (e: object) => `${JSON.stringify(d)}\n${JSON.stringify({ ...d, ...e })}\n`;
    expect(() => parseEpisodeLines(bad({ actions: "x" }), "f")).toThrow(/f line 2: actions/);
    expect(() => parseEpisodeLines(bad({ observations: [] }), "f")).toThrow(
      /line 2: .* observations/,
    );
    expect(() => parseEpisodeLines(bad({ slips: [999] }), "f")).toThrow(/line 2: slips/);
    expect(() => parseEpisodeLines(bad({ success: "yes" }), "f")).toThrow(/line 2: reward/);
    expect(() => parseEpisodeLines("{oops\n", "f")).toThrow(/f line 1: not JSON/);
  });
});

describe("collectTakeovers", () => {
  it("plays the policy on seeded tasks and keeps the successful takeovers, the same twice", async () => {
    const tok = Tokenizer.build(episodeCorpus(collectDemonstrations(tasks.slice(0, 4), [0])), {
      maxWords: 200,
    });
    const model = new GPT(presetConfig("tiny", tok.size), 0);
    try {
      const ids = tasks.map((t) => t.id);
      const opts = { seed: 2, offset: 1, temperature: 1, maxTurns: 3, maxActionTokens: 10 };
      const a = await collectTakeovers(model, tok, ids, 3, opts);
      expect(a.rollouts).toHaveLength(3);
      expect(a.rollouts.every((r) => r.actions.length <= 3)).toBe(true);
      expect(a.episodes.length).toBeGreaterThan(0);
      for (const e of a.episodes) {
        expect(e.success).toBe(true);
        const played = a.rollouts.find((r) => r.taskId === e.taskId);
        const k = e.slips.length;
        expect(e.actions.slice(0, k)).toEqual(played?.actions.slice(0, k));
      }
      const b = await collectTakeovers(model, tok, ids, 3, opts);
      expect(b).toEqual(a);
      const other = await collectTakeovers(model, tok, ids, 3, { ...opts, offset: 4 });
      expect(other.rollouts.map((r) => r.taskId)).not.toEqual(a.rollouts.map((r) => r.taskId));
    } finally {
      model.dispose();
    }
  }, 60_000);
});
