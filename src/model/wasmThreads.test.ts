import { describe, expect, it } from "vitest";
import {
  describeThreads,
  MAX_WASM_THREADS,
  planWasmThreads,
  type ThreadsRuntime,
  tfjsWasmThreadCap,
  threadsFromQuery,
  threadsRuntime,
  wasmThreadsAfterInit,
} from "./wasmThreads";

const isolated: ThreadsRuntime = {
  isNode: false,
  crossOriginIsolated: true,
  sharedArrayBuffer: true,
  hardwareConcurrency: 2,
};

describe("planWasmThreads", () => {
  it("gives a cross-origin isolated page tfjs-wasm's cap: half the logical cores, at most 8", () => {
    expect(planWasmThreads({ ...isolated, hardwareConcurrency: 4 })).toEqual({ count: 2 });
    expect(planWasmThreads({ ...isolated, hardwareConcurrency: 12 })).toEqual({ count: 6 });
    expect(planWasmThreads({ ...isolated, hardwareConcurrency: 64 })).toEqual({
      count: MAX_WASM_THREADS,
    });
    // The CI machine: 2 logical cores, so tfjs-wasm starts 1 thread whatever is asked.
    expect(planWasmThreads(isolated)).toEqual({
      count: 1,
      reason: "tfjs-wasm uses at most half the 2 logical cores",
    });
    expect(planWasmThreads({ ...isolated, hardwareConcurrency: 1 })).toEqual({
      count: 1,
      reason: "one logical core",
    });
    const { hardwareConcurrency: _, ...unknownCores } = isolated;
    expect(planWasmThreads(unknownCores)).toEqual({ count: 1, reason: "one logical core" });
  });

  it("takes a requested count, capped as tfjs-wasm caps it", () => {
    const eight: ThreadsRuntime = { ...isolated, hardwareConcurrency: 8 };
    expect(planWasmThreads(eight, 3)).toEqual({ count: 3 });
    expect(planWasmThreads(eight, 100)).toEqual({ count: 4 });
    expect(planWasmThreads({ ...isolated, hardwareConcurrency: 32 }, 100)).toEqual({
      count: MAX_WASM_THREADS,
    });
    expect(planWasmThreads(eight, 1)).toEqual({ count: 1, reason: "1 thread requested" });
    expect(planWasmThreads(isolated, 2)).toEqual({
      count: 1,
      reason: "tfjs-wasm uses at most half the 2 logical cores",
    });
  });

  it("says why there is one thread where threads cannot be had", () => {
    expect(planWasmThreads({ ...isolated, crossOriginIsolated: false }, 4)).toEqual({
      count: 1,
      reason: "not cross-origin isolated",
    });
    expect(planWasmThreads({ ...isolated, sharedArrayBuffer: false })).toEqual({
      count: 1,
      reason: "no SharedArrayBuffer",
    });
    expect(planWasmThreads({ ...isolated, isNode: true })).toEqual({
      count: 1,
      reason: "Node: tfjs runs wasm single-threaded",
    });
  });
});

describe("tfjsWasmThreadCap", () => {
  it("is half the logical cores, 1 to 8", () => {
    expect([1, 2, 3, 4, 5, 16, 17, 64].map(tfjsWasmThreadCap)).toEqual([1, 1, 1, 2, 2, 8, 8, 8]);
  });
});

describe("wasmThreadsAfterInit", () => {
  it("reports the count the backend started, else the reason for one", () => {
    expect(wasmThreadsAfterInit({ count: 2 }, 2, true)).toEqual({ count: 2 });
    expect(wasmThreadsAfterInit({ count: 1, reason: "no SharedArrayBuffer" }, 1, false)).toEqual({
      count: 1,
      reason: "no SharedArrayBuffer",
    });
    expect(wasmThreadsAfterInit({ count: 4 }, 1, false)).toEqual({
      count: 1,
      reason: "this browser's wasm has no threads",
    });
    expect(wasmThreadsAfterInit({ count: 4 }, 1, true)).toEqual({
      count: 1,
      reason: "the wasm backend started 1 thread (asked for 4)",
    });
  });
});

describe("describeThreads", () => {
  it("reads as the badge shows it", () => {
    expect(describeThreads({ count: 2 })).toBe("2 threads");
    expect(describeThreads({ count: 1, reason: "not cross-origin isolated" })).toBe(
      "1 thread (not cross-origin isolated)",
    );
  });
});

describe("threadsFromQuery", () => {
  it("reads a positive integer ?threads=, else nothing", () => {
    expect(threadsFromQuery("?threads=2")).toBe(2);
    expect(threadsFromQuery("preset=small&threads=8")).toBe(8);
    expect(threadsFromQuery("threads=2")).toBe(2);
    expect(threadsFromQuery("")).toBeUndefined();
    expect(threadsFromQuery("training")).toBeUndefined();
    expect(threadsFromQuery("?threads=0")).toBeUndefined();
    expect(threadsFromQuery("?threads=-2")).toBeUndefined();
    expect(threadsFromQuery("?threads=1.5")).toBeUndefined();
    expect(threadsFromQuery("?threads=abc")).toBeUndefined();
  });
});

describe("threadsRuntime", () => {
  it("reads Node as Node, with SharedArrayBuffer", () => {
    const rt = threadsRuntime(true);
    expect(rt.isNode).toBe(true);
    expect(rt.sharedArrayBuffer).toBe(true);
    expect(planWasmThreads(rt).count).toBe(1);
  });
});
