/**
 * Dispatches of hand-written WGSL (own bind group layout) inside tfjs-webgpu's command stream, for
 * kernels that tfjs's program runner cannot express: runWebGPUProgram binds one writable output
 * and every input read-only, while a fused optimizer step writes three buffers (w, m, v) in place.
 *
 * A kernelFunc (still called through tf.engine().runKernel, so tf.profile counts it and gradients
 * or tidy see ordinary outputs) calls rawDispatch with its tensors' dataIds; rawDispatch uploads
 * them, binds their GPU buffers in the listed order (binding 0 the uniforms), records one dispatch
 * into the backend's current compute pass, and does the bookkeeping recordAndSubmit does: buffers
 * marked as used by the pending command queue (so a tensor disposed right after is freed only once
 * the queue is submitted), the deferred-submit batch, profiling timers. Buffers written in place
 * lose any CPU copy a read-back cached. The backend members used are private in its typings and
 * read through a cast (tfjs 4.22; see backend_webgpu.js recordAndSubmit).
 */
import * as tf from "@tensorflow/tfjs";
import type { Uniform, WebGPUBackend } from "./common";
import { countDispatch } from "./dispatches";

/** The WebGPUBackend members this file uses (private in the typings). */
interface BackendInternals {
  device: GPUDevice;
  tensorMap: WebGPUBackend["tensorMap"];
  commandEncoder: GPUCommandEncoder | null;
  computePassEncoder: GPUComputePassEncoder | null;
  commandQueueOwnedIds: WeakSet<object>;
  dispatchCountInPass: number;
  activeTimers: { name: string; query: Promise<number> }[] | null;
  supportTimestampQuery: boolean;
  querySet: GPUQuerySet | null;
  querySetCount: number;
  ensureCommandEncoderReady(): void;
  endComputePassEncoder(): void;
  submitQueue(): void;
  uploadToGPU(dataId: object): void;
  makeUniforms(uniforms: Uniform[]): GPUBufferBinding;
  getQueryTime(): Promise<number>;
}

/** A tensor's buffer as one binding: read-only, or read_write (then written in place). */
export interface RawBinding {
  dataId: object;
  write: boolean;
}

const pipelines = new WeakMap<GPUDevice, Map<string, GPUComputePipeline>>();

function pipeline(device: GPUDevice, key: string, wgsl: () => string): GPUComputePipeline {
  let cache = pipelines.get(device);
  if (!cache) {
    cache = new Map();
    pipelines.set(device, cache);
  }
  let p = cache.get(key);
  if (!p) {
    const module = device.createShaderModule({ code: wgsl(), label: key });
    p = device.createComputePipeline({
      layout: "auto",
      compute: { module, entryPoint: "main" },
      label: key,
    });
    cache.set(key, p);
  }
  return p;
}

/** How many storage buffers one shader may bind (WebGPU's default limit is 8). */
export function storageBufferLimit(backend: WebGPUBackend): number {
  return backend.device.limits.maxStorageBuffersPerShaderStage;
}

/** True when no other tensor shares this buffer, so that writing it in place changes only it. */
export function ownsBuffer(backend: WebGPUBackend, dataId: object): boolean {
  return backend.refCount(dataId) === 1;
}

/**
 * WGSL declarations of the bindings after binding 0 (the uniform struct `U` as `u`, declared by the
 * caller): one array per name, of f32 unless `types` says otherwise (e.g. "i32").
 */
export function rawDeclarations(names: string[], writes: boolean[], types: string[] = []): string {
  return names
    .map(
      (n, i) =>
        `@group(0) @binding(${i + 1}) var<storage, ${writes[i] ? "read_write" : "read"}> ${n} : array<${types[i] ?? "f32"}>;`,
    )
    .join("\n");
}

/**
 * Records one dispatch of the shader `wgsl()` (cached by `key`: everything baked into the source
 * must be in it; entry point `main`, binding 0 `var<uniform>`, then `bindings` in order).
 */
export function rawDispatch(
  webgpu: WebGPUBackend,
  key: string,
  wgsl: () => string,
  bindings: RawBinding[],
  uniforms: Uniform[],
  dispatch: [number, number, number],
): void {
  const backend = webgpu as unknown as BackendInternals;
  countDispatch();
  // Uploads end the compute pass (copies): all of them before the pass is (re)opened.
  for (const b of bindings) backend.uploadToGPU(b.dataId);
  const p = pipeline(backend.device, key, wgsl);
  const entries: GPUBindGroupEntry[] = [{ binding: 0, resource: backend.makeUniforms(uniforms) }];
  bindings.forEach((b, i) => {
    const resource = backend.tensorMap.get(b.dataId).resource;
    if (!(resource instanceof GPUBuffer)) throw new Error(`${key}: binding ${i} is not a buffer`);
    entries.push({ binding: i + 1, resource: { buffer: resource } });
  });
  const bindGroup = backend.device.createBindGroup({ layout: p.getBindGroupLayout(0), entries });
  for (const b of bindings) backend.commandQueueOwnedIds.add(b.dataId);
  backend.ensureCommandEncoderReady();
  const timed = backend.activeTimers != null;
  const encoder = backend.commandEncoder as GPUCommandEncoder;
  if (timed && backend.supportTimestampQuery) {
    backend.endComputePassEncoder();
    backend.querySet ??= backend.device.createQuerySet({
      type: "timestamp",
      count: backend.querySetCount,
    });
    backend.computePassEncoder = encoder.beginComputePass({
      timestampWrites: {
        querySet: backend.querySet,
        beginningOfPassWriteIndex: 0,
        endOfPassWriteIndex: 1,
      },
    });
  } else if (!backend.computePassEncoder) {
    backend.computePassEncoder = encoder.beginComputePass({});
  }
  const pass = backend.computePassEncoder as GPUComputePassEncoder;
  pass.setPipeline(p);
  pass.setBindGroup(0, bindGroup);
  pass.dispatchWorkgroups(dispatch[0], dispatch[1], dispatch[2]);
  backend.dispatchCountInPass++;
  // The GPU buffer is the truth now: drop any CPU copy a read-back cached.
  for (const b of bindings)
    if (b.write) {
      const data = backend.tensorMap.get(b.dataId);
      data.values = null as unknown as typeof data.values;
    }
  if (
    timed ||
    (tf.env().get("WEBGPU_DEFERRED_SUBMIT_BATCH_SIZE") as number) <= backend.dispatchCountInPass
  ) {
    backend.endComputePassEncoder();
    if (timed)
      backend.activeTimers?.push({ name: key.split("_")[0] ?? key, query: backend.getQueryTime() });
    else backend.submitQueue();
  }
}

/** Workgroups for n invocations of `size` threads, split over x and y past the 65535 limit. */
export function rawDispatchSize(n: number, size: number): [number, number, number] {
  const groups = Math.max(1, Math.ceil(n / size));
  return groups <= 65535 ? [groups, 1, 1] : [65535, Math.ceil(groups / 65535), 1];
}
