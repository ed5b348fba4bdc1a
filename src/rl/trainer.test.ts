import * as tf from "@tensorflow/tfjs";
import { beforeAll, describe, expect, it } from "vitest";
import { collectDemonstrations, episodeCorpus, tokenizeEpisode } from "../agent/demos";
import { rollout } from "../agent/modelRollout";
import type { Segment } from "../agent/transcript";
import { listTasks, parseAction } from "../env";
import { selectBackend } from "../model/backend";
import { presetConfig } from "../model/config";
import { GPT } from "../model/gpt";
import { EOA, Tokenizer } from "../model/tokenizer";
import { ALGORITHM_NAMES } from "./algorithms";
import { trajectoryRows } from "./rows";
import { sft } from "./sft";
import { trajectoryTokenStats } from "./tokenStats";
import { Trainer, type TrainerEvent, type TrainerOptions } from "./trainer";
import { decodeTrainerState, encodeTrainerState, type TrainerState } from "./trainerState";

// A tiny policy, cloned briefly on the first and the last action of a few demonstrations (so that
// it sometimes finishes a task within a two-turn budget, and sometimes not: a reward to learn).
// Training runs on wasm (10x the cpu backend in Node).
const TASKS = listTasks("train")
  .filter((t) => t.difficulty === 1)
  .slice(0, 4)
  .map((t) => t.id);
let tok: Tokenizer;
let start: GPT;
const SHORT = { maxTurns: 2, maxActionTokens: 24, trainTasks: TASKS } as const;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  await selectBackend({ force: "wasm" });
  const demos = collectDemonstrations("train", [0]).filter((d) => TASKS.includes(d.taskId));
  tok = Tokenizer.build(episodeCorpus(demos), { maxWords: 200, minCount: 2 });
  start = new GPT({ ...presetConfig("tiny", tok.size), context: 448 }, 0);
  const segs: Segment[] = demos.flatMap((d) => {
    const t = tokenizeEpisode(tok, d);
    return [t.turns[0], t.turns.at(-1)].map((turn) => ({
      tokens: [...t.prompt, ...(turn?.action ?? [])],
      agentMask: [...t.prompt.map(() => 0), ...(turn?.action ?? []).map(() => 1)],
      turns: [0],
      turnOf: [],
    }));
  });
  await sft(start, segs, { epochs: 20, lr: 0.01, batchTokens: 8192, seed: 0 });
}, 300_000);

function trainer(
  opts: Partial<TrainerOptions> = {},
  model: GPT = start.clone(),
): {
  t: Trainer;
  model: GPT;
  events: TrainerEvent[];
} {
  const t = new Trainer(model, tok, {
    algo: "loop",
    seed: 0,
    tasks: 4,
    k: 4,
    lr: 0.003,
    overrides: { minibatch: 8 },
    ...SHORT,
    ...opts,
  });
  const events: TrainerEvent[] = [];
  t.on((e) => events.push(e));
  return { t, model, events };
}

