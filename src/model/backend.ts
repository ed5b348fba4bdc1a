import * as tf from "@tensorflow/tfjs";
import "@tensorflow/tfjs-backend-wasm";
import { getThreadsCount, setThreadsCount, setWasmPaths } from "@tensorflow/tfjs-backend-wasm";
import {
  planWasmThreads,
  threadsRuntime,
  type WasmThreads,
  wasmThreadsAfterInit,
} from "./wasmThreads";

export type BackendName = "webgpu" | "webgl" | "wasm" | "cpu";
export const BACKEND_ORDER: BackendName[] = ["webgpu", "webgl", "wasm", "cpu"];

export interface BackendAttempt {
  name: BackendName;
  ok: boolean;
  error?: string;
}

export interface BackendInfo {
  /** The backend tfjs now uses. */
  name: BackendName;
  /** For webgpu: the adapter's vendor and architecture (e.g. "google swiftshader"). */
  adapter?: string;
  /** Every backend tried, in order, and why the ones before the chosen one failed. */
  attempts: BackendAttempt[];
  /** The software WebGPU adapter passed over for a faster CPU backend, if any. */
  softwareGpu?: string;
  /**
   * The wasm backend's threads (getThreadsCount() once started), or one and why: e.g. the page is
   * not cross-origin isolated (no SharedArrayBuffer), Node, or not the wasm backend.
   */
  threads?: WasmThreads;
}

export interface SelectOptions {
  /** Use only this backend (fails if it cannot start). */
  force?: BackendName;
  /**
   * Where the tfjs wasm binaries are served (browser): a folder prefix, or a map from each binary's
   * name to its URL (e.g. from Vite's `?url` imports). Node finds them in node_modules.
   */
  wasmPaths?: string | Partial<Record<WasmBinaryName, string>>;
  /**
   * Without force: use a software WebGPU adapter (SwiftShader) too. By default such an adapter is
   * passed over, with webgl, for wasm: emulating a GPU on the CPU is ~20x slower than wasm here.
   */
  allowSoftwareGpu?: boolean;
  /**
   * Where navigator.gpu is missing (Node): a WebGPU implementation to install there before the
   * tfjs webgpu backend loads, e.g. Dawn's Node bindings (src/cli/nodeGpu.ts). Its `globals`
   * (GPUBufferUsage, GPUMapMode, ...) go on globalThis too.
   */
  webgpuProvider?: () => Promise<WebGpuProvider>;
  /**
   * Threads for the wasm backend (browser, cross-origin isolated page only), capped as tfjs-wasm
   * caps them: at most 8 and half the logical cores (also the default). Read once, when the wasm
   * backend first starts.
   */
  wasmThreads?: number;
}

/** A WebGPU entry point and the constants the spec puts on the global object. */
export interface WebGpuProvider {
  gpu: unknown;
  globals?: object;
}

export type WasmBinaryName =
  | "tfjs-backend-wasm.wasm"
  | "tfjs-backend-wasm-simd.wasm"
  | "tfjs-backend-wasm-threaded-simd.wasm";

type GpuAdapter = {
  info?: { vendor?: string; architecture?: string; isFallbackAdapter?: boolean };
  isFallbackAdapter?: boolean;
};
type GpuNavigator = { gpu?: { requestAdapter(): Promise<GpuAdapter | null> } };

/**
 * Gives navigator.gpu to a runtime without one (Node) from the provider; the tfjs webgpu backend
 * registers itself only if navigator.gpu exists when it is first imported, so it is imported
 * here, after. Browsers (where navigator.gpu exists or never will) skip the provider.
 */
async function loadWebGpuBackend(provider?: () => Promise<WebGpuProvider>): Promise<void> {
  const g = globalThis as { navigator?: { gpu?: unknown } };
  if (!g.navigator?.gpu && provider) {
    const p = await provider();
    Object.assign(globalThis, p.globals ?? {});
    if (g.navigator)
      Object.defineProperty(g.navigator, "gpu", { value: p.gpu, configurable: true });
    else g.navigator = { gpu: p.gpu };
  }
  // Imported only once navigator.gpu exists: imported before, it would never register.
  if (g.navigator?.gpu) await import("@tensorflow/tfjs-backend-webgpu");
}

