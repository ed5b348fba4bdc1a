/**
 * Model checkpoints: a JSON manifest (config, tokenizer, tensor table, checksum, meta) plus one
 * binary blob holding every weight as little-endian float32, concatenated in `GPT.weights()` order.
 * Also a single-file packing of the two for download and upload. Pure: runs in Node and the browser
 * (no fs, no DOM); see checkpointFs.ts (Node) and checkpointStore.ts (IndexedDB) for storage.
 *
 * Checksum: FNV-1a 32-bit (offset basis 0x811c9dc5, prime 0x01000193) over the blob's bytes,
 * written "fnv1a32:" + 8 lower-case hex digits. It catches corruption and truncation, not tampering.
 *
 * Packed file: "LOOPCKPT" (8 ASCII bytes), the manifest's UTF-8 byte length (uint32, little-endian),
 * the manifest as UTF-8 JSON, then the blob to the end of the file.
 */
import * as tf from "@tensorflow/tfjs";
import { CONFIG_KEYS, type ModelConfig, validateConfig } from "./config";
import { GPT } from "./gpt";
import { Tokenizer, type TokenizerSpec } from "./tokenizer";

export const CHECKPOINT_FORMAT = "loop-playground-checkpoint";
export const CHECKPOINT_VERSION = 1;

/** Any value JSON can hold. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [k: string]: JsonValue };

/** Free-form notes about a checkpoint; the named keys are checked, any other must be JSON. */
export interface CheckpointMeta {
  /** ISO-8601 time the checkpoint was made. */
  createdAt?: string;
  /** Training step (a non-negative integer). */
  step?: number;
  notes?: string;
  /**
   * How the policy is meant to act: "grammar" = every action decoded under the action grammar
   * (src/agent/grammar.ts), "free" = free text. The CLIs use it when not told (the page's default
   * setting matches the shipped base's).
   */
  decoding?: Decoding;
  [k: string]: JsonValue | undefined;
}

export const DECODINGS = ["free", "grammar"] as const;
export type Decoding = (typeof DECODINGS)[number];

export function isDecoding(x: unknown): x is Decoding {
  return (DECODINGS as readonly unknown[]).includes(x);
}

/** The decoding a checkpoint's meta asks for (free when it says nothing). */
export function checkpointDecoding(parsed: ParsedCheckpoint): Decoding {
  return parsed.manifest.meta?.decoding ?? "free";
}

/** Where one weight lies in the blob. */
export interface CheckpointTensor {
  name: string;
  shape: number[];
  dtype: "float32";
  /** Byte offset in the blob. */
  offset: number;
  /** 4 x the product of shape. */
  byteLength: number;
}

export interface CheckpointManifest {
  format: typeof CHECKPOINT_FORMAT;
  version: typeof CHECKPOINT_VERSION;
  config: ModelConfig;
  tokenizer: TokenizerSpec;
  tensors: CheckpointTensor[];
  /** "fnv1a32:" + 8 hex digits, of the blob. */
  checksum: string;
  meta?: CheckpointMeta;
}

/** A checked checkpoint, its weights decoded. */
export interface ParsedCheckpoint {
  manifest: CheckpointManifest;
  config: ModelConfig;
  tokenizer: Tokenizer;
  /** Each weight's values, by name, in manifest order. */
  tensors: Map<string, { shape: number[]; values: Float32Array }>;
}

/** A checkpoint that cannot be read or does not fit; the message names what is wrong. */
export class CheckpointError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CheckpointError";
  }
}

const MANIFEST_KEYS = ["format", "version", "config", "tokenizer", "tensors", "checksum", "meta"];
const TENSOR_KEYS = ["name", "shape", "dtype", "offset", "byteLength"];
const CHECKSUM_RE = /^fnv1a32:[0-9a-f]{8}$/;
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

// ---------------------------------------------------------------------------------------------
// Small helpers

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

function kindOf(x: unknown): string {
  if (x === null) return "null";
  if (Array.isArray(x)) return "an array";
  if (typeof x === "string") return `a string (${JSON.stringify(x.slice(0, 40))})`;
  return typeof x === "object" ? "an object" : `${typeof x} ${String(x)}`;
}

function isNonNegInt(x: unknown): x is number {
  return typeof x === "number" && Number.isSafeInteger(x) && x >= 0;
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function shapeText(shape: readonly number[]): string {
  return `[${shape.join(",")}]`;
}

function sameShape(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function rejectUnknownKeys(obj: Record<string, unknown>, allowed: string[], where: string): void {
  const extra = Object.keys(obj).filter((k) => !allowed.includes(k));
  if (extra.length > 0) throw new CheckpointError(`${where}: unknown field ${extra.join(", ")}`);
}

/** FNV-1a 32-bit over the bytes, as 8 lower-case hex digits. */
export function fnv1a32(bytes: Uint8Array): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) h = Math.imul(h ^ (bytes[i] as number), 0x01000193);
  return (h >>> 0).toString(16).padStart(8, "0");
}