describe("trainer", () => {
  it("scores the very sampled ids: ratio 1 and nothing clipped before any update", async () => {
    const { t, model } = trainer();
    const m = await t.iterate();
    expect(m.samplerLogpDiff).toBeLessThan(1e-4);
    expect(m.firstRatio).toBeCloseTo(1, 5);
    expect(m.firstClipFraction).toBe(0);
    expect(m.steps).toBeGreaterThan(0);
    t.dispose();
    model.dispose();
  });

  it("a grammar-constrained policy is scored under the same restriction: ratio 1, and its actions parse", async () => {
    const copying = new GPT({ ...start.config, copyHead: true, copyContinue: true }, 3);
    for (const policy of [start.clone(), copying]) {
      const before = policy.clone();
      const { t, model, events } = trainer({ maxActionTokens: 60, grammar: true }, policy);
      const m = await t.iterate();
      const trajectories = events.flatMap((e) => (e.type === "rollouts" ? e.trajectories : []));
      expect(m.steps).toBeGreaterThan(0);
      expect(m.samplerLogpDiff).toBeLessThan(1e-4);
      expect(m.firstRatio).toBeCloseTo(1, 5);
      // Every finished action is a well-formed call (an unfinished one hit the token cap).
      const finished = trajectories
        .flatMap((x) => x.turns.map((turn) => turn.action))
        .filter((a) => a.at(-1) === EOA)
        .map((a) => tok.decode(a.slice(0, -1)));
      expect(finished.length).toBeGreaterThan(0);
      for (const text of finished) expect(parseAction(text).ok, text).toBe(true);
      // The player's per-token stats score under the grammar too: the sampling weights give
      // ratio 1 on every token (and without the grammar they would not).
      const adv = trajectories.map(() => 0.5);
      const ratios = async (grammar: typeof t.actionGrammar) =>
        (await trajectoryTokenStats(before, trajectories, adv, [0.9, 1.1], 2048, grammar))
          .flat()
          .flatMap((x) => x.ratio);
      for (const r of await ratios(t.actionGrammar)) expect(Math.abs(r - 1)).toBeLessThan(1e-3);
      expect(Math.max(...(await ratios(null)).map((r) => Math.abs(Math.log(r))))).toBeGreaterThan(
        0.01,
      );
      before.dispose();
      t.dispose();
      model.dispose();
    }
  });

  it("rows reproduce the sampler's contexts (the context rule), for long episodes too", async () => {
    const model = start.clone();
    const trajs = await rollout(model, tok, TASKS.slice(0, 2), {
      temperature: 1,
      seed: 3,
      mode: "train",
      maxTurns: 6,
      maxActionTokens: 24,
    });
    let most = 0;
    for (const [i, traj] of trajs.entries()) {
      const rows = trajectoryRows(traj, i, model.config.context);
      const sampled = traj.logprobs.flat();
      const fromRows = rows.flatMap((r) => r.sampleLogp.filter((_, k) => r.mask[k] === 1));
      expect(fromRows).toEqual(sampled);
      most = Math.max(most, rows.length);
    }
    expect(most).toBeGreaterThan(1); // 448 tokens of context: the rule split the longer episode
    // The player's per-token stats score the same ids: before any update every ratio is 1.
    const stats = await trajectoryTokenStats(model, trajs, [0.5, -0.5], [0.9, 1.1], 1024);
    stats.forEach((turns, i) => {
      expect(turns.map((x) => x.ratio.length)).toEqual(trajs[i]?.turns.map((x) => x.action.length));
      for (const x of turns) {
        for (const r of x.ratio) expect(Math.abs(r - 1)).toBeLessThan(1e-3);
        for (const e of x.entropy) expect(e).toBeGreaterThan(0);
        expect(x.clipped.every((c) => !c)).toBe(true);
      }
    });
    model.dispose();
  });

  it("splitting a long trajectory's rows over micro-batches changes nothing but memory", async () => {
    // Six-turn episodes overflow the 448-token context: trajectories have several rows. With 512
    // padded tokens a micro-batch holds one row; with 2^20 every minibatch is one micro-batch.
    const run = async (microTokens: number) => {
      const { t, model } = trainer({ maxTurns: 6, microTokens });
      const m = await t.iterate();
      const w = Array.from(model.weights()[0]?.variable.dataSync() ?? []);
      t.dispose();
      model.dispose();
      return { m, w };
    };
    const split = await run(512);
    const whole = await run(1 << 20);
    expect(split.m.steps).toBeGreaterThan(0);
    expect(split.m.firstRatio).toBeCloseTo(1, 5);
    expect(split.m.policyLoss).toBeCloseTo(whole.m.policyLoss, 5);
    expect(split.m.gradNorm).toBeCloseTo(whole.m.gradNorm, 4);
    split.w.forEach((x, i) => {
      expect(Math.abs(x - (whole.w[i] as number))).toBeLessThan(1e-5);
    });
  });

  it("emits typed events in order and keeps the tensor count flat over iterations", async () => {
    const { t, model, events } = trainer({ evalEvery: 2, evalLimit: 2, tokenStats: true });
    await t.iterate();
    const after1 = tf.memory().numTensors;
    await t.iterate();
    await t.iterate();
    expect(tf.memory().numTensors).toBe(after1);
    const types = events.map((e) => e.type).filter((x) => x !== "rollout-progress");
    expect(types.slice(0, 2)).toEqual(["iteration-start", "rollouts"]);
    // Live progress while the rollouts run: a round at a time, all 16 finished before they land.
    const progress = events.slice(
      0,
      events.findIndex((e) => e.type === "rollouts"),
    );
    expect(progress.slice(1).every((e) => e.type === "rollout-progress")).toBe(true);
    const last = progress.at(-1);
    expect(last?.type === "rollout-progress" && [last.finished, last.total]).toEqual([16, 16]);
    expect(types).toContain("minibatch");
    expect(types.filter((x) => x === "iteration")).toHaveLength(3);
    expect(types.filter((x) => x === "eval")).toHaveLength(1);
    // Per-token stats come after the update, before the iteration's metrics.
    expect(types.slice(types.indexOf("token-stats"), types.indexOf("token-stats") + 2)).toEqual([
      "token-stats",
      "iteration",
    ]);
    const groups = events.find((e) => e.type === "rollouts");
    if (groups?.type !== "rollouts") throw new Error("no rollouts event");
    expect(groups.groups).toHaveLength(4);
    for (const g of groups.groups) {
      expect(g.rewards).toHaveLength(4);
      // A_k = R_k - baseline_k for LOOP.
      g.advantages.forEach((a, j) => {
        expect(a).toBeCloseTo((g.rewards[j] as number) - (g.baselines[j] as number), 9);
      });
    }
    t.dispose();
    model.dispose();
  });

  it("a task pool: the same seeded tasks every iteration", async () => {
    const { t, model, events } = trainer({ pool: 2, tasks: 2, k: 2 });
    expect(t.trainTasks).toHaveLength(2);
    expect(TASKS).toEqual(expect.arrayContaining(t.trainTasks));
    await t.iterate();
    const m = await t.iterate();
    const played = events.flatMap((e) =>
      e.type === "iteration-start" ? [[...e.tasks].sort()] : [],
    );
    expect(played).toEqual([[...t.trainTasks].sort(), [...t.trainTasks].sort()]);
    // Each task's outcome in the metrics: the mean reward and successes of its group.
    const groups = events.flatMap((e) =>
      e.type === "rollouts" && e.iteration === 2 ? e.groups : [],
    );
    expect(m.tasks?.map((x) => x.taskId)).toEqual(groups.map((g) => g.taskId));
    for (const [i, x] of (m.tasks ?? []).entries()) {
      const g = groups[i] as (typeof groups)[number];
      expect(x.k).toBe(2);
      expect(x.meanReward).toBeCloseTo(g.rewards.reduce((a, r) => a + r, 0) / 2, 12);
      expect(x.successes).toBe(g.rewards.filter((r) => r === 1).length);
    }
    expect(
      () => new Trainer(model, tok, { algo: "loop", seed: 0, tasks: 2, k: 2, lr: 1e-3, pool: -1 }),
    ).toThrow(/pool/);
    t.dispose();
    model.dispose();
  });

  it("is reproducible: same seed, same metrics", async () => {
    const a = trainer();
    const b = trainer();
    const ma = await a.t.iterate();
    const mb = await b.t.iterate();
    expect(mb.meanReward).toBe(ma.meanReward);
    expect(mb.policyLoss).toBe(ma.policyLoss);
    for (const x of [a, b]) {
      x.t.dispose();
      x.model.dispose();
    }
  });

  it("runs every algorithm of the registry for an iteration", async () => {
    for (const algo of ALGORITHM_NAMES) {
      const { t, model } = trainer({ algo, tasks: 2, k: 3 });
      const m = await t.iterate();
      expect(m.algo).toBe(algo);
      expect(Number.isFinite(m.policyLoss)).toBe(true);
      expect(m.skippedSteps).toBe(0);
      t.dispose();
      model.dispose();
    }
  }, 300_000);

  // Two iterations straight against one, a save through the bytes, and one more in a fresh trainer
  // (bit for bit):
  // PPO carries AdamW's moments and a critic, GRPO a reference model (the run's start policy);
  // 2 of 4 tasks an iteration, so the walk through the pool is carried too.
  it.each(["ppo", "grpo"])(
    "%s resumes exactly where it stopped (weights, optimizer, critic, reference, task walk)",
    async (algo) => {
      const opts = { algo, tasks: 2, k: 2 };
      const straight = trainer(opts);
      await straight.t.iterate();
      const m2 = await straight.t.iterate();
      const first = trainer(opts);
      await first.t.iterate();
      const { manifest, blob } = encodeTrainerState(await first.t.exportState());
      const state = decodeTrainerState(JSON.parse(JSON.stringify(manifest)), blob);
      expect(state.optimizerStep).toBeGreaterThan(0);
      expect(state.taskOrder).toHaveLength(2);
      const resumed = trainer({ ...opts, reference: start.clone() }, first.model.clone());
      await resumed.t.importState(state);
      expect(resumed.t.iteration).toBe(1);
      const r2 = await resumed.t.iterate();
      expect(r2.iteration).toBe(2);
      expect(r2.meanReward).toBe(m2.meanReward);
      expect(r2.policyLoss).toBe(m2.policyLoss);
      const ws = straight.model.weights();
      resumed.model.weights().forEach((w, i) => {
        const a = w.variable.dataSync();
        const b = (ws[i] as (typeof ws)[number]).variable.dataSync();
        let d = 0;
        for (let j = 0; j < a.length; j++)
          d = Math.max(d, Math.abs((a[j] as number) - (b[j] as number)));
        expect(d, w.name).toBe(0);
      });
      const after = await resumed.t.exportState();
      const want = await straight.t.exportState();
      expect(after.optimizerStep).toBe(want.optimizerStep);
      expect(after.taskOrder).toEqual(want.taskOrder);
      for (const x of [straight, first, resumed]) {
        x.t.dispose();
        x.model.dispose();
      }
    },
    300_000,
  );

  it("a trainer state that does not fit is refused and changes nothing", async () => {
    const src = trainer({ algo: "ppo", tasks: 2, k: 2 });
    await src.t.iterate();
    const good = await src.t.exportState();
    const { t, model } = trainer({ algo: "ppo", tasks: 2, k: 2 });
    const before = await t.exportState();
    const numTensors = tf.memory().numTensors;
    const bad: [string, TrainerState, RegExp][] = [
      ["another algorithm", { ...good, algo: "loop" }, /ppo/],
      ["another seed", { ...good, seed: 7 }, /seed 7/],
      ["a task outside the pool", { ...good, taskOrder: ["nope.train.0"] }, /nope/],
      [
        "a misshapen moment",
        {
          ...good,
          tensors: good.tensors.map((x) =>
            x.name === "m/0" ? { ...x, shape: [1, x.data.length] } : x,
          ),
        },
        /m\/0 has shape/,
      ],
      [
        "a missing moment",
        { ...good, tensors: good.tensors.filter((x) => x.name !== "v/1") },
        /only one of its two moments/,
      ],
      [
        "no critic",
        { ...good, tensors: good.tensors.filter((x) => !x.name.startsWith("critic")) },
        /critic/,
      ],
    ];
    for (const [what, state, message] of bad)
      await expect(t.importState(state), what).rejects.toThrow(message);
    expect(tf.memory().numTensors).toBe(numTensors);
    const after = await t.exportState();
    expect(after.iteration).toBe(before.iteration);
    expect(after.optimizerStep).toBe(before.optimizerStep);
    expect(after.tensors.map((x) => Array.from(x.data))).toEqual(
      before.tensors.map((x) => Array.from(x.data)),
    );
    // Bytes that do not match their manifest never reach a trainer.
    const { manifest, blob } = encodeTrainerState(good);
    const flipped = blob.slice();
    flipped[0] = (flipped[0] as number) ^ 1;
    expect(() => decodeTrainerState(manifest, flipped)).toThrow(/checksum mismatch/);
    expect(() => decodeTrainerState({ ...manifest, format: "x" }, blob)).toThrow(/format/);
    expect(() =>
      decodeTrainerState({ ...manifest, tensors: manifest.tensors.slice(1) }, blob),
    ).toThrow(/tile the blob/);
    for (const x of [src, { t, model }]) {
      x.t.dispose();
      x.model.dispose();
    }
  }, 300_000);

  it("leaves zero-advantage trajectories out of RLOO's compute, not out of its update", async () => {
    // Two-turn episodes of a tiny policy: some groups score all the same (A = 0 for every member).
    const opts = { algo: "rloo", overrides: {}, tasks: 4, k: 3 };
    const skip = trainer({ ...opts, skipZeroAdvantage: true });
    const full = trainer({ ...opts, skipZeroAdvantage: false });
    const ms = await skip.t.iterate();
    const mf = await full.t.iterate();
    const groups = skip.events.flatMap((e) => (e.type === "rollouts" ? e.groups : []));
    expect(groups.some((g) => g.advantages.every((x) => x === 0))).toBe(true);
    expect(groups.some((g) => g.advantages.some((x) => x !== 0))).toBe(true);
    expect(ms.meanReward).toBe(mf.meanReward);
    expect(ms.steps).toBe(mf.steps);
    const trained = (m: typeof ms) => m.trainTokensPerSecond * m.trainSeconds;
    expect(trained(ms)).toBeLessThan(0.9 * trained(mf));
    const ws = skip.model.weights();
    const wf = full.model.weights();
    const w0 = start.weights();
    let moved = 0;
    ws.forEach((w, i) => {
      const x = w.variable.dataSync();
      const y = (wf[i] as (typeof wf)[number]).variable.dataSync();
      const z = (w0[i] as (typeof w0)[number]).variable.dataSync();
      let d = 0;
      for (let j = 0; j < x.length; j++) {
        d = Math.max(d, Math.abs((x[j] as number) - (y[j] as number)));
        moved = Math.max(moved, Math.abs((x[j] as number) - (z[j] as number)));
      }
      // Adam's first step moves a weight by about lr (0.003) whatever its gradient's size, so float
      // rounding in a near-zero gradient shows up to ~1e-6; a dropped contribution would be ~lr.
      expect(d, w.name).toBeLessThan(3e-5);
    });
    expect(moved).toBeGreaterThan(1e-3);
    for (const x of [skip, full]) {
      x.t.dispose();
      x.model.dispose();
    }
  }, 300_000);

  it("pauses, steps exactly one iteration, and stops", async () => {
    const { t, model, events } = trainer({ tasks: 1, k: 2 });
    t.pause();
    const running = t.run(10);
    await new Promise((r) => setTimeout(r, 50));
    expect(t.iteration).toBe(0);
    t.step();
    while (t.iteration < 1) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 100));
    expect(t.iteration).toBe(1);
    t.stop();
    await running;
    expect(t.iteration).toBe(1);
    expect(events.filter((e) => e.type === "iteration")).toHaveLength(1);
    t.dispose();
    model.dispose();
  });

  it("gives the event loop a turn while it works: a stop from a timer lands mid-rollout, untrained", async () => {
    // In a worker, the page's reset arrives as a message: it is handled only when the trainer
    // gives the event loop a turn (a macrotask), not after the whole iteration.
    const { t, model, events } = trainer({ rolloutBatch: 4 });
    const weightsNow = () => model.weights().map((w) => Array.from(w.variable.dataSync()));
    const before = weightsNow();
    let sent = false;
    t.on((e) => {
      if (e.type !== "rollout-progress" || sent) return;
      sent = true;
      setTimeout(() => t.stop(), 0);
    });
    await t.run(1);
    // The first of the round's four batches of decoding, then the stop: nothing scored or trained.
    expect(events.filter((e) => e.type === "rollout-progress")).toHaveLength(1);
    expect(events.filter((e) => e.type === "minibatch")).toHaveLength(0);
    const metrics = events.find((e) => e.type === "iteration");
    expect(metrics?.type === "iteration" && metrics.metrics.stopped).toBe(true);
    expect(weightsNow()).toEqual(before);
    t.dispose();
    model.dispose();
  });

  it("a pause holds the rollouts midway; a step then finishes exactly that iteration", async () => {
    const { t, model, events } = trainer({ rolloutBatch: 4 });
    let paused = false;
    t.on((e) => {
      if (e.type !== "rollout-progress" || paused) return;
      paused = true;
      t.pause();
    });
    const running = t.run(3);
    await sleep(300);
    expect(events.filter((e) => e.type === "rollout-progress")).toHaveLength(1);
    expect(t.iteration).toBe(0);
    t.step();
    while (t.iteration < 1) await sleep(20);
    await sleep(300);
    expect(t.iteration).toBe(1);
    t.stop();
    await running;
    expect(events.filter((e) => e.type === "iteration")).toHaveLength(1);
    t.dispose();
    model.dispose();
  });

  it("a step given after a pause that no gate held (during the evaluation) runs the next iteration", async () => {
    const { t, model, events } = trainer({ tasks: 1, k: 2, evalEvery: 1, evalLimit: 1 });
    t.on((e) => {
      // The iteration's update is done and its evaluation is about to run: pause, then step.
      if (e.type === "iteration" && e.metrics.iteration === 1) {
        t.pause();
        t.step();
      }
    });
    const running = t.run(5);
    for (let waited = 0; t.iteration < 2 && waited < 60_000; waited += 50) await sleep(50);
    await sleep(300);
    expect(t.iteration).toBe(2);
    t.stop();
    await running;
    expect(events.filter((e) => e.type === "eval")).toHaveLength(2);
    t.dispose();
    model.dispose();
  });

  it("a non-finite loss skips the step and restores the last good weights", async () => {
    const { t, model, events } = trainer({ algo: "reinforce", overrides: {} });
    const w = model.weights().find((x) => x.name === "lnf.g")?.variable as tf.Variable;
    const good = w.dataSync().slice();
    w.assign(tf.fill(w.shape, Number.NaN));
    const m = await t.iterate();
    expect(m.skippedSteps).toBe(1);
    expect(events.some((e) => e.type === "warning" && /non-finite/.test(e.message))).toBe(true);
    expect(Array.from(w.dataSync())).toEqual(Array.from(good));
    t.dispose();
    model.dispose();
  });

  it("learns: LOOP raises the mean reward over the starting policy", async () => {
    const measure = async (model: GPT) => {
      const ids = TASKS.flatMap((id) => Array.from({ length: 8 }, () => id));
      const trajs = await rollout(model, tok, ids, {
        temperature: 1,
        seed: 12345,
        mode: "train",
        ...SHORT,
      });
      return trajs.reduce((s, x) => s + x.evaluation.reward, 0) / trajs.length;
    };
    // Two seeds, 10 iterations each: a tiny policy's single run is noisy (one seed dips for a few
    // iterations before it climbs), the mean of two is not.
    const gains: number[] = [];
    for (const seed of [0, 1]) {
      const { t, model } = trainer({ seed });
      const before = await measure(model);
      for (let i = 0; i < 10; i++) await t.iterate();
      gains.push((await measure(model)) - before);
      t.dispose();
      model.dispose();
    }
    expect((gains[0] as number) + (gains[1] as number)).toBeGreaterThan(0.1);
  }, 900_000);
});
