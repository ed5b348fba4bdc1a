/**
 * Where each recent run of the page can be continued from after a reload: the policy's weights
 * (a packed checkpoint) and the trainer's state (trainerState.ts) after its last finished
 * iteration, in IndexedDB (database "loop-playground-resume", through idb-keyval; no DOM). One
 * point per run, replaced after every iteration; only the latest few runs keep theirs (each is a
 * few MB: the weights and AdamW's two moments).
 */
import { createStore, del, entries, get, set, type UseStore } from "idb-keyval";
import type { TrainerStateManifest } from "../rl/trainerState";

/** Runs whose resume points are kept (the oldest is dropped beyond this). */
export const KEPT_RESUME_POINTS = 3;

export interface ResumePoint {
  runId: string;
  iteration: number;
  savedAt: string;
  /** packCheckpoint's bytes. */
  checkpoint: Uint8Array;
  state: { manifest: TrainerStateManifest; blob: Uint8Array };
}

let store: UseStore | undefined;
const db = () => {
  store ??= createStore("loop-playground-resume", "points");
  return store;
};

export async function putResumePoint(point: ResumePoint): Promise<void> {
  await set(point.runId, point, db());
  const all = (await entries<string, ResumePoint>(db())).sort((a, b) =>
    b[1].savedAt.localeCompare(a[1].savedAt),
  );
  for (const [key] of all.slice(KEPT_RESUME_POINTS)) await del(key, db());
}

export async function getResumePoint(runId: string): Promise<ResumePoint | null> {
  return (await get<ResumePoint>(runId, db())) ?? null;
}

/** The runs that can be continued, and from which iteration. */
export async function listResumePoints(): Promise<{ runId: string; iteration: number }[]> {
  return (await entries<string, ResumePoint>(db())).map(([runId, p]) => ({
    runId,
    iteration: typeof p?.iteration === "number" ? p.iteration : 0,
  }));
}
