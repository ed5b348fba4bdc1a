import * as tf from "@tensorflow/tfjs";
import { beforeAll, describe, expect, it } from "vitest";
import { listTasks } from "../env";
import { presetConfig } from "../model/config";
import { GPT } from "../model/gpt";
import { scoreSequences } from "../model/score";
import { Tokenizer } from "../model/tokenizer";
import { collectDemonstrations, episodeCorpus } from "./demos";
import { type RolloutProgress, rollout } from "./modelRollout";
import { contextBudget, contextStarts, segments } from "./transcript";

beforeAll(async () => {
  await tf.setBackend("cpu");
});

describe("context rule", () => {
  it("keeps everything while it fits, then drops the oldest turns down to half the budget", () => {
    expect(contextStarts(10, [5, 5, 5], 100)).toEqual([0, 0, 0]);
    // budget 40: prompt 10; turns of 10 each. Turn 4 would see 10+40=50 > 40: drop to <= 20.
    expect(contextStarts(10, [10, 10, 10, 10, 10, 10], 40)).toEqual([0, 0, 0, 0, 3, 3]);
    expect(() => contextStarts(50, [1], 40)).toThrow(/prompt/);
  });

  it("segments reproduce each turn's context and mask only that turn's actions once", () => {
    const prompt = [1, 100, 2];
    const turns = Array.from({ length: 6 }, (_, i) => ({
      action: [10 + i, 3],
      observation: [20 + i, 21, 22, 2],
    }));
    const segs = segments(prompt, turns, 12);
    const trained = segs.flatMap((s) => s.turns);
    expect(trained).toEqual([0, 1, 2, 3, 4, 5]);
    const agentTokens = segs.reduce((n, s) => n + s.agentMask.reduce((a, b) => a + b, 0), 0);
    expect(agentTokens).toBe(12);
    for (const s of segs) expect(s.tokens.slice(0, 3)).toEqual(prompt);
  });

  it("a turn not to imitate (a demonstrator's slip) stays in the context and out of the loss", () => {
    const prompt = [1, 100, 2];
    const turns = Array.from({ length: 3 }, (_, i) => ({
      action: [10 + i, 3],
      observation: [20 + i, 2],
      ...(i === 1 ? { imitate: false } : {}),
    }));
    const [seg] = segments(prompt, turns, 100);
    expect(seg?.tokens).toEqual([1, 100, 2, 10, 3, 20, 2, 11, 3, 21, 2, 12, 3]);
    expect(seg?.agentMask).toEqual([0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1]);
  });
});

describe("sampling and scoring agree", () => {
  it("the trainer's log-probs of the sampled ids equal the sampler's (ratio 1), context rule included", async () => {
    const demos = collectDemonstrations("train", [0]).slice(0, 10);
    const tok = Tokenizer.build(episodeCorpus(demos), { maxWords: 300, minCount: 2 });
    // A short context forces the context rule to drop turns.
    const model = new GPT(
      {
        vocabSize: tok.size,
        context: 512,
        dModel: 16,
        nLayers: 1,
        nHeads: 2,
        dMlp: 32,
        prevToken: 1,
        copyHead: true,
        copyContinue: true,
        copyTarget: true,
      },
      3,
    );
    const ids = listTasks("train")
      .slice(0, 3)
      .map((t) => t.id);
    const before = tf.memory().numTensors;
    const rounds: RolloutProgress[] = [];
    const trajs = await rollout(model, tok, ids, {
      temperature: 1,
      seed: 1,
      mode: "train",
      maxTurns: 5,
      maxActionTokens: 24,
      concurrency: 2,
      onRound: (p) => {
        rounds.push(structuredClone(p));
      },
    });
    // Live progress, across two waves: every turn reported once, in order, with its action.
    expect(rounds.map((p) => p.total)).toEqual(rounds.map(() => 3));
    expect(rounds.map((p) => p.finished)).toEqual(
      rounds.map((p) => p.finished).sort((a, b) => a - b),
    );
    expect(rounds.at(-1)?.finished).toBe(3);
    expect(rounds.at(-1)?.tokens).toBe(
      trajs.flatMap((t) => t.turns).reduce((n, t) => n + t.action.length, 0),
    );
    trajs.forEach((t, i) => {
      const mine = rounds.flatMap((p) => p.stepped).filter((e) => e.index === i);
      expect(mine.map((e) => [e.taskId, e.turn, e.action, e.done])).toEqual(
        t.actions.map((a, j) => [t.taskId, j + 1, a, j === 4]),
      );
    });
    // Every episode's cache across turns is disposed when it ends.
    expect(tf.memory().numTensors).toBe(before);
    let worst = 0;
    let compared = 0;
    let dropped = false;
    for (const t of trajs) {
      expect(t.turns.length).toBe(5);
      if (t.starts.some((s) => s > 0)) dropped = true;
      const segs = segments(t.prompt, t.turns, contextBudget(model.config.context));
      const scores = await scoreSequences(
        model,
        segs.map((s) => s.tokens),
      );
      segs.forEach((seg, k) => {
        const lp = scores.logprobs[k] as Float32Array;
        const sampled = seg.turns.flatMap((i) => t.logprobs[i] as number[]);
        const scored = seg.agentMask.flatMap((m, j) => (m ? [lp[j] as number] : []));
        expect(scored.length).toBe(sampled.length);
        scored.forEach((x, j) => {
          worst = Math.max(worst, Math.abs(x - (sampled[j] as number)));
          compared++;
        });
      });
    }
    expect(dropped).toBe(true);
    expect(compared).toBeGreaterThan(100);
    expect(worst).toBeLessThan(1e-4);
    model.dispose();
  });

  it("a stop ends the rollouts after the batch it is seen in; the rest end unplayed, nothing leaks", async () => {
    const demos = collectDemonstrations("train", [0]).slice(0, 4);
    const tok = Tokenizer.build(episodeCorpus(demos), { maxWords: 200, minCount: 2 });
    const model = new GPT({ ...presetConfig("tiny", tok.size), context: 1024 }, 4);
    const ids = listTasks("train")
      .slice(0, 4)
      .map((t) => t.id);
    const before = tf.memory().numTensors;
    let batches = 0;
    const trajs = await rollout(model, tok, ids, {
      temperature: 1,
      seed: 2,
      mode: "train",
      maxTurns: 6,
      maxActionTokens: 8,
      batchSize: 1,
      concurrency: 2,
      onRound: async () => {
        batches++;
        // A host gives its event loop a turn here.
        await new Promise((r) => setTimeout(r, 0));
      },
      stop: () => batches >= 3,
    });
    expect(batches).toBe(3);
    // Every task has its trajectory, in order: the first wave's two took 2 and 1 turns, the
    // second wave never started.
    expect(trajs.map((t) => t.taskId)).toEqual(ids);
    expect(trajs.map((t) => t.turns.length)).toEqual([2, 1, 0, 0]);
    for (const t of trajs) expect(t.starts).toHaveLength(t.turns.length);
    for (const t of trajs) expect(t.evaluation.success).toBe(false);
    expect(tf.memory().numTensors).toBe(before);
    model.dispose();
  });
});
