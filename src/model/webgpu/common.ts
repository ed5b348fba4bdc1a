/**
 * Shared plumbing for this folder's custom WebGPU kernels (tfjs 4.22, @tensorflow/tfjs-backend-webgpu).
 *
 * Only types are imported from the webgpu backend package: importing it for values would register
 * the backend at import time, before src/model/backend.ts has installed navigator.gpu in Node (it
 * imports the package lazily for that reason). The two helpers the backend's own programs use
 * (computeDispatch, getMainHeaderString) are one-liners, written out here.
 *
 * How a program runs: `backend.runWebGPUProgram(program, inputs, dtype, uniforms)` builds the shader
 * from `getUserCode()` plus a generated header: the output buffer `result: array<f32>` (binding 0),
 * one `var<storage, read> <name>: array<f32>` per entry of `variableNames`, and a uniform struct
 * with each input's shape and strides (`<name>Shape`, e.g. `qInShape: vec3<i32>`), the output's
 * (`outShape`), then the fields in `program.uniforms`, whose values come, in order, from the
 * `uniforms` argument. With a dispatchLayout of x only, `main(index)` is called with the global
 * invocation index; `workgroupId`, `localId`, `numWorkgroups` are module-scope copies of the
 * builtins. The pipeline cache is keyed by `shaderKey` plus input ranks and dtypes, NOT shapes: every
 * constant baked into the WGSL source must be in `shaderKey`.
 */
import type * as tf from "@tensorflow/tfjs";
import type { WebGPUBackend, WebGPUProgram } from "@tensorflow/tfjs-backend-webgpu";

export type { WebGPUBackend, WebGPUProgram };

/** A program-defined uniform value, as runWebGPUProgram takes it. */
export type Uniform = { type: "float32" | "int32" | "uint32"; data: number[] };

/** The `args` tfjs passes to a kernelFunc, with the webgpu backend. */
export interface KernelArgs {
  inputs: tf.NamedTensorInfoMap;
  backend: unknown;
  attrs?: tf.NamedAttrMap;
}

/** The backend of a webgpu kernel call. */
export function webgpuBackend(args: KernelArgs): WebGPUBackend {
  return args.backend as WebGPUBackend;
}

/** An input tfjs must have passed (the kernel's own contract). */
export function input(args: KernelArgs, name: string): tf.TensorInfo {
  const t = args.inputs[name];
  if (!t) throw new Error(`kernel input '${name}' is missing`);
  return t;
}

/** Same as webgpu_util.computeDispatch for a flat layout: workgroups for `n` invocations. */
export function flatDispatch(n: number, workgroupSize: number): [number, number, number] {
  return [Math.max(1, Math.ceil(n / workgroupSize)), 1, 1];
}

/** Same as webgpu_program.getMainHeaderString("index"): the entry the generated `_start` calls. */
export const MAIN = "fn main(index : i32)";

/**
 * The linear workgroup id (runWebGPUProgram reshapes a dispatch over 65535 workgroups in x into
 * x, y, z; this undoes it).
 */
export const WORKGROUP_LINEAR = `i32(workgroupId.z * numWorkgroups.x * numWorkgroups.y + workgroupId.y * numWorkgroups.x + workgroupId.x)`;

/** A very negative finite score: "no key yet" / "masked" (finite so differences never give NaN). */
export const NEG = "-3.0e38";

/**
 * Rows per workgroup for the attention kernels: two [rows, hd] float tiles in workgroup memory
 * must fit well inside WebGPU's default 16 KiB (rows * hd <= 1536), 4 to 32 rows.
 */
export function attentionBlock(hd: number): number {
  let rows = 32;
  while (rows > 4 && rows * hd > 1536) rows /= 2;
  return rows;
}

/** True while tfjs records a gradient tape for kernels run now (Engine.isTapeOn, private). */
export function isRecordingGradients(engine: ReturnType<typeof tf.engine>): boolean {
  return engine.state.gradientDepth > 0 && engine.state.kernelDepth === 0;
}

/** Checks a shape, for error messages that name the kernel. */
export function assertShape(what: string, shape: number[], expected: (number | null)[]): void {
  const ok =
    shape.length === expected.length && expected.every((e, i) => e === null || shape[i] === e);
  if (!ok)
    throw new Error(
      `${what}: shape [${shape.join(", ")}] should be [${expected.map((e) => e ?? "*").join(", ")}]`,
    );
}
