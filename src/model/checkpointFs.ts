/**
 * Checkpoints on disk (Node only: node:fs/promises; never import this from browser code).
 * A checkpoint directory holds manifest.json (pretty-printed) and weights.bin (the blob).
 */
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  CheckpointError,
  type CheckpointManifest,
  type ParsedCheckpoint,
  parseCheckpoint,
} from "./checkpoint";

export const MANIFEST_FILE = "manifest.json";
export const WEIGHTS_FILE = "weights.bin";

function isMissing(e: unknown): boolean {
  return (e as NodeJS.ErrnoException | null)?.code === "ENOENT";
}

/** Writes a file through a temporary name, so a reader never sees half of it. */
export async function writeAtomic(path: string, data: string | Uint8Array): Promise<void> {
  const tmp = `${path}.tmp-${process.pid}`;
  await writeFile(tmp, data);
  await rename(tmp, path);
}

/**
 * Writes dir/manifest.json and dir/weights.bin, creating dir if needed. The pair is checked with
 * parseCheckpoint first, so what is written reads back. Weights go first, the manifest last.
 */
export async function saveCheckpointToDir(
  dir: string,
  manifest: CheckpointManifest,
  blob: Uint8Array,
): Promise<void> {
  parseCheckpoint(manifest, blob);
  await mkdir(dir, { recursive: true });
  await writeAtomic(join(dir, WEIGHTS_FILE), blob);
  await writeAtomic(join(dir, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
}

async function readOrExplain(path: string, what: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (e) {
    if (isMissing(e))
      throw new CheckpointError(`no ${what} at ${path}: not a checkpoint directory`);
    throw new CheckpointError(`cannot read ${path}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** Reads and checks the checkpoint in dir; throws a CheckpointError naming what is wrong. */
export async function readCheckpointDir(dir: string): Promise<ParsedCheckpoint> {
  const manifestPath = join(dir, MANIFEST_FILE);
  const text = (await readOrExplain(manifestPath, MANIFEST_FILE)).toString("utf8");
  const weights = await readOrExplain(join(dir, WEIGHTS_FILE), WEIGHTS_FILE);
  let manifest: unknown;
  try {
    manifest = JSON.parse(text);
  } catch (e) {
    throw new CheckpointError(
      `${manifestPath} is not valid JSON: ${e instanceof Error ? e.message : String(e)}`,
    );
  }
  return parseCheckpoint(
    manifest,
    new Uint8Array(weights.buffer, weights.byteOffset, weights.byteLength),
  );
}
