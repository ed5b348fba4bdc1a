import * as tf from "@tensorflow/tfjs";
import "@tensorflow/tfjs-backend-wasm";
import "@tensorflow/tfjs-backend-webgpu";
import { setWasmPaths } from "@tensorflow/tfjs-backend-wasm";

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
}

export interface SelectOptions {
  /** Use only this backend (fails if it cannot start). */
  force?: BackendName;
  /**
   * Where the tfjs wasm binaries are served (browser): a folder prefix, or a map from each binary's
   * name to its URL (e.g. from Vite's `?url` imports). Node finds them in node_modules.
   */
  wasmPaths?: string | Partial<Record<WasmBinaryName, string>>;
}

export type WasmBinaryName =
  | "tfjs-backend-wasm.wasm"
  | "tfjs-backend-wasm-simd.wasm"
  | "tfjs-backend-wasm-threaded-simd.wasm";

type GpuAdapter = { info?: { vendor?: string; architecture?: string } };
type GpuNavigator = { gpu?: { requestAdapter(): Promise<GpuAdapter | null> } };

/**
 * Probes WebGPU for an adapter before asking tfjs for it: navigator.gpu can exist while
 * requestAdapter() returns null (tfjs #8094), and then webgpu init fails.
 */
async function probeWebGpu(): Promise<string> {
  const nav = (globalThis as { navigator?: GpuNavigator }).navigator;
  if (!nav?.gpu) throw new Error("navigator.gpu is not available (WebGPU not supported here)");
  const adapter = await nav.gpu.requestAdapter();
  if (!adapter) throw new Error("navigator.gpu.requestAdapter() returned no adapter");
  return (
    [adapter.info?.vendor, adapter.info?.architecture].filter(Boolean).join(" ") ||
    "unknown adapter"
  );
}

/**
 * Chooses the fastest backend that works, in the order webgpu, webgl, wasm, cpu (or the forced
 * one), and reports the choice and why the others were passed over.
 */
export async function selectBackend(options: SelectOptions = {}): Promise<BackendInfo> {
  if (options.wasmPaths) setWasmPaths(options.wasmPaths);
  const order = options.force ? [options.force] : BACKEND_ORDER;
  const attempts: BackendAttempt[] = [];
  for (const name of order) {
    try {
      const adapter = name === "webgpu" ? await probeWebGpu() : undefined;
      if (!(await tf.setBackend(name))) throw new Error(`tfjs could not initialise ${name}`);
      await tf.ready();
      attempts.push({ name, ok: true });
      return { name, ...(adapter ? { adapter } : {}), attempts };
    } catch (e) {
      attempts.push({ name, ok: false, error: (e as Error).message });
    }
  }
  const tried = attempts.map((a) => `${a.name}: ${a.error}`).join("; ");
  throw new Error(`No tfjs backend could start (${tried}).`);
}
