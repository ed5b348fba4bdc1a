/**
 * How many threads the tfjs wasm backend gets, and why only one where that is so. Pure logic: the
 * caller reads the runtime (crossOriginIsolated, SharedArrayBuffer, navigator.hardwareConcurrency).
 *
 * tfjs-backend-wasm 4.22 loads its threaded binary (tfjs-backend-wasm-threaded-simd.wasm) only where
 * SharedArrayBuffer can be posted and wasm threads validate (its WASM_HAS_MULTITHREAD_SUPPORT flag,
 * never in Node), and reads setThreadsCount() once, when the backend starts. Its C++ side then caps
 * the count at 8 (the pthread workers it starts with the module) and at half the logical cores
 * (navigator.hardwareConcurrency / 2, assuming two hyperthreads a core): 1 on a 2-core machine.
 * Measured on a 2-vCPU machine (bench page, the page's model size): past that cap, 2 threads scored
 * ~15-20% and trained ~1-12% faster while the machine was idle, and ran 4x slower whenever another
 * process held a core; the threaded binary on 1 thread matched the plain SIMD one.
 */

/** The threaded build's pthread pool (emscripten PTHREAD_POOL_SIZE in tfjs-backend-wasm 4.22). */
export const MAX_WASM_THREADS = 8;

/** The wasm backend's threads: a count, or one thread and why. */
export type WasmThreads = { count: number } | { count: 1; reason: string };

/** What decides the thread count, read from the runtime. */
export interface ThreadsRuntime {
  /** Node (tfjs runs the wasm backend single-threaded there). */
  isNode: boolean;
  /** globalThis.crossOriginIsolated (undefined where the runtime has no such notion). */
  crossOriginIsolated?: boolean;
  /** Whether SharedArrayBuffer exists. */
  sharedArrayBuffer: boolean;
  /** navigator.hardwareConcurrency, if known. */
  hardwareConcurrency?: number;
}

/** Reads the ThreadsRuntime of this runtime (browser page, worker, or Node). */
export function threadsRuntime(isNode: boolean): ThreadsRuntime {
  const g = globalThis as {
    crossOriginIsolated?: boolean;
    navigator?: { hardwareConcurrency?: number };
  };
  return {
    isNode,
    ...(typeof g.crossOriginIsolated === "boolean"
      ? { crossOriginIsolated: g.crossOriginIsolated }
      : {}),
    sharedArrayBuffer: typeof SharedArrayBuffer === "function",
    ...(typeof g.navigator?.hardwareConcurrency === "number"
      ? { hardwareConcurrency: g.navigator.hardwareConcurrency }
      : {}),
  };
}

/** The most threads tfjs-wasm starts on this many logical cores: half of them, 1 to 8. */
export function tfjsWasmThreadCap(logicalCores: number): number {
  return Math.min(Math.max(1, Math.floor(logicalCores / 2)), MAX_WASM_THREADS);
}

/**
 * The count to pass to setThreadsCount before the wasm backend starts: the requested count, capped
 * as tfjs-wasm caps it (by default that cap: half the logical cores, at most 8); one, with the
 * reason, where threads cannot be had.
 */
export function planWasmThreads(rt: ThreadsRuntime, requested?: number): WasmThreads {
  if (rt.isNode) return { count: 1, reason: "Node: tfjs runs wasm single-threaded" };
  if (rt.crossOriginIsolated === false) return { count: 1, reason: "not cross-origin isolated" };
  if (!rt.sharedArrayBuffer) return { count: 1, reason: "no SharedArrayBuffer" };
  const cores = Math.max(1, Math.floor(rt.hardwareConcurrency ?? 1));
  const cap = tfjsWasmThreadCap(cores);
  const want = requested === undefined ? cap : Math.max(1, Math.floor(requested));
  if (requested !== undefined && want === 1) return { count: 1, reason: "1 thread requested" };
  if (cores === 1) return { count: 1, reason: "one logical core" };
  if (cap === 1)
    return { count: 1, reason: `tfjs-wasm uses at most half the ${cores} logical cores` };
  return { count: Math.min(want, cap) };
}

/**
 * The threads the wasm backend really has, from the plan and what it reports once started
 * (getThreadsCount()) and whether it loaded the threaded binary.
 */
export function wasmThreadsAfterInit(
  plan: WasmThreads,
  actual: number,
  threadedBinary: boolean,
): WasmThreads {
  if (actual >= 2) return { count: actual };
  if ("reason" in plan) return plan;
  if (!threadedBinary) return { count: 1, reason: "this browser's wasm has no threads" };
  return { count: 1, reason: `the wasm backend started 1 thread (asked for ${plan.count})` };
}

/** E.g. "2 threads", "1 thread (not cross-origin isolated)". */
export function describeThreads(t: WasmThreads): string {
  if ("reason" in t) return `1 thread (${t.reason})`;
  return `${t.count} ${t.count === 1 ? "thread" : "threads"}`;
}

/**
 * A requested thread count from a query string's `threads` (a positive integer), else undefined
 * (the default: tfjs-wasm's cap, half the logical cores, at most 8).
 */
export function threadsFromQuery(query: string): number | undefined {
  const raw = new URLSearchParams(query).get("threads");
  if (raw === null || !/^\d+$/.test(raw.trim())) return undefined;
  const n = Number(raw);
  return n >= 1 ? n : undefined;
}