/** The checksum a manifest records for this blob. */
export function blobChecksum(blob: Uint8Array): string {
  return `fnv1a32:${fnv1a32(blob)}`;
}

// ---------------------------------------------------------------------------------------------
// Float32 <-> bytes (little-endian; a byte copy on little-endian hosts keeps every bit, NaNs too)
// (also used by the trainer state, src/rl/trainerState.ts)

export function writeFloats(values: Float32Array, out: Uint8Array, offset: number): void {
  if (LITTLE_ENDIAN) {
    out.set(new Uint8Array(values.buffer, values.byteOffset, values.byteLength), offset);
    return;
  }
  const view = new DataView(out.buffer, out.byteOffset + offset, values.byteLength);
  for (let i = 0; i < values.length; i++) view.setFloat32(i * 4, values[i] as number, true);
}

export function readFloats(blob: Uint8Array, offset: number, byteLength: number): Float32Array {
  if (LITTLE_ENDIAN) return new Float32Array(blob.slice(offset, offset + byteLength).buffer);
  const out = new Float32Array(byteLength / 4);
  const view = new DataView(blob.buffer, blob.byteOffset + offset, byteLength);
  for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(i * 4, true);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Meta

function checkJson(x: unknown, path: string, depth: number): void {
  if (depth > 32) throw new CheckpointError(`meta: ${path} is nested too deeply`);
  if (x === null || typeof x === "string" || typeof x === "boolean") return;
  if (typeof x === "number") {
    if (!Number.isFinite(x)) throw new CheckpointError(`meta: ${path} is not a finite number`);
    return;
  }
  if (Array.isArray(x)) {
    for (const [i, v] of x.entries()) checkJson(v, `${path}[${i}]`, depth + 1);
    return;
  }
  if (isRecord(x) && Object.getPrototypeOf(x) === Object.prototype) {
    for (const [k, v] of Object.entries(x)) checkJson(v, `${path}.${k}`, depth + 1);
    return;
  }
  throw new CheckpointError(`meta: ${path} is not a JSON value (${kindOf(x)})`);
}

/** Checks meta and returns a JSON copy of it; throws naming the bad field. */
export function validateMeta(meta: unknown): CheckpointMeta {
  if (!isRecord(meta)) throw new CheckpointError(`meta must be an object, got ${kindOf(meta)}`);
  const m = meta as CheckpointMeta;
  if (m.createdAt !== undefined && typeof m.createdAt !== "string")
    throw new CheckpointError(`meta.createdAt must be a string, got ${kindOf(m.createdAt)}`);
  if (m.step !== undefined && !isNonNegInt(m.step))
    throw new CheckpointError(`meta.step must be a non-negative integer, got ${kindOf(m.step)}`);
  if (m.notes !== undefined && typeof m.notes !== "string")
    throw new CheckpointError(`meta.notes must be a string, got ${kindOf(m.notes)}`);
  if (m.decoding !== undefined && !isDecoding(m.decoding))
    throw new CheckpointError(
      `meta.decoding must be one of ${DECODINGS.join(", ")}, got ${JSON.stringify(m.decoding)}`,
    );
  const defined = Object.fromEntries(Object.entries(m).filter(([, v]) => v !== undefined));
  checkJson(defined, "meta", 0);
  return JSON.parse(JSON.stringify(defined)) as CheckpointMeta;
}

// ---------------------------------------------------------------------------------------------
// Save

/**
 * Snapshots a model's weights and its tokenizer. Reads each variable once with `await data()`
 * (no tensors are created); the blob holds the weights as little-endian float32 in weights() order.
 */
export async function saveCheckpoint(
  model: GPT,
  tokenizer: Tokenizer,
  meta?: CheckpointMeta,
): Promise<{ manifest: CheckpointManifest; blob: Uint8Array }> {
  const config = validateConfig(model.config);
  if (tokenizer.size !== config.vocabSize)
    throw new CheckpointError(
      `tokenizer has ${tokenizer.size} tokens but the model's vocabSize is ${config.vocabSize}`,
    );
  const checkedMeta = meta === undefined ? undefined : validateMeta(meta);
  const weights = model.weights();
  for (const { name, variable } of weights)
    if (variable.dtype !== "float32")
      throw new CheckpointError(`${name}: dtype ${variable.dtype}, checkpoints hold float32 only`);
  const data = await Promise.all(weights.map((w) => w.variable.data<"float32">()));
  const tensors: CheckpointTensor[] = [];
  let offset = 0;
  for (const [i, { name, variable }] of weights.entries()) {
    const byteLength = (data[i] as Float32Array).length * 4;
    tensors.push({ name, shape: [...variable.shape], dtype: "float32", offset, byteLength });
    offset += byteLength;
  }
  const blob = new Uint8Array(offset);
  for (const [i, t] of tensors.entries()) writeFloats(data[i] as Float32Array, blob, t.offset);
  const manifest: CheckpointManifest = {
    format: CHECKPOINT_FORMAT,
    version: CHECKPOINT_VERSION,
    config,
    tokenizer: tokenizer.toJSON(),
    tensors,
    checksum: blobChecksum(blob),
  };
  if (checkedMeta) manifest.meta = checkedMeta;
  return { manifest, blob };
}

// ---------------------------------------------------------------------------------------------
// Parse

function checkHeader(m: unknown): Record<string, unknown> {
  if (!isRecord(m))
    throw new CheckpointError(
      `not a checkpoint manifest: expected a JSON object, got ${kindOf(m)}`,
    );
  if (m.format !== CHECKPOINT_FORMAT)
    throw new CheckpointError(
      `not a ${CHECKPOINT_FORMAT} manifest: format is ${JSON.stringify(m.format) ?? "missing"}`,
    );
  if (m.version !== CHECKPOINT_VERSION)
    throw new CheckpointError(
      `unsupported checkpoint version ${JSON.stringify(m.version) ?? "(missing)"}; this build reads version ${CHECKPOINT_VERSION}`,
    );
  rejectUnknownKeys(m, MANIFEST_KEYS, "manifest");
  return m;
}

function checkConfig(c: unknown): ModelConfig {
  try {
    return validateConfig(c);
  } catch (e) {
    throw new CheckpointError(`bad config: ${messageOf(e)}`);
  }
}

function checkTokenizer(spec: unknown, config: ModelConfig): Tokenizer {
  let tokenizer: Tokenizer;
  try {
    tokenizer = Tokenizer.fromJSON(spec);
  } catch (e) {
    throw new CheckpointError(`bad tokenizer: ${messageOf(e)}`);
  }
  if (tokenizer.size !== config.vocabSize)
    throw new CheckpointError(
      `tokenizer has ${tokenizer.size} tokens but config.vocabSize is ${config.vocabSize}`,
    );
  return tokenizer;
}

function checkTensorEntry(t: unknown, i: number): CheckpointTensor {
  const where = `tensor entry ${i}`;
  if (!isRecord(t)) throw new CheckpointError(`${where} is not an object (${kindOf(t)})`);
  if (typeof t.name !== "string" || t.name.length === 0)
    throw new CheckpointError(`${where}: name must be a non-empty string`);
  const at = `tensor ${t.name}`;
  rejectUnknownKeys(t, TENSOR_KEYS, at);
  if (!Array.isArray(t.shape) || !t.shape.every(isNonNegInt))
    throw new CheckpointError(`${at}: shape must be an array of non-negative integers`);
  if (t.dtype !== "float32")
    throw new CheckpointError(`${at}: dtype ${JSON.stringify(t.dtype)}, expected "float32"`);
  if (!isNonNegInt(t.offset))
    throw new CheckpointError(`${at}: offset must be a non-negative integer`);
  if (!isNonNegInt(t.byteLength))
    throw new CheckpointError(`${at}: byteLength must be a non-negative integer`);
  const shape = t.shape as number[];
  const expected = shape.reduce((a, b) => a * b, 1) * 4;
  if (t.byteLength !== expected)
    throw new CheckpointError(
      `${at}: byteLength ${t.byteLength} does not match shape ${shapeText(shape)} (${expected} bytes)`,
    );
  return {
    name: t.name,
    shape: [...shape],
    dtype: "float32",
    offset: t.offset,
    byteLength: expected,
  };
}

function checkTensorTable(x: unknown): CheckpointTensor[] {
  if (!Array.isArray(x)) throw new CheckpointError(`tensors must be an array, got ${kindOf(x)}`);
  const tensors = x.map(checkTensorEntry);
  const seen = new Set<string>();
  for (const t of tensors) {
    if (seen.has(t.name)) throw new CheckpointError(`tensor ${t.name} is listed twice`);
    seen.add(t.name);
  }
  const byOffset = [...tensors].sort((a, b) => a.offset - b.offset);
  for (let i = 1; i < byOffset.length; i++) {
    const prev = byOffset[i - 1] as CheckpointTensor;
    const cur = byOffset[i] as CheckpointTensor;
    if (cur.offset < prev.offset + prev.byteLength)
      throw new CheckpointError(`tensors ${prev.name} and ${cur.name} overlap in the blob`);
  }
  return tensors;
}

/**
 * Checks a manifest's own content (everything but the blob) and returns a normalised copy.
 * Throws a CheckpointError naming the first problem.
 */
export function validateManifest(manifestJson: unknown): CheckpointManifest {
  const m = checkHeader(manifestJson);
  const config = checkConfig(m.config);
  const tokenizer = checkTokenizer(m.tokenizer, config);
  const tensors = checkTensorTable(m.tensors);
  if (typeof m.checksum !== "string" || !CHECKSUM_RE.test(m.checksum))
    throw new CheckpointError(
      `checksum must be "fnv1a32:" and 8 hex digits, got ${JSON.stringify(m.checksum) ?? "nothing"}`,
    );
  const manifest: CheckpointManifest = {
    format: CHECKPOINT_FORMAT,
    version: CHECKPOINT_VERSION,
    config,
    tokenizer: tokenizer.toJSON(),
    tensors,
    checksum: m.checksum,
  };
  if (m.meta !== undefined) manifest.meta = validateMeta(m.meta);
  return manifest;
}

function checkBlob(manifest: CheckpointManifest, blob: Uint8Array): void {
  if (!(blob instanceof Uint8Array))
    throw new CheckpointError(`the weights blob must be a Uint8Array, got ${kindOf(blob)}`);
  const needed = manifest.tensors.reduce((s, t) => s + t.byteLength, 0);
  if (blob.length !== needed)
    throw new CheckpointError(
      `blob length mismatch: the tensors take ${needed} bytes, the blob has ${blob.length}`,
    );
  for (const t of manifest.tensors)
    if (t.offset + t.byteLength > blob.length)
      throw new CheckpointError(
        `tensor ${t.name}: bytes ${t.offset}..${t.offset + t.byteLength} lie outside the blob (${blob.length} bytes)`,
      );
  const actual = blobChecksum(blob);
  if (actual !== manifest.checksum)
    throw new CheckpointError(
      `checksum mismatch: manifest says ${manifest.checksum}, blob has ${actual}`,
    );
}

/**
 * Checks a manifest (parsed JSON, untrusted) against its blob and decodes the weights. Throws a
 * CheckpointError naming what is wrong: format or version, config, tokenizer, vocabSize, a tensor
 * entry, ranges and overlaps, blob length, checksum.
 */
export function parseCheckpoint(manifestJson: unknown, blob: Uint8Array): ParsedCheckpoint {
  const manifest = validateManifest(manifestJson);
  checkBlob(manifest, blob);
  const tensors = new Map<string, { shape: number[]; values: Float32Array }>();
  for (const t of manifest.tensors)
    tensors.set(t.name, { shape: t.shape, values: readFloats(blob, t.offset, t.byteLength) });
  return {
    manifest,
    config: manifest.config,
    tokenizer: new Tokenizer(manifest.tokenizer),
    tensors,
  };
}

// ---------------------------------------------------------------------------------------------
// Load

function checkSameConfig(model: ModelConfig, ckpt: ModelConfig): void {
  for (const k of CONFIG_KEYS)
    if (model[k] !== ckpt[k])
      throw new CheckpointError(
        `config differs: ${k} is ${ckpt[k]} in the checkpoint, ${model[k]} in the model`,
      );
  const emits = (c: ModelConfig) => JSON.stringify(c.copyEmit ?? []);
  if (emits(model) !== emits(ckpt))
    throw new CheckpointError(
      `config differs: copyEmit is ${emits(ckpt)} in the checkpoint, ${emits(model)} in the model`,
    );
}

function checkSameVocabulary(given: Tokenizer, ckpt: Tokenizer): void {
  const n = Math.max(given.size, ckpt.size);
  for (let id = 0; id < n; id++) {
    const a = given.tokenText(id);
    const b = ckpt.tokenText(id);
    if (a !== b)
      throw new CheckpointError(
        `the tokenizer is another vocabulary than the checkpoint's (${given.size} vs ${ckpt.size} tokens; token ${id} is ${JSON.stringify(a)} vs ${JSON.stringify(b)})`,
      );
  }
}

function checkSameTensors(model: GPT, parsed: ParsedCheckpoint): void {
  const problems: string[] = [];
  const names = new Set<string>();
  for (const { name, variable } of model.weights()) {
    names.add(name);
    const t = parsed.tensors.get(name);
    if (!t) problems.push(`missing tensor ${name}`);
    else if (!sameShape(t.shape, variable.shape))
      problems.push(
        `${name}: checkpoint shape ${shapeText(t.shape)}, model ${shapeText(variable.shape)}`,
      );
  }
  for (const name of parsed.tensors.keys())
    if (!names.has(name)) problems.push(`unknown tensor ${name} (the model has no such weight)`);
  if (problems.length > 0) {
    const shown = problems.slice(0, 8).join("; ");
    const more = problems.length > 8 ? `; and ${problems.length - 8} more` : "";
    throw new CheckpointError(`checkpoint does not fit the model: ${shown}${more}`);
  }
}

/**
 * Copies a checkpoint's weights into a model. Everything is checked first (config, vocabulary when
 * `tokenizer` is given, every tensor's presence and shape); on a refusal (CheckpointError) no
 * weight has changed. The new values are all uploaded before any variable is assigned.
 */
export function loadIntoModel(model: GPT, parsed: ParsedCheckpoint, tokenizer?: Tokenizer): void {
  checkSameConfig(model.config, parsed.config);
  if (tokenizer) checkSameVocabulary(tokenizer, parsed.tokenizer);
  checkSameTensors(model, parsed);
  const weights = model.weights();
  const fresh: tf.Tensor[] = [];
  try {
    for (const { name } of weights) {
      const t = parsed.tensors.get(name) as { shape: number[]; values: Float32Array };
      // A copy: the cpu backend would otherwise keep the parsed array as the variable's storage.
      fresh.push(tf.tensor(t.values.slice(), t.shape, "float32"));
    }
    for (const [i, { variable }] of weights.entries()) variable.assign(fresh[i] as tf.Tensor);
  } finally {
    for (const t of fresh) t.dispose();
  }
}

/** Builds a model and its tokenizer from a checkpoint; `seed` only seeds the overwritten init. */
export function modelFromCheckpoint(
  parsed: ParsedCheckpoint,
  seed = 0,
): { model: GPT; tokenizer: Tokenizer } {
  const model = new GPT(parsed.config, seed);
  try {
    loadIntoModel(model, parsed, parsed.tokenizer);
  } catch (e) {
    model.dispose();
    throw e;
  }
  return { model, tokenizer: parsed.tokenizer };
}

// ---------------------------------------------------------------------------------------------
// Single-file packing

const MAGIC = "LOOPCKPT";
const HEADER_BYTES = MAGIC.length + 4;

/** One file: "LOOPCKPT", uint32 LE manifest length, manifest UTF-8 JSON, blob. */
export function packCheckpoint(manifest: CheckpointManifest, blob: Uint8Array): Uint8Array {
  const json = new TextEncoder().encode(JSON.stringify(manifest));
  const out = new Uint8Array(HEADER_BYTES + json.length + blob.length);
  out.set(new TextEncoder().encode(MAGIC), 0);
  new DataView(out.buffer).setUint32(MAGIC.length, json.length, true);
  out.set(json, HEADER_BYTES);
  out.set(blob, HEADER_BYTES + json.length);
  return out;
}

/**
 * Splits a packed file into its manifest (parsed JSON, not yet checked: pass it to
 * parseCheckpoint) and blob (a copy). Throws a CheckpointError for a file that is not one.
 */
export function unpackCheckpoint(bytes: Uint8Array): { manifest: unknown; blob: Uint8Array } {
  if (bytes.length < HEADER_BYTES)
    throw new CheckpointError(
      `not a checkpoint file: ${bytes.length} bytes, shorter than the ${HEADER_BYTES}-byte header`,
    );
  const magic = String.fromCharCode(...bytes.subarray(0, MAGIC.length));
  if (magic !== MAGIC)
    throw new CheckpointError(
      `not a checkpoint file: it starts with ${JSON.stringify(magic)}, not "${MAGIC}"`,
    );
  const length = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(
    MAGIC.length,
    true,
  );
  if (HEADER_BYTES + length > bytes.length)
    throw new CheckpointError(
      `truncated checkpoint file: the manifest needs ${length} bytes, ${bytes.length - HEADER_BYTES} follow the header`,
    );
  let manifest: unknown;
  try {
    const text = new TextDecoder("utf-8", { fatal: true }).decode(
      bytes.subarray(HEADER_BYTES, HEADER_BYTES + length),
    );
    manifest = JSON.parse(text);
  } catch (e) {
    throw new CheckpointError(
      `checkpoint file: the manifest is not valid UTF-8 JSON (${messageOf(e)})`,
    );
  }
  return { manifest, blob: bytes.slice(HEADER_BYTES + length) };
}
