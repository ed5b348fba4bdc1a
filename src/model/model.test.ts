import * as tf from "@tensorflow/tfjs";
import "@tensorflow/tfjs-backend-wasm";
import { beforeAll, describe, expect, it } from "vitest";
import { Rng } from "../env/rng";
import { presetConfig } from "./config";
import { disposeCache, extendAndGenerate, generate, type RowCache } from "./decode";
import { COPY_TARGET_SCALE, GPT, gatherRows } from "./gpt";
import { scoreSequences } from "./score";

beforeAll(async () => {
  await tf.setBackend("cpu");
});

// The copy head on: every test below runs through it (one test covers the configs without it).
const config = { ...presetConfig("tiny", 60), copyHead: true };

/** Scales the copy head up so that copying dominates and any misplaced pointer shows. */
function sharpenCopy(model: GPT): void {
  for (const { name, variable } of model.weights()) {
    if (name === "copy.wq" || name === "copy.wk") variable.assign(variable.mul(30));
    if (name === "copy.b") variable.assign(tf.tensor1d([4]));
    if (name === "copy.cont") variable.assign(tf.tensor1d([0.8]));
    if (name === "copy.wc") variable.assign(variable.mul(30));
    if (name === "copy.tok" || name === "copy.bias")
      variable.assign(tf.randomNormal(variable.shape, 0, 0.05, "float32", 7));
  }
}

function randomContexts(rng: Rng, lengths: number[]): number[][] {
  return lengths.map((n) => Array.from({ length: n }, () => rng.int(6, 59)));
}

