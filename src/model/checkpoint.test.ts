import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as tf from "@tensorflow/tfjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  blobChecksum,
  CheckpointError,
  type CheckpointManifest,
  loadIntoModel,
  modelFromCheckpoint,
  packCheckpoint,
  parseCheckpoint,
  saveCheckpoint,
  unpackCheckpoint,
} from "./checkpoint";
import { readCheckpointDir, saveCheckpointToDir } from "./checkpointFs";
import type { ModelConfig } from "./config";
import { GPT } from "./gpt";
import { Tokenizer } from "./tokenizer";

const corpus = [
  'pay.send_money(access_token="pa3k9x2", receiver_email="rosa.ellis@post.net", amount=25)',
  '[{"contact_id":3,"first_name":"Rosa","last_name":"Ellis","email":"rosa.ellis@post.net"}]',
  "You act for Rosa Ellis. Today is 2026-07-25.",
];
const tok = Tokenizer.build([...corpus, ...corpus]);
const otherTok = Tokenizer.build(["zebra quartz violin zebra quartz violin ;; ;; <> <>"]);

function tinyConfig(over: Partial<ModelConfig> = {}): ModelConfig {
  return {
    vocabSize: tok.size,
    context: 32,
    dModel: 16,
    nLayers: 1,
    nHeads: 2,
    dMlp: 32,
    prevToken: 1,
    copyHead: true,
    copyContinue: true,
    copyTarget: true,
    ...over,
  } as ModelConfig;
}

/** Every weight's bytes, copied. */
async function snapshot(model: GPT): Promise<Map<string, Uint8Array>> {
  const out = new Map<string, Uint8Array>();
  for (const { name, variable } of model.weights()) {
    const d = await variable.data<"float32">();
    out.set(name, new Uint8Array(d.buffer, d.byteOffset, d.byteLength).slice());
  }
  return out;
}

function expectBitsEqual(a: Map<string, Uint8Array>, b: Map<string, Uint8Array>): void {
  expect([...a.keys()]).toEqual([...b.keys()]);
  for (const [name, bytes] of a) {
    const other = b.get(name) as Uint8Array;
    expect(other.length, name).toBe(bytes.length);
    expect(Buffer.compare(Buffer.from(bytes), Buffer.from(other)), name).toBe(0);
  }
}

/** A deep copy of a manifest to corrupt. */
function clone(m: CheckpointManifest): CheckpointManifest {
  return JSON.parse(JSON.stringify(m)) as CheckpointManifest;
}

/** Rebuilds a consistent manifest + blob (offsets, checksum) from a list of tensors. */
function relayout(
  base: CheckpointManifest,
  blob: Uint8Array,
  edit: (tensors: { name: string; shape: number[]; bytes: Uint8Array }[]) => void,
): { manifest: CheckpointManifest; blob: Uint8Array } {
  const tensors = base.tensors.map((t) => ({
    name: t.name,
    shape: [...t.shape],
    bytes: blob.slice(t.offset, t.offset + t.byteLength),
  }));
  edit(tensors);
  const total = tensors.reduce((s, t) => s + t.bytes.length, 0);
  const out = new Uint8Array(total);
  const manifest = clone(base);
  let offset = 0;
  manifest.tensors = tensors.map((t) => {
    out.set(t.bytes, offset);
    const entry = {
      name: t.name,
      shape: t.shape,
      dtype: "float32" as const,
      offset,
      byteLength: t.bytes.length,
    };
    offset += t.bytes.length;
    return entry;
  });
  manifest.checksum = blobChecksum(out);
  return { manifest, blob: out };
}

