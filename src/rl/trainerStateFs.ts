/**
 * Trainer states on disk (Node only: never import this from browser code): trainer-state.json and
 * trainer-state.bin beside a checkpoint's manifest.json and weights.bin.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { writeAtomic } from "../model/checkpointFs";
import {
  decodeTrainerState,
  encodeTrainerState,
  type TrainerState,
  TrainerStateError,
} from "./trainerState";

export const STATE_FILE = "trainer-state.json";
export const STATE_BLOB_FILE = "trainer-state.bin";

export async function saveTrainerStateToDir(dir: string, state: TrainerState): Promise<void> {
  const { manifest, blob } = encodeTrainerState(state);
  await writeAtomic(join(dir, STATE_BLOB_FILE), blob);
  await writeAtomic(join(dir, STATE_FILE), `${JSON.stringify(manifest)}\n`);
}

/** The trainer state in dir; a TrainerStateError names what is missing or wrong. */
export async function readTrainerStateDir(dir: string): Promise<TrainerState> {
  const read = async (file: string) => {
    try {
      return await readFile(join(dir, file));
    } catch (e) {
      throw new TrainerStateError(
        `cannot read ${join(dir, file)}: ${e instanceof Error ? e.message : String(e)}`,
      );
    }
  };
  const text = (await read(STATE_FILE)).toString("utf8");
  const blob = await read(STATE_BLOB_FILE);
  let manifest: unknown;
  try {
    manifest = JSON.parse(text);
  } catch (e) {
    throw new TrainerStateError(
      `${join(dir, STATE_FILE)} is not valid JSON: ${e instanceof Error ? e.message : String(e)}`,
    );
  }
  return decodeTrainerState(manifest, new Uint8Array(blob.buffer, blob.byteOffset, blob.length));
}
