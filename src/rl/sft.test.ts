import * as tf from "@tensorflow/tfjs";
import { beforeAll, describe, expect, it } from "vitest";
import { collectDemonstrations, episodeCorpus, tokenizeEpisode } from "../agent/demos";
import { contextBudget, segments } from "../agent/transcript";
import { selectBackend } from "../model/backend";
import { presetConfig } from "../model/config";
import { GPT } from "../model/gpt";
import { Tokenizer } from "../model/tokenizer";
import { sft } from "./sft";

// Training tests run on the wasm backend: in Node it trains this model ~10x faster than the cpu
// backend (measured: 0.17 s vs 1.7 s a step), which keeps the test in seconds. The cpu backend is
// covered by the model's decoding and scoring tests.
beforeAll(async () => {
  await selectBackend({ force: "wasm" });
});

describe("SFT", () => {
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

  it("leaks no tensors over training steps", async () => {
    const model = new GPT(config, 1);
    await sft(model, segs.slice(0, 1), { epochs: 1, lr: 0.001, batchTokens: 4096, seed: 0 });
    const after1 = tf.memory().numTensors;
    await sft(model, segs.slice(0, 1), { epochs: 3, lr: 0.001, batchTokens: 4096, seed: 0 });
    expect(tf.memory().numTensors).toBe(after1);
    model.dispose();
  });
});
