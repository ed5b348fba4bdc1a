import * as tf from "@tensorflow/tfjs";
import { beforeAll, describe, expect, it } from "vitest";
import { Rng } from "../env/rng";
import { checkpointDecoding, modelFromCheckpoint } from "./checkpoint";
import { readCheckpointDir } from "./checkpointFs";
import { generate } from "./decode";
import { BOS } from "./tokenizer";

beforeAll(async () => {
  await tf.setBackend("cpu");
});

describe("the shipped base checkpoint", () => {
  it("loads (manifest, checksum, vocabulary) and decodes", async () => {
    const parsed = await readCheckpointDir("public/checkpoints/base");
    const { model, tokenizer } = modelFromCheckpoint(parsed);
    expect(model.paramCount()).toBeLessThan(2_000_000);
    // A grammar-constrained policy: the CLIs and the page decode it under the action grammar.
    expect(checkpointDecoding(parsed)).toBe("grammar");
    // Its vocabulary writes a relationship's plural as the singular an action copies + s.
    expect(tokenizer.encode("classmates")).toEqual([
      ...tokenizer.encode("classmate"),
      ...tokenizer.encode("s"),
    ]);
    const ctx = [BOS, ...tokenizer.encode("You act for Ava Chen.")];
    const out = await generate(model, [ctx], { temperature: 0, maxTokens: 4, rng: new Rng(0) });
    expect(out.tokens[0]?.length).toBeGreaterThan(0);
    model.dispose();
  });
});
