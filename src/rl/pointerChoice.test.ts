import * as tf from "@tensorflow/tfjs";
import { beforeAll, describe, expect, it } from "vitest";
import { collectDemonstrations, episodeCorpus } from "../agent/demos";
import { presetConfig } from "../model/config";
import { GPT } from "../model/gpt";
import { Tokenizer } from "../model/tokenizer";
import { opensField, pointerChoice, pointerMass } from "./pointerChoice";

beforeAll(async () => {
  await tf.setBackend("cpu");
});

// A context with two records and an action that starts copying the second one's password:
// [{"account_name":"mail","password":"ab"},{"account_name":"pay","password":"cd"}] pay.login(password="|c
const texts = [
  "[{",
  "account_name",
  '":"',
  "mail",
  "password",
  '":"',
  "a",
  "b",
  "account_name",
  '":"',
  "pay",
  "password",
  '":"',
  "c",
  "d",
  "pay",
  ".login(",
  "password",
  '="',
  "c",
];
const ids = texts.map((t, i) => (t === "c" ? 100 : t === "a" ? 101 : 200 + i));
const query = 18; // `="`: its next token is the value's first, `c`
const V = 4;

describe("pointer choice", () => {
  it("finds the keys that open a value of a field, in observations and actions", () => {
    const opens = texts.map((_, j) => opensField(texts, j, "password"));
    expect(opens.flatMap((x, j) => (x ? [j] : []))).toEqual([5, 12, 18]);
    expect(opensField(texts, 2, "password")).toBe(false);
  });

  it("splits the mixture into the right record, other records, elsewhere and the vocabulary", () => {
    const vocab = new Array(V).fill(-50);
    const scores = new Array(query).fill(-50);
    // All on the right record's key: the pay password's start.
    scores[12] = 10;
    let m = pointerMass(ids, texts, query, vocab, scores, "password");
    expect(m.right).toBeGreaterThan(0.999);
    // All on the other record (mail's password, which copies `a`).
    scores[12] = -50;
    scores[5] = 10;
    m = pointerMass(ids, texts, query, vocab, scores, "password");
    expect(m.otherRecords).toBeGreaterThan(0.999);
    // Split three ways: the right record, an unrelated key, the vocabulary.
    scores[5] = -50;
    scores[12] = Math.log(1);
    scores[16] = Math.log(3);
    vocab.fill(Math.log(1.5));
    m = pointerMass(ids, texts, query, vocab, scores, "password");
    const z = 1 + 3 + 4 * 1.5;
    expect(m.right).toBeCloseTo(1 / z, 3);
    expect(m.vocabulary).toBeCloseTo(6 / z, 3);
    expect(m.right + m.otherRecords + m.elsewhere + m.vocabulary).toBeCloseTo(1, 6);
  });

  it("averages the split per argument over demonstrations, and needs a copy head", async () => {
    const demos = collectDemonstrations("train", [0]).slice(0, 2);
    const tok = Tokenizer.build(episodeCorpus(demos), { maxWords: 200, minCount: 2 });
    const plain = new GPT(presetConfig("tiny", tok.size), 0);
    await expect(pointerChoice(plain, tok, demos)).rejects.toThrow(/copy head/);
    plain.dispose();
    const model = new GPT({ ...presetConfig("tiny", tok.size), copyHead: true }, 0);
    const before = tf.memory().numTensors;
    const rows = await pointerChoice(model, tok, demos);
    expect(tf.memory().numTensors).toBe(before);
    expect(rows.map((r) => r.arg)).toContain("password");
    for (const r of rows) {
      expect(r.values).toBeGreaterThan(0);
      expect(r.right + r.otherRecords + r.elsewhere + r.vocabulary).toBeCloseTo(1, 5);
    }
    model.dispose();
  });
});