describe("checkpoints", () => {
  let source: GPT;
  let target: GPT;
  let saved: { manifest: CheckpointManifest; blob: Uint8Array };
  let dir: string;

  beforeAll(async () => {
    tf.setBackend("cpu");
    source = new GPT(tinyConfig(), 1);
    target = new GPT(tinyConfig(), 2);
    saved = await saveCheckpoint(source, tok, { createdAt: "2026-01-01T00:00:00Z", step: 7 });
    dir = await mkdtemp(join(tmpdir(), "loop-ckpt-"));
  });
  afterAll(async () => {
    source.dispose();
    target.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  /** Asserts the call throws a CheckpointError matching `message` and `target` is untouched. */
  async function expectRefused(call: () => unknown, message: string | RegExp): Promise<void> {
    const before = await snapshot(target);
    let err: unknown;
    try {
      call();
    } catch (e) {
      err = e;
    }
    expect(err, "expected a refusal").toBeInstanceOf(CheckpointError);
    expect((err as Error).message).toMatch(message);
    expectBitsEqual(await snapshot(target), before);
  }

  it("writes a manifest describing every weight in weights() order", () => {
    const { manifest, blob } = saved;
    expect(manifest.format).toBe("loop-playground-checkpoint");
    expect(manifest.version).toBe(1);
    expect(manifest.config).toEqual(tinyConfig());
    expect(manifest.tokenizer).toEqual(tok.toJSON());
    expect(manifest.tensors.map((t) => t.name)).toEqual(source.weights().map((w) => w.name));
    expect(manifest.checksum).toMatch(/^fnv1a32:[0-9a-f]{8}$/);
    expect(manifest.meta).toEqual({ createdAt: "2026-01-01T00:00:00Z", step: 7 });
    expect(blob.length).toBe(source.paramCount() * 4);
  });

  it("round-trips exactly: save, parse, load into a differently seeded model", async () => {
    const want = await snapshot(source);
    const fresh = new GPT(tinyConfig(), 99);
    expect(Buffer.from(want.get("wte") as Uint8Array)).not.toEqual(
      Buffer.from((await snapshot(fresh)).get("wte") as Uint8Array),
    );
    loadIntoModel(fresh, parseCheckpoint(saved.manifest, saved.blob), tok);
    expectBitsEqual(await snapshot(fresh), want);
    fresh.dispose();
  });

  it("keeps every bit: NaN, infinities, -0 and subnormals survive", async () => {
    const model = new GPT(tinyConfig(), 3);
    const special = new Float32Array([Number.NaN, Number.POSITIVE_INFINITY, -0, 1e-45, -3.5e38]);
    const lnb = model.weights().find((w) => w.name === "lnf.b")?.variable as tf.Variable;
    const values = new Float32Array(lnb.size);
    values.set(special);
    // A NaN with a non-default payload.
    new Uint32Array(values.buffer)[5] = 0x7fc12345;
    const t = tf.tensor(values, lnb.shape);
    lnb.assign(t);
    t.dispose();
    const want = await snapshot(model);
    const { manifest, blob } = await saveCheckpoint(model, tok);
    const back = modelFromCheckpoint(parseCheckpoint(manifest, blob), 5);
    expectBitsEqual(await snapshot(back.model), want);
    model.dispose();
    back.model.dispose();
  });

  it("round-trips through the packed single-file format", async () => {
    const packed = packCheckpoint(saved.manifest, saved.blob);
    expect(new TextDecoder().decode(packed.subarray(0, 8))).toBe("LOOPCKPT");
    const { manifest, blob } = unpackCheckpoint(packed);
    const parsed = parseCheckpoint(manifest, blob);
    expect(parsed.manifest).toEqual(saved.manifest);
    const { model, tokenizer } = modelFromCheckpoint(parsed, 123);
    expect(tokenizer.toJSON()).toEqual(tok.toJSON());
    expectBitsEqual(await snapshot(model), await snapshot(source));
    model.dispose();
  });

  it("round-trips through a directory on disk", async () => {
    const sub = join(dir, "a", "b");
    await saveCheckpointToDir(sub, saved.manifest, saved.blob);
    const parsed = await readCheckpointDir(sub);
    const fresh = new GPT(tinyConfig(), 42);
    loadIntoModel(fresh, parsed, tok);
    expectBitsEqual(await snapshot(fresh), await snapshot(source));
    fresh.dispose();
  });

  it("names missing or unreadable files in a checkpoint directory", async () => {
    await expect(readCheckpointDir(join(dir, "nowhere"))).rejects.toThrow(/no manifest\.json/);
    const half = join(dir, "half");
    await saveCheckpointToDir(half, saved.manifest, saved.blob);
    await rm(join(half, "weights.bin"));
    await expect(readCheckpointDir(half)).rejects.toThrow(/no weights\.bin/);
    const bad = join(dir, "bad");
    await saveCheckpointToDir(bad, saved.manifest, saved.blob);
    await writeFile(join(bad, "manifest.json"), "{ not json");
    await expect(readCheckpointDir(bad)).rejects.toThrow(/manifest\.json is not valid JSON/);
  });

  it("leaks no tensors across save, parse, load and modelFromCheckpoint", async () => {
    const before = tf.memory().numTensors;
    const s = await saveCheckpoint(source, tok);
    const parsed = parseCheckpoint(s.manifest, s.blob);
    loadIntoModel(target, parsed, tok);
    expect(tf.memory().numTensors).toBe(before);
    const { model } = modelFromCheckpoint(parsed);
    model.dispose();
    expect(tf.memory().numTensors).toBe(before);
  });

  describe("refuses bad checkpoints, leaving the model unchanged", () => {
    const parseAndLoad = (manifest: unknown, blob: Uint8Array, t?: Tokenizer) => () =>
      loadIntoModel(target, parseCheckpoint(manifest, blob), t);

    it("garbage instead of a manifest", async () => {
      for (const junk of [null, "a string", 42, [], undefined])
        await expectRefused(parseAndLoad(junk, saved.blob), /not a checkpoint manifest/);
      await expectRefused(parseAndLoad({}, saved.blob), /format is missing/);
    });

    it("wrong format string or version", async () => {
      const m = { ...clone(saved.manifest), format: "keras" };
      await expectRefused(parseAndLoad(m, saved.blob), /format is "keras"/);
      const v = { ...clone(saved.manifest), version: 2 };
      await expectRefused(parseAndLoad(v, saved.blob), /unsupported checkpoint version 2/);
    });

    it("a bad config field", async () => {
      const m = clone(saved.manifest);
      (m.config as unknown as Record<string, unknown>).dModel = -16;
      await expectRefused(parseAndLoad(m, saved.blob), /bad config: .*dModel/);
      const h = clone(saved.manifest);
      h.config.nHeads = 3;
      await expectRefused(parseAndLoad(h, saved.blob), /bad config: .*nHeads/);
      for (const [emit, message] of [
        [[[3, tok.size]], /copyEmit must be pairs/],
        [[[3]], /copyEmit must be pairs/],
        ["quotes", /copyEmit must be pairs/],
        [
          [
            [3, 4],
            [3, 5],
          ],
          /copyEmit maps a token twice/,
        ],
      ] as const) {
        const e = clone(saved.manifest);
        (e.config as unknown as Record<string, unknown>).copyEmit = emit;
        await expectRefused(parseAndLoad(e, saved.blob), message);
      }
    });

    it("a config that differs from the model's", async () => {
      const big = new GPT(tinyConfig({ dMlp: 64 }), 1);
      const s = await saveCheckpoint(big, tok);
      big.dispose();
      await expectRefused(parseAndLoad(s.manifest, s.blob), /config differs: dMlp is 64/);
      // Another copyEmit map: the same weights write other tokens.
      const mapped = new GPT(tinyConfig({ copyEmit: [[6, 7]] }), 1);
      const m = await saveCheckpoint(mapped, tok);
      mapped.dispose();
      await expectRefused(
        parseAndLoad(m.manifest, m.blob),
        /config differs: copyEmit is \[\[6,7\]\]/,
      );
      // It round-trips into a model with the same map.
      const same = new GPT(tinyConfig({ copyEmit: [[6, 7]] }), 5);
      loadIntoModel(same, parseCheckpoint(m.manifest, m.blob), tok);
      expect(same.config.copyEmit).toEqual([[6, 7]]);
      expect(parseCheckpoint(m.manifest, m.blob).config.copyEmit).toEqual([[6, 7]]);
      same.dispose();
    });

    it("a bad tokenizer or a vocabSize that does not match it", async () => {
      const t = clone(saved.manifest);
      t.tokenizer.words = ["Not Lower"];
      await expectRefused(parseAndLoad(t, saved.blob), /bad tokenizer/);
      const v = clone(saved.manifest);
      v.config.vocabSize += 1;
      await expectRefused(
        parseAndLoad(v, saved.blob),
        new RegExp(`tokenizer has ${tok.size} tokens but config.vocabSize is ${tok.size + 1}`),
      );
    });

    it("another vocabulary than the caller's tokenizer", async () => {
      await expectRefused(parseAndLoad(saved.manifest, saved.blob, otherTok), /another vocabulary/);
    });

    it("a wrong shape", async () => {
      const { manifest, blob } = relayout(saved.manifest, saved.blob, (ts) => {
        const t = ts.find((x) => x.name === "h0.attn.wqkv");
        if (t) t.shape = [48, 16];
      });
      await expectRefused(
        parseAndLoad(manifest, blob),
        "h0.attn.wqkv: checkpoint shape [48,16], model [16,48]",
      );
    });

    it("a missing tensor", async () => {
      const { manifest, blob } = relayout(saved.manifest, saved.blob, (ts) => {
        ts.splice(
          ts.findIndex((x) => x.name === "h0.mlp.w1"),
          1,
        );
      });
      await expectRefused(parseAndLoad(manifest, blob), /missing tensor h0\.mlp\.w1/);
    });

    it("an extra tensor", async () => {
      const { manifest, blob } = relayout(saved.manifest, saved.blob, (ts) => {
        ts.push({ name: "h9.mlp.w1", shape: [2], bytes: new Uint8Array(8) });
      });
      await expectRefused(parseAndLoad(manifest, blob), /unknown tensor h9\.mlp\.w1/);
    });

    it("malformed tensor entries, duplicates and overlaps", async () => {
      const cases: [(m: CheckpointManifest) => void, RegExp][] = [
        [(m) => ((m.tensors as unknown[])[0] = 5), /tensor entry 0 is not an object/],
        [(m) => ((m.tensors[0] as { name: unknown }).name = ""), /tensor entry 0: name/],
        [(m) => ((m.tensors[1] as { dtype: string }).dtype = "int32"), /tensor wpe: dtype "int32"/],
        [(m) => ((m.tensors[1] as { shape: unknown }).shape = [1.5]), /tensor wpe: shape/],
        [(m) => ((m.tensors[1] as { offset: number }).offset = -4), /tensor wpe: offset/],
        [(m) => (m.tensors[1].byteLength = 4), /tensor wpe: byteLength 4 does not match shape/],
        [(m) => (m.tensors[2].name = "wte"), /tensor wte is listed twice/],
        [(m) => (m.tensors[1].offset = 4), /tensors wte and wpe overlap/],
        [(m) => ((m as unknown as Record<string, unknown>).extra = 1), /unknown field extra/],
        [(m) => ((m as unknown as Record<string, unknown>).tensors = {}), /tensors must be/],
        [(m) => (m.checksum = "md5:abc"), /checksum must be/],
        [(m) => (m.meta = { step: -1 }), /meta\.step/],
        [(m) => (m.meta = { decoding: "greedy" as "free" }), /meta\.decoding must be one of/],
      ];
      for (const [corrupt, message] of cases) {
        const m = clone(saved.manifest);
        corrupt(m);
        await expectRefused(parseAndLoad(m, saved.blob), message);
      }
    });

    it("a tensor outside the blob", async () => {
      const m = clone(saved.manifest);
      const last = m.tensors.at(-1) as { offset: number; name: string };
      const gap = m.tensors.at(-2) as { offset: number };
      // Same total length, but a gap before the last two pushes the last one past the end.
      gap.offset += 4;
      last.offset += 4;
      await expectRefused(
        parseAndLoad(m, saved.blob),
        new RegExp(`tensor ${last.name.replace(".", "\\.")}: bytes .* lie outside the blob`),
      );
    });

    it("a truncated blob", async () => {
      const short = saved.blob.slice(0, saved.blob.length - 4);
      await expectRefused(parseAndLoad(saved.manifest, short), /blob length mismatch/);
    });

    it("a flipped byte", async () => {
      const flipped = saved.blob.slice();
      flipped[100] = (flipped[100] as number) ^ 0x10;
      await expectRefused(
        parseAndLoad(saved.manifest, flipped),
        `checksum mismatch: manifest says ${saved.manifest.checksum}, blob has ${blobChecksum(flipped)}`,
      );
    });

    it("bad packed files", async () => {
      const packed = packCheckpoint(saved.manifest, saved.blob);
      const unpackLoad = (bytes: Uint8Array) => () => {
        const { manifest, blob } = unpackCheckpoint(bytes);
        loadIntoModel(target, parseCheckpoint(manifest, blob));
      };
      const wrong = packed.slice();
      wrong.set(new TextEncoder().encode("PK\u0003\u0004"), 0);
      await expectRefused(unpackLoad(wrong), /not a checkpoint file: it starts with/);
      await expectRefused(unpackLoad(packed.slice(0, 5)), /shorter than the 12-byte header/);
      await expectRefused(unpackLoad(packed.slice(0, 200)), /truncated checkpoint file/);
      await expectRefused(unpackLoad(packed.slice(0, packed.length - 1)), /blob length mismatch/);
      const badJson = packed.slice();
      badJson[12] = 0x7d; // "}" where "{" should be
      await expectRefused(unpackLoad(badJson), /manifest is not valid UTF-8 JSON/);
    });
  });

  it("refuses to save with a tokenizer of another size", async () => {
    await expect(saveCheckpoint(source, otherTok)).rejects.toThrow(/tokenizer has \d+ tokens/);
  });
});
