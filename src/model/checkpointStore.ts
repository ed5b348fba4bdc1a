/**
 * Checkpoints in the browser's IndexedDB (database "loop-playground", object store "checkpoints"),
 * through idb-keyval. IndexedDB only: no DOM. Each checkpoint is two records written and deleted
 * together in one transaction: ["manifest", key] and ["blob", key], so listing reads no weights.
 */
import { createStore, delMany, getMany, keys, setMany, type UseStore } from "idb-keyval";
import {
  CheckpointError,
  type CheckpointManifest,
  type ParsedCheckpoint,
  parseCheckpoint,
  validateManifest,
} from "./checkpoint";

export const CHECKPOINT_DB = "loop-playground";
export const CHECKPOINT_STORE = "checkpoints";

type RecordKey = ["manifest" | "blob", string];

/** One stored checkpoint as listed: its checked manifest, or why it cannot be read. */
export type StoredCheckpointInfo =
  | { key: string; ok: true; manifest: CheckpointManifest }
  | { key: string; ok: false; error: string };

let store: UseStore | undefined;

/** Opened on first use, so importing this module needs no IndexedDB (Node, tests). */
function db(): UseStore {
  store ??= createStore(CHECKPOINT_DB, CHECKPOINT_STORE);
  return store;
}

function recordKeys(key: string): [RecordKey, RecordKey] {
  return [
    ["manifest", key],
    ["blob", key],
  ];
}

/** The blob alone (a view would store its whole underlying buffer). */
function ownBytes(blob: Uint8Array): Uint8Array {
  const whole = blob.byteOffset === 0 && blob.byteLength === blob.buffer.byteLength;
  return whole ? blob : blob.slice();
}

/** Stores a checkpoint under `key` (replacing any there); it is checked first. */
export async function putCheckpoint(
  key: string,
  manifest: CheckpointManifest,
  blob: Uint8Array,
): Promise<void> {
  const checked = parseCheckpoint(manifest, blob).manifest;
  const [mk, bk] = recordKeys(key);
  await setMany(
    [
      [mk, checked],
      [bk, ownBytes(blob)],
    ],
    db(),
  );
}

/** The stored manifest and blob as they are (e.g. to pack for download), or null if none. */
export async function getCheckpointRaw(
  key: string,
): Promise<{ manifest: unknown; blob: Uint8Array } | null> {
  const [manifest, blob] = await getMany<unknown>(recordKeys(key), db());
  if (manifest === undefined && blob === undefined) return null;
  if (manifest === undefined || !(blob instanceof Uint8Array))
    throw new CheckpointError(`stored checkpoint "${key}" is incomplete`);
  return { manifest, blob };
}

/** The stored checkpoint, checked and decoded, or null if there is none under `key`. */
export async function getCheckpoint(key: string): Promise<ParsedCheckpoint | null> {
  const raw = await getCheckpointRaw(key);
  if (!raw) return null;
  try {
    return parseCheckpoint(raw.manifest, raw.blob);
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    throw new CheckpointError(`stored checkpoint "${key}": ${msg}`);
  }
}

function isManifestKey(k: IDBValidKey): k is RecordKey {
  return Array.isArray(k) && k.length === 2 && k[0] === "manifest" && typeof k[1] === "string";
}

/** Every stored checkpoint's manifest (no weights are read), sorted by key. */
export async function listCheckpoints(): Promise<StoredCheckpointInfo[]> {
  const manifestKeys = (await keys(db())).filter(isManifestKey);
  const manifests = await getMany<unknown>(manifestKeys, db());
  const out = manifestKeys.map(([, key], i): StoredCheckpointInfo => {
    try {
      return { key, ok: true, manifest: validateManifest(manifests[i]) };
    } catch (e) {
      return { key, ok: false, error: e instanceof Error ? e.message : String(e) };
    }
  });
  return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** Removes a stored checkpoint (both records); no error if there is none. */
export async function deleteCheckpoint(key: string): Promise<void> {
  await delMany(recordKeys(key), db());
}
