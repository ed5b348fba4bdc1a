/**
 * What a trainer holds beyond the policy's weights, so that a run can continue exactly where it
 * stopped: the iteration, the walk through the task pool, AdamW's step count and moments, and a
 * critic's weights (PPO). Stored as a JSON manifest plus one float32 blob, like a checkpoint
 * (`npm run train` writes them next to each iter-N checkpoint; `--resume DIR` reads them back).
 */
import { blobChecksum, readFloats, writeFloats } from "../model/checkpoint";

export const TRAINER_STATE_FORMAT = "loop-playground-trainer-state";
export const TRAINER_STATE_VERSION = 1;

export interface StateTensor {
  name: string;
  shape: number[];
  data: Float32Array;
}

export interface TrainerState {
  algo: string;
  seed: number;
  /** Iterations finished. */
  iteration: number;
  /** Tasks of the current pass through the pool not yet played (the next iterations take these). */
  taskOrder: string[];
  /** AdamW steps taken (Adam's bias correction depends on it). */
  optimizerStep: number;
  /**
   * `m/i` and `v/i`: Adam's first and second moments of the trainer's i-th trainable variable
   * (none before the first step); `critic/w`, `critic/b`: PPO's value head.
   */
  tensors: StateTensor[];
}

export interface TrainerStateManifest {
  format: typeof TRAINER_STATE_FORMAT;
  version: number;
  algo: string;
  seed: number;
  iteration: number;
  taskOrder: string[];
  optimizerStep: number;
  tensors: { name: string; shape: number[]; offset: number; length: number }[];
  checksum: string;
}

export class TrainerStateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TrainerStateError";
  }
}

const count = (shape: number[]) => shape.reduce((a, b) => a * b, 1);

/** The manifest and blob of a trainer state (offsets and lengths in bytes). */
export function encodeTrainerState(state: TrainerState): {
  manifest: TrainerStateManifest;
  blob: Uint8Array;
} {
  const bytes = state.tensors.reduce((s, t) => s + 4 * t.data.length, 0);
  const blob = new Uint8Array(bytes);
  let offset = 0;
  const tensors = state.tensors.map((t) => {
    if (t.data.length !== count(t.shape))
      throw new TrainerStateError(`${t.name}: ${t.data.length} values for shape [${t.shape}]`);
    writeFloats(t.data, blob, offset);
    const entry = { name: t.name, shape: [...t.shape], offset, length: 4 * t.data.length };
    offset += entry.length;
    return entry;
  });
  return {
    manifest: {
      format: TRAINER_STATE_FORMAT,
      version: TRAINER_STATE_VERSION,
      algo: state.algo,
      seed: state.seed,
      iteration: state.iteration,
      taskOrder: [...state.taskOrder],
      optimizerStep: state.optimizerStep,
      tensors,
      checksum: blobChecksum(blob),
    },
    blob,
  };
}

const isRecord = (x: unknown): x is Record<string, unknown> =>
  typeof x === "object" && x !== null && !Array.isArray(x);
const isCount = (x: unknown): x is number => Number.isInteger(x) && (x as number) >= 0;

/** Checks a manifest and its blob and returns the state; throws a TrainerStateError naming what is wrong. */
export function decodeTrainerState(manifest: unknown, blob: Uint8Array): TrainerState {
  const fail = (msg: string): never => {
    throw new TrainerStateError(`trainer state: ${msg}`);
  };
  if (!isRecord(manifest)) return fail("the manifest is not a JSON object");
  if (manifest.format !== TRAINER_STATE_FORMAT)
    fail(`format must be "${TRAINER_STATE_FORMAT}", got ${JSON.stringify(manifest.format)}`);
  if (manifest.version !== TRAINER_STATE_VERSION)
    fail(`version ${JSON.stringify(manifest.version)} is not ${TRAINER_STATE_VERSION}`);
  const { algo, seed, iteration, taskOrder, optimizerStep, tensors, checksum } = manifest;
  if (typeof algo !== "string") fail("algo must be a string");
  if (!isCount(seed)) fail("seed must be a non-negative integer");
  if (!isCount(iteration)) fail("iteration must be a non-negative integer");
  if (!isCount(optimizerStep)) fail("optimizerStep must be a non-negative integer");
  if (!Array.isArray(taskOrder) || !taskOrder.every((t) => typeof t === "string"))
    fail("taskOrder must be a list of task ids");
  if (!Array.isArray(tensors)) return fail("tensors must be a list");
  const actual = blobChecksum(blob);
  if (checksum !== actual)
    fail(`checksum mismatch: manifest says ${JSON.stringify(checksum)}, blob has ${actual}`);
  const names = new Set<string>();
  let end = 0;
  const out: StateTensor[] = tensors.map((t, i) => {
    if (!isRecord(t)) return fail(`tensors[${i}] is not an object`);
    const { name, shape, offset, length } = t;
    if (typeof name !== "string" || names.has(name))
      fail(`tensors[${i}]: missing or repeated name`);
    names.add(name as string);
    if (!Array.isArray(shape) || !shape.every(isCount)) fail(`${name}: bad shape`);
    if (!isCount(offset) || !isCount(length) || offset !== end)
      fail(`${name}: offset and length must tile the blob in order`);
    if ((length as number) !== 4 * count(shape as number[]))
      fail(`${name}: ${length} bytes for shape [${shape}]`);
    end = (offset as number) + (length as number);
    if (end > blob.length) fail(`${name} runs past the end of the blob (${blob.length} bytes)`);
    return {
      name: name as string,
      shape: [...(shape as number[])],
      data: readFloats(blob, offset as number, length as number),
    };
  });
  if (end !== blob.length) fail(`the blob has ${blob.length - end} bytes no tensor uses`);
  return {
    algo: algo as string,
    seed: seed as number,
    iteration: iteration as number,
    taskOrder: [...(taskOrder as string[])],
    optimizerStep: optimizerStep as number,
    tensors: out,
  };
}
