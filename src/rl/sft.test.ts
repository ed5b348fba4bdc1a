import * as tf from "@tensorflow/tfjs";
import { beforeAll, describe, expect, it } from "vitest";
import { collectDemonstrations, episodeCorpus, tokenizeEpisode } from "../agent/demos";
import { contextBudget, segments } from "../agent/transcript";
import { selectBackend } from "../model/backend";
import { presetConfig } from "../model/config";
import { GPT } from "../model/gpt";
import { tokenLogProbs } from "../model/score";
import { Tokenizer } from "../model/tokenizer";
import { learningRate, maskedNll, sft, sftLoss } from "./sft";

// Training tests run on the wasm backend: in Node it trains this model ~10x faster than the cpu
// backend (measured: 0.17 s vs 1.7 s a step), which keeps the test in seconds. The cpu backend is
// covered by the model's decoding and scoring tests.
beforeAll(async () => {
  await selectBackend({ force: "wasm" });
});

describe("SFT", () => {
  it("decays the learning rate linearly to lrFinal over decaySteps, then holds it", () => {
    const opts = { lr: 3e-3, lrFinal: 3e-4, decaySteps: 100 };
    expect(learningRate(opts, 0)).toBeCloseTo(3e-3, 10);
    expect(learningRate(opts, 50)).toBeCloseTo(1.65e-3, 10);
    expect(learningRate(opts, 100)).toBeCloseTo(3e-4, 10);
    expect(learningRate(opts, 400)).toBeCloseTo(3e-4, 10);
    expect(learningRate({ lr: 1e-3 }, 70)).toBe(1e-3);
  });

  const demos = collectDemonstrations("train", [0]).slice(0, 2);
  const tok = Tokenizer.build(episodeCorpus(demos), { maxWords: 200, minCount: 2 });
  // A short context keeps sequences short (the context rule splits episodes), so this runs fast.
  const config = { ...presetConfig("tiny", tok.size), context: 448 };
  const segs = demos.flatMap((d) => {
    const t = tokenizeEpisode(tok, d);
    return segments(t.prompt, t.turns.slice(0, 3), contextBudget(config.context));
  });

  it("overfits a handful of episodes: the agent-token loss falls far", async () => {
    const model = new GPT(config, 0);
    const log = await sft(model, segs, { epochs: 30, lr: 0.01, batchTokens: 4096, seed: 0 });
    const first = log[0]?.loss as number;
    const last = log.slice(-3).reduce((s, x) => s + x.loss, 0) / 3;
    expect(first).toBeGreaterThan(4);
    expect(last).toBeLessThan(first * 0.35);
    model.dispose();
  });

  it("takes no step on a batch with nothing to imitate", async () => {
    const model = new GPT(config, 4);
    const before = model.trainableVariables().map((v) => v.dataSync().slice());
    const contextOnly = segs.map((s) => ({ ...s, agentMask: s.agentMask.map(() => 0) }));
    const log = await sft(model, contextOnly, { epochs: 2, lr: 0.01, batchTokens: 4096, seed: 0 });
    expect(log).toEqual([]);
    model.trainableVariables().forEach((v, i) => {
      expect(Array.from(v.dataSync())).toEqual(Array.from(before[i] as Float32Array));
    });
    model.dispose();
  });

  it("trainOnly trains the named parameters and leaves the rest as they were", async () => {
    const model = new GPT({ ...config, copyHead: true, copyTarget: true }, 5);
    const before = new Map(model.weights().map((w) => [w.name, w.variable.dataSync().slice()]));
    await sft(model, segs, {
      epochs: 1,
      lr: 0.01,
      batchTokens: 4096,
      seed: 0,
      trainOnly: ["copy.wc", "copy.tok"],
    });
    for (const { name, variable } of model.weights()) {
      const same = Array.from(variable.dataSync()).every((x, i) => x === before.get(name)?.[i]);
      expect(same, name).toBe(!name.startsWith("copy.wc") && !name.startsWith("copy.tok"));
    }
    await expect(
      sft(model, segs, { epochs: 1, lr: 0.01, batchTokens: 4096, seed: 0, trainOnly: ["copy.x"] }),
    ).rejects.toThrow(/no parameter named "copy.x"/);
    await expect(
      sft(model, segs, { epochs: 1, lr: 0.01, batchTokens: 4096, seed: 0, trainOnly: [] }),
    ).rejects.toThrow(/names no parameter/);
    model.dispose();
  });

  it("sgd trains the named parameters by plain SGD beside AdamW; names of nothing trained are refused", async () => {
    const model = new GPT({ ...config, copyHead: true, copyTarget: true }, 6);
    const bias = model.weights().find((w) => w.name === "copy.bias")?.variable as tf.Variable;
    const opts = { epochs: 1, lr: 0.01, batchTokens: 4096, seed: 0 };
    // An SGD rate of zero leaves its parameters where they were while AdamW moves the rest.
    const before = new Map(model.weights().map((w) => [w.name, w.variable.dataSync().slice()]));
    await sft(model, segs, { ...opts, sgd: { names: ["copy.tok", "copy.bias"], lr: 0 } });
    for (const { name, variable } of model.weights()) {
      const same = Array.from(variable.dataSync()).every((x, i) => x === before.get(name)?.[i]);
      expect(same, name).toBe(name === "copy.tok" || name === "copy.bias");
    }
    await sft(model, segs, { ...opts, sgd: { names: ["copy.bias"], lr: 1 } });
    expect(Array.from(bias.dataSync()).some((x) => x !== 0)).toBe(true);
    await expect(sft(model, segs, { ...opts, sgd: { names: ["copy.x"], lr: 1 } })).rejects.toThrow(
      /no parameter named "copy.x"/,
    );
    await expect(
      sft(model, segs, { ...opts, trainOnly: ["copy.wc"], sgd: { names: ["copy.bias"], lr: 1 } }),
    ).rejects.toThrow(/none of the trained/);
    model.dispose();
  });

  it("records each step's lr; decayProgress decays it by the share of a budget spent", async () => {
    const model = new GPT(config, 3);
    const stepLr = await sft(model, segs.slice(0, 2), {
      epochs: 2,
      lr: 0.01,
      lrFinal: 0.001,
      decaySteps: 2,
      batchTokens: 4096,
      seed: 0,
    });
    expect(stepLr.map((s) => s.lr)).toEqual([
      0.01,
      learningRate({ lr: 0.01, lrFinal: 0.001, decaySteps: 2 }, 1),
    ]);
    // A budget half spent, then fully: lr, then the halfway lr, then lrFinal (and no further).
    const spent = [0, 0.5, 1, 1.7];
    let call = 0;
    const byTime = await sft(model, segs.slice(0, 2), {
      epochs: 4,
      lr: 0.01,
      lrFinal: 0.001,
      decayProgress: () => spent[call++] as number,
      batchTokens: 4096,
      seed: 0,
    });
    expect(byTime.length).toBe(4);
    [0.01, 0.0055, 0.001, 0.001].forEach((lr, i) => {
      expect(byTime[i]?.lr).toBeCloseTo(lr, 12);
    });
    model.dispose();
  });

  it("averageFrom leaves the model with the mean of its weights after each step from that one on", async () => {
    const model = new GPT(config, 7);
    const opts = { epochs: 4, lr: 0.01, batchTokens: 4096, seed: 0 };
    // The same run twice: once recording each step's weights, once averaging from step 2.
    const seen: Float32Array[][] = [];
    const raw = await sft(model, segs.slice(0, 2), {
      ...opts,
      onStep: () => {
        seen.push(model.weights().map((w) => w.variable.dataSync().slice() as Float32Array));
      },
    });
    expect(raw.length).toBe(4);
    model.dispose();
    const averaged = new GPT(config, 7);
    const before = tf.memory().numTensors;
    const log = await sft(averaged, segs.slice(0, 2), { ...opts, averageFrom: 2 });
    expect(tf.memory().numTensors).toBe(before);
    expect(log.map((s) => s.loss)).toEqual(raw.map((s) => s.loss)); // same trajectory
    averaged.weights().forEach((w, k) => {
      const got = w.variable.dataSync();
      const want = (i: number) =>
        ((seen[1]?.[k]?.[i] ?? 0) + (seen[2]?.[k]?.[i] ?? 0) + (seen[3]?.[k]?.[i] ?? 0)) / 3;
      for (let i = 0; i < got.length; i += 97) expect(got[i]).toBeCloseTo(want(i), 5);
      // ...and not the last step's weights (where training moved them).
      if (seen[3]?.[k]?.some((x, i) => x !== seen[1]?.[k]?.[i]))
        expect(Array.from(got).some((x, i) => x !== seen[3]?.[k]?.[i])).toBe(true);
    });
    await expect(sft(averaged, segs, { ...opts, averageFrom: 0 })).rejects.toThrow(/averageFrom/);
    averaged.dispose();
  });

  it("leaks no tensors over training steps", async () => {
    const model = new GPT(config, 1);
    await sft(model, segs.slice(0, 1), { epochs: 1, lr: 0.001, batchTokens: 4096, seed: 0 });
    const after1 = tf.memory().numTensors;
    await sft(model, segs.slice(0, 1), { epochs: 3, lr: 0.001, batchTokens: 4096, seed: 0 });
    expect(tf.memory().numTensors).toBe(after1);
    model.dispose();
  });

  it("the world-text loss adds w x the mean NLL of the non-agent tokens, and leaks nothing", async () => {
    const model = new GPT(config, 2);
    const batch = {
      ids: Int32Array.from([1, 7, 8, 9, 10]),
      targets: Int32Array.from([7, 8, 9, 10, 11]),
      B: 1,
      T: 5,
    };
    const agent = tf.tensor2d([[0, 0, 1, 1, 0]], [1, 5]);
    const world = tf.tensor2d([[1, 1, 0, 0, 1]], [1, 5]);
    const lpT = tf.tidy(() => tokenLogProbs(model, batch).logp);
    const lp = (await lpT.data()) as Float32Array;
    const nll = (ts: number[]) => -ts.reduce((s, t) => s + (lp[t] as number), 0) / ts.length;
    const value = (f: () => tf.Scalar) => {
      const t = tf.tidy(f);
      const x = t.dataSync()[0] as number;
      t.dispose();
      return x;
    };
    const plain = value(() => maskedNll(model, batch, agent));
    const mixed = value(() => sftLoss(model, batch, agent, world, 0.5));
    expect(plain).toBeCloseTo(nll([2, 3]), 4);
    expect(mixed).toBeCloseTo(nll([2, 3]) + 0.5 * nll([0, 1, 4]), 4);
    const before = tf.memory().numTensors;
    await sft(model, segs.slice(0, 1), {
      epochs: 2,
      lr: 0.001,
      batchTokens: 4096,
      seed: 0,
      worldWeight: 0.5,
    });
    expect(tf.memory().numTensors).toBe(before);
    tf.dispose([agent, world, lpT]);
    model.dispose();
  });
});