describe("GPT", () => {
  it("has the preset's shape and a deterministic seeded init", async () => {
    const a = new GPT(config, 3);
    const b = new GPT(config, 3);
    const c = new GPT(config, 4);
    const first = (m: GPT) => Array.from(m.weights()[0]?.variable.dataSync() ?? []).slice(0, 50);
    expect(first(a)).toEqual(first(b));
    expect(first(a)).not.toEqual(first(c));
    expect(a.paramCount()).toBeGreaterThan(10_000);
    for (const m of [a, b, c]) m.dispose();
  });

  it("KV-cache decoding gives the full forward pass's next-token log-probs (batch of different lengths)", async () => {
    const model = new GPT(config, 1);
    const rng = new Rng(5);
    const contexts = randomContexts(rng, [3, 17, 40, 9]);
    // stopToken -1: never stop, so every row decodes the full 24 steps through the cache.
    const gen = await generate(model, contexts, {
      temperature: 1,
      maxTokens: 24,
      rng: new Rng(9),
      stopToken: -1,
    });
    const full = await scoreSequences(
      model,
      contexts.map((c, b) => [...c, ...(gen.tokens[b] as number[])]),
    );
    let worst = 0;
    contexts.forEach((c, b) => {
      const lp = gen.logprobs[b] as number[];
      expect(lp.length).toBe(24);
      lp.forEach((x, t) => {
        worst = Math.max(worst, Math.abs(x - (full.logprobs[b]?.[c.length + t] as number)));
      });
    });
    expect(worst).toBeLessThan(1e-4);
    model.dispose();
  });

  // On wasm too: its gather with batchDims reads other rows' entries (tfjs #8658), which the
  // continuation prior used to hit, so wasm sampled from a wrong distribution (by up to 5 nats).
  it.each(["cpu", "wasm"])(
    "a cache carried across turns gives the full pass's log-probs (previous-token embeddings, copy head, continuation) on %s",
    async (backend) => {
      await tf.setBackend(backend);
      const variants = [
        { prevToken: 2, copyHead: true, copyContinue: true, strongCopy: true },
        { prevToken: 2, copyHead: true, copyContinue: true, copyTarget: true, strongCopy: true },
        { prevToken: 1, copyHead: true, copyContinue: false, copyTarget: true, strongCopy: true },
        { prevToken: 1, copyHead: true, copyContinue: true, strongCopy: false },
        { prevToken: 4, copyHead: true, copyContinue: true, strongCopy: true },
        { prevToken: 2, copyHead: true, copyContinue: false, strongCopy: true },
        { prevToken: 2, copyHead: true, copyContinue: false, strongCopy: false },
        { prevToken: 1, copyHead: false, copyContinue: false, strongCopy: false },
        { prevToken: 0, copyHead: true, copyContinue: false, strongCopy: true },
        // Pointers to keys followed by 7, 20 or 33 write 8, 21 and 8 (ModelConfig.copyEmit).
        {
          prevToken: 2,
          copyHead: true,
          copyContinue: true,
          copyTarget: true,
          strongCopy: true,
          copyEmit: [
            [7, 8],
            [20, 21],
            [33, 8],
          ],
        },
      ] as const;
      for (const variant of variants) {
        const { prevToken, copyHead, copyContinue, strongCopy } = variant;
        const copyTarget = "copyTarget" in variant;
        const copyEmit = "copyEmit" in variant ? variant.copyEmit : undefined;
        const model = new GPT(
          {
            ...config,
            prevToken,
            copyHead,
            copyContinue,
            copyTarget,
            ...(copyEmit ? { copyEmit } : {}),
          },
          4,
        );
        if (strongCopy) sharpenCopy(model);
        const rng = new Rng(8);
        const contexts = randomContexts(rng, [5, 30, 12]);
        const opts = { temperature: 1, maxTokens: 6, rng: new Rng(3), stopToken: -1 };
        // Turn 1 from nothing; turn 2 brings the sampled action and an observation of a different
        // length per row; turn 2 samples one token, and turn 3 brings just that token on some rows
        // (their previous position is cached).
        const newTokens = [
          contexts,
          randomContexts(rng, [7, 2, 19]),
          randomContexts(rng, [0, 4, 0]),
        ];
        const maxTokens = [6, 1, 6];
        const seqs = contexts.map(() => [] as number[]);
        const sampled: { at: number; logprobs: number[]; tokens: number[] }[][] = contexts.map(
          () => [],
        );
        let caches: (RowCache | null)[] = contexts.map(() => null);
        for (const [turn, fresh] of newTokens.entries()) {
          const rows = fresh.map((tokens, b) => ({
            cache: caches[b] ?? null,
            tokens: turn === 0 ? tokens : [...(sampled[b]?.at(-1)?.tokens ?? []), ...tokens],
          }));
          const out = await extendAndGenerate(
            model,
            rows,
            { ...opts, maxTokens: maxTokens[turn] as number },
            true,
          );
          for (const c of caches) disposeCache(c);
          caches = out.caches;
          rows.forEach((r, b) => {
            const seq = seqs[b] as number[];
            seq.push(...r.tokens);
            sampled[b]?.push({
              at: seq.length,
              logprobs: out.logprobs[b] as number[],
              tokens: out.tokens[b] as number[],
            });
          });
        }
        for (const c of caches) disposeCache(c);
        seqs.forEach((seq, b) => {
          seq.push(...(sampled[b]?.at(-1)?.tokens ?? []));
        });
        const full = await scoreSequences(model, seqs);
        // The cheap path (targets only, no full mixture) gives the same log-probs.
        const cheap = await scoreSequences(model, seqs, { entropy: false });
        cheap.logprobs.forEach((row, b) => {
          row.forEach((x, t) => {
            expect(Math.abs(x - (full.logprobs[b]?.[t] as number))).toBeLessThan(1e-4);
          });
        });
        let worst = 0;
        sampled.forEach((turns, b) => {
          for (const { at, logprobs } of turns)
            logprobs.forEach((x, t) => {
              worst = Math.max(worst, Math.abs(x - (full.logprobs[b]?.[at + t] as number)));
            });
        });
        expect(worst, JSON.stringify(variant)).toBeLessThan(1e-4);
        model.dispose();
      }
      await tf.setBackend("cpu");
    },
  );

  it("growing a model (embeddings of tokens further back, copy continuation) keeps its function", async () => {
    const small = new GPT({ ...config, prevToken: 1 }, 6);
    sharpenCopy(small);
    const grown = GPT.grow(small, { prevToken: 2, copyContinue: true });
    expect(grown.config.prevToken).toBe(2);
    expect(grown.config.copyContinue).toBe(true);
    expect(grown.paramCount()).toBe(small.paramCount() + config.vocabSize * config.dModel + 1);
    const seqs = randomContexts(new Rng(2), [12, 30]);
    const a = await scoreSequences(small, seqs);
    const b = await scoreSequences(grown, seqs);
    let worst = 0;
    a.logprobs.forEach((x, i) => {
      x.forEach((v, t) => {
        worst = Math.max(worst, Math.abs(v - (b.logprobs[i]?.[t] as number)));
      });
    });
    expect(worst).toBeLessThan(1e-5);
    // Once the prior has a weight, the function changes.
    for (const { name, variable } of grown.weights())
      if (name === "copy.cont") variable.assign(tf.tensor1d([0.5]));
    const c = await scoreSequences(grown, seqs);
    let moved = 0;
    a.logprobs.forEach((x, i) => {
      x.forEach((v, t) => {
        moved = Math.max(moved, Math.abs(v - (c.logprobs[i]?.[t] as number)));
      });
    });
    expect(moved).toBeGreaterThan(0.01);
    expect(() => GPT.grow(grown, { prevToken: 1 })).toThrow(/cannot drop/);
    // Up to four tokens back: one new table per step back, each starting at zero.
    const deep = GPT.grow(grown, { prevToken: 4 });
    expect(deep.paramCount()).toBe(grown.paramCount() + 2 * config.vocabSize * config.dModel);
    const e = await scoreSequences(deep, seqs);
    expect(e.logprobs).toEqual(c.logprobs);
    deep.dispose();
    // One more layer: the same function, and training moves the new layer's output projection.
    const taller = GPT.grow(grown, { nLayers: config.nLayers + 1 }, 3);
    const f = await scoreSequences(taller, seqs);
    f.logprobs.forEach((x, i) => {
      x.forEach((v, t) => {
        expect(Math.abs(v - (c.logprobs[i]?.[t] as number))).toBeLessThan(1e-5);
      });
    });
    const L = config.nLayers;
    const wo = taller.weights().find((w) => w.name === `h${L}.attn.wo`)?.variable as tf.Variable;
    const { value, grads } = tf.variableGrads(
      () =>
        tf.tidy(() =>
          taller.forward(tf.tensor2d([seqs[1] as number[]], [1, 30], "int32")).logits.sum(),
        ) as tf.Scalar,
      [wo],
    );
    const woGrad = tf.tidy(() => (grads[wo.name] as tf.Tensor).abs().sum().dataSync()[0] as number);
    expect(woGrad).toBeGreaterThan(0);
    value.dispose();
    tf.dispose(Object.values(grads));
    expect(() => GPT.grow(taller, { nLayers: L })).toThrow(/cannot drop layers/);
    taller.dispose();
    expect(() => GPT.grow(grown, { copyContinue: false })).toThrow(/cannot drop/);
    // The copied-token term: the same function (its table at zero), and a gradient for the table.
    const seeing = GPT.grow(grown, { copyTarget: true }, 5);
    expect(seeing.paramCount()).toBe(
      grown.paramCount() + (config.vocabSize + config.dModel) * 16 + config.vocabSize,
    );
    const g = await scoreSequences(seeing, seqs);
    g.logprobs.forEach((x, i) => {
      x.forEach((v, t) => {
        expect(Math.abs(v - (c.logprobs[i]?.[t] as number))).toBeLessThan(1e-5);
      });
    });
    const table = seeing.weights().find((w) => w.name === "copy.tok")?.variable as tf.Variable;
    const tableGrad = tf.variableGrads(
      () =>
        tf.tidy(() => {
          const ids = tf.tensor2d([seqs[1] as number[]], [1, 30], "int32");
          return seeing.forward(ids).logits.slice([0, 0, 7], [1, 30, 1]).sum();
        }) as tf.Scalar,
      [table],
    );
    const moves = tf.tidy(
      () => (tableGrad.grads[table.name] as tf.Tensor).abs().sum().dataSync()[0] as number,
    );
    expect(moves).toBeGreaterThan(0);
    tableGrad.value.dispose();
    tf.dispose(Object.values(tableGrad.grads));
    expect(() => GPT.grow(seeing, { copyTarget: false })).toThrow(/cannot drop/);
    seeing.dispose();
    expect(() =>
      GPT.grow(new GPT({ ...config, copyHead: false }, 1), { copyContinue: true }),
    ).toThrow(/needs copyHead/);
    expect(() =>
      GPT.grow(new GPT({ ...config, copyHead: false }, 1), { copyTarget: true }),
    ).toThrow(/needs copyHead/);
    for (const m of [small, grown]) m.dispose();
  });

  it("the gather embedding has the one-hot product's value and gradient", () => {
    const rng = new Rng(9);
    const table = tf.tensor2d(
      Array.from({ length: 7 * 3 }, () => rng.float() - 0.5),
      [7, 3],
    );
    // The ids are made inside the differentiated function, as in a forward pass's tidy scope.
    const makeIds = () => tf.tensor1d([0, 6, 2, 2, 5, 0], "int32");
    const weight = tf.tensor2d(
      Array.from({ length: 6 * 3 }, () => rng.float()),
      [6, 3],
    );
    const viaGather = tf.valueAndGrad((t: tf.Tensor) =>
      tf.tidy(() =>
        gatherRows(t as tf.Tensor2D, makeIds(), 7)
          .mul(weight)
          .sum(),
      ),
    )(table);
    const viaOneHot = tf.valueAndGrad((t: tf.Tensor) =>
      tf
        .matMul(tf.oneHot(makeIds(), 7).toFloat(), t as tf.Tensor2D)
        .mul(weight)
        .sum(),
    )(table);
    expect(viaGather.value.dataSync()[0]).toBeCloseTo(viaOneHot.value.dataSync()[0] as number, 5);
    const a = viaGather.grad.dataSync();
    const b = viaOneHot.grad.dataSync();
    // Row 2 is used twice, rows 1, 3 and 4 never: their gradient is exactly zero.
    b.forEach((x, i) => {
      expect(a[i]).toBeCloseTo(x, 6);
    });
    expect(Array.from(a.slice(3, 6))).toEqual([0, 0, 0]);
    tf.dispose([table, weight, viaGather.value, viaGather.grad, viaOneHot.value, viaOneHot.grad]);
  });

  it("a copy head alone puts each token's mass on what followed its earlier occurrences", async () => {
    const model = new GPT({ ...config, copyHead: true }, 1);
    // Vocabulary logits all 0, every earlier position scored 40: p(y) = #{j < t: x_{j+1} = y} / t.
    for (const { name, variable } of model.weights())
      if (name === "wte" || name === "copy.wq" || name === "copy.wk")
        variable.assign(tf.zerosLike(variable));
      else if (name === "copy.b") variable.assign(tf.tensor1d([40]));
    const seq = [10, 11, 10, 12, 10, 11, 10, 13, 10, 11];
    const { logprobs, entropies } = await scoreSequences(model, [seq]);
    for (let t = 2; t < seq.length; t++) {
      // Predicting seq[t] from positions 0..t-1: candidates j < t - 1 (whose next token is known).
      const candidates = seq.slice(1, t);
      const hits = candidates.filter((x) => x === seq[t]).length;
      const expected = hits > 0 ? Math.log(hits / candidates.length) : -Infinity;
      if (hits > 0) expect(logprobs[0]?.[t]).toBeCloseTo(expected, 4);
      else expect(logprobs[0]?.[t] as number).toBeLessThan(-15);
    }
    // At t = 4 (context 10 11 10 12) the candidates are 11, 10, 12: entropy log 3.
    expect(entropies[0]?.[4]).toBeCloseTo(Math.log(3), 4);
    model.dispose();
  });

  it("with copyEmit a pointer writes the mapped token, not the one after its key", async () => {
    // As above (every earlier position scored 40, vocabulary logits 0), with 12 -> 11 and 13 -> 10:
    // p(y) = #{j < t - 1: emit(x_{j+1}) = y} / (t - 1), and 12 and 13 get no copied mass.
    const model = new GPT(
      {
        ...config,
        copyHead: true,
        copyEmit: [
          [12, 11],
          [13, 10],
        ],
      },
      1,
    );
    for (const { name, variable } of model.weights())
      if (name === "wte" || name === "copy.wq" || name === "copy.wk")
        variable.assign(tf.zerosLike(variable));
      else if (name === "copy.b") variable.assign(tf.tensor1d([40]));
    const emit = (y: number) => (y === 12 ? 11 : y === 13 ? 10 : y);
    const seq = [10, 11, 10, 12, 10, 11, 10, 13, 10, 11];
    const { logprobs } = await scoreSequences(model, [seq]);
    for (let t = 2; t < seq.length; t++) {
      const candidates = seq.slice(1, t).map(emit);
      const hits = candidates.filter((x) => x === seq[t]).length;
      if (hits > 0) expect(logprobs[0]?.[t]).toBeCloseTo(Math.log(hits / candidates.length), 4);
      else expect(logprobs[0]?.[t] as number).toBeLessThan(-15);
    }
    // Sampled greedily after 10 12 10: the pointers write 12 -> 11 and 10, never 12.
    const gen = await generate(model, [[10, 12, 10, 12, 10]], {
      temperature: 1,
      maxTokens: 8,
      rng: new Rng(2),
      stopToken: -1,
    });
    expect(gen.tokens[0]?.every((y) => y === 10 || y === 11)).toBe(true);
    model.dispose();
  });

  it("the copied-token term weighs each pointer by the token it would copy", async () => {
    const model = new GPT({ ...config, copyHead: true, copyTarget: true }, 1);
    const d = config.dModel;
    const unit = Array.from({ length: d }, (_, i) => (i === 0 ? 1 : 0));
    // A constant final state h = e_0 (vocabulary logits 0), content scores 0, copy.b 40, and
    // E_c[11] = (ln 3 / scale, 0, ...): a pointer to a key followed by 11 weighs three times the others.
    for (const { name, variable } of model.weights())
      if (name === "wte" || name === "copy.wq" || name === "copy.wk" || name === "lnf.g")
        variable.assign(tf.zerosLike(variable));
      else if (name === "lnf.b") variable.assign(tf.tensor1d(unit));
      else if (name === "copy.b") variable.assign(tf.tensor1d([40]));
      else if (name === "copy.wc")
        variable.assign(
          tf.tensor2d(
            Array.from({ length: d * 16 }, (_, i) => (i === 0 ? 1 : 0)),
            [d, 16],
          ),
        );
      else if (name === "copy.tok")
        variable.assign(
          tf.tensor2d(
            Array.from({ length: config.vocabSize * 16 }, (_, i) =>
              i === 11 * 16 ? Math.log(3) / COPY_TARGET_SCALE : 0,
            ),
            [config.vocabSize, 16],
          ),
        );
    const seq = [10, 11, 10, 12, 10, 11, 10, 13, 10, 11];
    const { logprobs } = await scoreSequences(model, [seq]);
    for (let t = 2; t < seq.length; t++) {
      const candidates = seq.slice(1, t);
      const weight = (y: number) => (y === 11 ? 3 : 1);
      const total = candidates.reduce((a, y) => a + weight(y), 0);
      const mass = candidates.filter((y) => y === seq[t]).reduce((a, y) => a + weight(y), 0);
      if (mass > 0) expect(logprobs[0]?.[t]).toBeCloseTo(Math.log(mass / total), 4);
    }
    // The per-token bias alone (the query-dependent part at zero) weighs them the same way.
    for (const { name, variable } of model.weights())
      if (name === "copy.tok") variable.assign(tf.zerosLike(variable));
      else if (name === "copy.bias")
        variable.assign(
          tf.tensor2d(
            Array.from({ length: config.vocabSize }, (_, i) =>
              i === 11 ? Math.log(3) / COPY_TARGET_SCALE : 0,
            ),
            [config.vocabSize, 1],
          ),
        );
    const biased = await scoreSequences(model, [seq]);
    expect(Array.from(biased.logprobs[0] ?? []).slice(2)).toEqual(
      Array.from(logprobs[0] ?? [])
        .slice(2)
        .map((x) => expect.closeTo(x, 4)),
    );
    model.dispose();
  });

  it("greedy decoding is deterministic and sampling follows the seed", async () => {
    const model = new GPT(config, 2);
    const ctx = randomContexts(new Rng(1), [10, 20]);
    const g1 = await generate(model, ctx, {
      temperature: 0,
      maxTokens: 8,
      rng: new Rng(1),
      stopToken: -1,
    });
    const g2 = await generate(model, ctx, {
      temperature: 0,
      maxTokens: 8,
      rng: new Rng(2),
      stopToken: -1,
    });
    expect(g1.tokens).toEqual(g2.tokens);
    const s1 = await generate(model, ctx, {
      temperature: 1,
      maxTokens: 8,
      rng: new Rng(7),
      stopToken: -1,
    });
    const s2 = await generate(model, ctx, {
      temperature: 1,
      maxTokens: 8,
      rng: new Rng(7),
      stopToken: -1,
    });
    expect(s1).toEqual(s2);
    model.dispose();
  });

  it("stops each row at the stop token and at the per-turn cap", async () => {
    const model = new GPT(config, 2);
    const ctx = randomContexts(new Rng(1), [5, 6, 7]);
    const g = await generate(model, ctx, {
      temperature: 1.5,
      maxTokens: 30,
      rng: new Rng(3),
      stopToken: 7,
    });
    for (const row of g.tokens) {
      expect(row.length).toBeLessThanOrEqual(30);
      const i = row.indexOf(7);
      if (i >= 0) expect(i).toBe(row.length - 1);
      else expect(row.length).toBe(30);
    }
    model.dispose();
  });

  it("leaks no tensors over repeated decoding and scoring", async () => {
    // Every part of the copy head on: continuation, copied-token term, a quote map.
    const model = new GPT(
      { ...config, copyContinue: true, copyTarget: true, copyEmit: [[7, 8]] },
      2,
    );
    const ctx = randomContexts(new Rng(1), [12, 30]);
    const once = async () => {
      const g = await generate(model, ctx, { temperature: 1, maxTokens: 6, rng: new Rng(1) });
      await scoreSequences(
        model,
        ctx.map((c, b) => [...c, ...(g.tokens[b] as number[])]),
      );
    };
    await once();
    const after1 = tf.memory().numTensors;
    for (let i = 0; i < 4; i++) await once();
    expect(tf.memory().numTensors).toBe(after1);
    model.dispose();
  });
});
