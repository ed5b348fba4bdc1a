/**
 * Counts GPU dispatches on the webgpu backend: every program tfjs runs (its own kernels' and ours,
 * through backend.runWebGPUProgram) and every hand-written dispatch of raw.ts. tf.profile counts
 * kernels, which is not the same thing here: Reshape, Identity and same-type Cast share a buffer
 * and dispatch nothing, and a fused kernel may dispatch several programs.
 */
import * as tf from "@tensorflow/tfjs";

let count = 0;
const watched = new WeakSet<object>();

/** Adds one dispatch (raw.ts calls it for each of its dispatches). */
export function countDispatch(): void {
  count++;
}

/** Dispatches counted so far (since the page loaded); 0 off webgpu. */
export function dispatchCount(): number {
  return count;
}

/** Starts counting the current webgpu backend's programs (idempotent; nothing on other backends). */
export function watchDispatches(): void {
  if (tf.getBackend() !== "webgpu") return;
  const backend = tf.backend() as unknown as { runWebGPUProgram: (...args: unknown[]) => unknown };
  if (watched.has(backend)) return;
  watched.add(backend);
  const run = backend.runWebGPUProgram;
  backend.runWebGPUProgram = function (this: unknown, ...args: unknown[]) {
    count++;
    return run.apply(this, args);
  };
}