/**
 * Probes WebGPU for an adapter before asking tfjs for it: navigator.gpu can exist while
 * requestAdapter() returns null (tfjs #8094), and then webgpu init fails.
 */
async function probeWebGpu(): Promise<{ adapter: string; software: boolean }> {
  const nav = (globalThis as { navigator?: GpuNavigator }).navigator;
  if (!nav?.gpu) throw new Error("navigator.gpu is not available (WebGPU not supported here)");
  const adapter = await nav.gpu.requestAdapter();
  if (!adapter) throw new Error("navigator.gpu.requestAdapter() returned no adapter");
  const name =
    [adapter.info?.vendor, adapter.info?.architecture].filter(Boolean).join(" ") ||
    "unknown adapter";
  return { adapter: name, software: isSoftwareAdapter(adapter, name) };
}

/** A CPU implementation of WebGPU (SwiftShader, or whatever the browser marks as fallback). */
export function isSoftwareAdapter(
  adapter: { isFallbackAdapter?: boolean; info?: { isFallbackAdapter?: boolean } },
  name: string,
): boolean {
  return (
    adapter.isFallbackAdapter === true ||
    adapter.info?.isFallbackAdapter === true ||
    /swiftshader|llvmpipe|software/i.test(name)
  );
}

/** Whether tfjs loaded the threaded wasm binary (it needs both SIMD and threads). */
async function wasmThreadedBinary(): Promise<boolean> {
  const env = tf.env();
  const [simd, threads] = await Promise.all([
    env.getAsync("WASM_HAS_SIMD_SUPPORT"),
    env.getAsync("WASM_HAS_MULTITHREAD_SUPPORT"),
  ]);
  return simd === true && threads === true;
}

/**
 * Chooses the fastest backend that works, in the order webgpu, webgl, wasm, cpu (or the forced
 * one), and reports the choice and why the others were passed over. A software WebGPU adapter
 * (SwiftShader: no GPU) makes it pass over webgpu and webgl for wasm unless allowSoftwareGpu.
 */
export async function selectBackend(options: SelectOptions = {}): Promise<BackendInfo> {
  if (options.wasmPaths) setWasmPaths(options.wasmPaths);
  const order = options.force ? [options.force] : BACKEND_ORDER;
  const attempts: BackendAttempt[] = [];
  let softwareGpu = "";
  for (const name of order) {
    try {
      if (softwareGpu && name === "webgl")
        throw new Error(`skipped: the GPU here is emulated in software (${softwareGpu})`);
      if (name === "webgpu") await loadWebGpuBackend(options.webgpuProvider);
      const probe = name === "webgpu" ? await probeWebGpu() : undefined;
      const adapter = probe?.adapter;
      if (probe?.software && !options.force && !options.allowSoftwareGpu) {
        softwareGpu = probe.adapter;
        throw new Error(
          `the adapter (${probe.adapter}) is a software fallback, slower than wasm on this CPU`,
        );
      }
      const plan =
        name === "wasm"
          ? planWasmThreads(threadsRuntime(tf.env().getBool("IS_NODE")), options.wasmThreads)
          : undefined;
      // Read by tfjs only when the wasm backend first starts (setBackend below).
      if (plan) setThreadsCount(plan.count);
      if (!(await tf.setBackend(name))) throw new Error(`tfjs could not initialise ${name}`);
      await tf.ready();
      attempts.push({ name, ok: true });
      return {
        name,
        ...(adapter ? { adapter } : {}),
        ...(softwareGpu ? { softwareGpu } : {}),
        attempts,
        threads: plan
          ? wasmThreadsAfterInit(plan, getThreadsCount(), await wasmThreadedBinary())
          : { count: 1, reason: "not the wasm backend" },
      };
    } catch (e) {
      attempts.push({ name, ok: false, error: (e as Error).message });
    }
  }
  const tried = attempts.map((a) => `${a.name}: ${a.error}`).join("; ");
  throw new Error(`No tfjs backend could start (${tried}).`);
}
