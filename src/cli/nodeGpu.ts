import {
  type BackendInfo,
  type BackendName,
  selectBackend,
  type WebGpuProvider,
} from "../model/backend";

/**
 * WebGPU in Node through Dawn's Node bindings (the `webgpu` package, dawn-gpu/node-webgpu): the
 * machine's GPU through Vulkan (Linux), Metal or D3D12, so `--backend webgpu` trains on a real GPU
 * from the command line. Dawn flags can be passed in DAWN_FLAGS (comma-separated), e.g.
 * `backend=vulkan`. Loaded only when asked for: a machine without a Vulkan loader still runs the
 * CLIs on wasm or cpu.
 */
export async function dawnProvider(): Promise<WebGpuProvider> {
  const { create, globals } = await import("webgpu");
  const flags = (process.env.DAWN_FLAGS ?? "").split(",").filter(Boolean);
  return { gpu: create(flags), globals };
}

/** The CLIs' backend: the one named by --backend, with WebGPU through Dawn where Node has none. */
export function selectCliBackend(name: string): Promise<BackendInfo> {
  return selectBackend({ force: name as BackendName, webgpuProvider: dawnProvider });
}
