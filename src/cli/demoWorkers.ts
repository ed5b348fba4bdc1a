import { availableParallelism } from "node:os";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import { collectDemonstrations, type EpisodeText, type PolicyContext } from "../agent/demos";
import type { Flaws } from "../agent/scriptActor";
import { tasksOf, trainWorldTasks } from "../env";
import { Tokenizer, type TokenizerSpec } from "../model/tokenizer";

/** One worker's job: the demonstrator on the train split's tasks (+ `worlds` fresh worlds), one seed. */
interface DemoJob {
  kind: "loop-playground/demos";
  /** The module to load in the worker (this one, or the bundle it is in). */
  module: string;
  worlds: number;
  seed: number;
  flaws: Partial<Flaws>;
  /** The policy's context (its vocabulary and length), for a demonstrator that forgets. */
  policy?: { tokenizer: TokenizerSpec; context: number };
}

function isDemoJob(x: unknown): x is DemoJob {
  return (x as DemoJob | undefined)?.kind === "loop-playground/demos";
}

/** The tasks pretraining imitates: the train split plus its scenarios on `worlds` fresh worlds. */
export function pretrainTasks(worlds: number) {
  return [...tasksOf("train"), ...trainWorldTasks(worlds)];
}

// Worker side. This module is the worker's entry under tsx; in a bundle (scripts/gpu/pack.sh) the
// whole bundle is, and this block is what runs in the worker (the CLI's main runs on the main
// thread only).
if (!isMainThread && isDemoJob(workerData)) {
  const job = workerData;
  const policy = job.policy && {
    tokenizer: Tokenizer.fromJSON(job.policy.tokenizer),
    context: job.policy.context,
  };
  parentPort?.postMessage(
    collectDemonstrations(pretrainTasks(job.worlds), [job.seed], job.flaws, policy),
  );
}

/**
 * collectDemonstrations(pretrainTasks(worlds), seeds, flaws) with one worker thread per seed, at
 * most `threads` at once: the same episodes in the same order (seed by seed), ~threads x faster.
 * The demonstrator's episodes are pure functions of (task, seed, flaws); only the CPU is shared.
 */
export async function collectDemonstrationsParallel(
  worlds: number,
  seeds: readonly number[],
  flaws: Partial<Flaws>,
  policy?: PolicyContext,
  threads = availableParallelism(),
): Promise<EpisodeText[]> {
  if (threads <= 1 || seeds.length <= 1)
    return collectDemonstrations(pretrainTasks(worlds), seeds, flaws, policy);
  // Under tsx the worker needs the loader first (tsxWorker.mjs); a bundle is plain JS.
  const entry = import.meta.url.endsWith(".ts")
    ? new URL("./tsxWorker.mjs", import.meta.url)
    : new URL(import.meta.url);
  const results: EpisodeText[][] = new Array(seeds.length);
  const live = new Set<Worker>();
  let failed = false;
  let next = 0;
  const runOne = (i: number) =>
    new Promise<void>((resolve, reject) => {
      const job: DemoJob = {
        kind: "loop-playground/demos",
        module: import.meta.url,
        worlds,
        seed: seeds[i] as number,
        flaws,
        ...(policy
          ? { policy: { tokenizer: policy.tokenizer.toJSON(), context: policy.context } }
          : {}),
      };
      const w = new Worker(entry, { workerData: job });
      live.add(w);
      const fail = (e: Error) => {
        // The first failure stops every lane: no new workers, the running ones terminated.
        failed = true;
        for (const x of live) void x.terminate();
        reject(e);
      };
      w.once("message", (eps: EpisodeText[]) => {
        results[i] = eps;
        void w.terminate();
        resolve();
      });
      w.once("error", fail);
      w.once("exit", (code) => {
        live.delete(w);
        if (results[i] === undefined)
          fail(new Error(`demonstration worker for seed ${seeds[i]} exited with ${code}`));
      });
    });
  const lane = async () => {
    while (!failed && next < seeds.length) await runOne(next++);
  };
  await Promise.all(Array.from({ length: Math.min(threads, seeds.length) }, lane));
  return results.flat();
}
