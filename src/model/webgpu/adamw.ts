/**
 * The optimizer step as WebGPU kernels (optim.ts's AdamW runs them on webgpu):
 *
 * - sumOfSquares(grads) -> [groups]: sum of g^2 over all gradients, one partial sum per dispatch of
 *   up to (storage-buffer limit - 1) gradients (one workgroup each); the caller adds the partials
 *   and takes the square root on the CPU, where it needs the norm anyway (clip factor, skip test).
 * - fusedAdamW(entries, hyper): per element, in ONE dispatch for a group of variables:
 *     g' = c g;  m = b1 m + (1 - b1) g';  v = b2 v + (1 - b2) g'^2;
 *     w = (w - lr (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)) * decay
 *   (the same float32 operations, in the same order, as tf.train.adam followed by the decay
 *   multiply), or for an SGD entry (no moments) w = w - sgdLr g'. w, m and v are written in place
 *   when the tensor owns its buffer (refCount 1); one whose buffer is shared (tf.clone of a weight,
 *   e.g. a trainer's last-good snapshot) is read from its buffer and written to a new one instead,
 *   as an assign would, so the other holders keep the old values. Each group binds its gradients
 *   and states (4 buffers per in-place Adam variable) within WebGPU's storage-buffer limit (8 by
 *   default: 2 Adam variables a dispatch), through raw.ts (tfjs's runner binds one output only).
 *
 * Both are kernels (tf.engine().runKernel, so tf.profile counts one per dispatch); the outputs of
 * fusedAdamW are, per entry, the new w (and m, v): the input tensor itself (aliased, refcount
 * raised, like writeKV) or a new tensor to assign; the caller disposes them all.
 */
import * as tf from "@tensorflow/tfjs";
import { assertShape, input, type KernelArgs, type Uniform, webgpuBackend } from "./common";
import {
  ownsBuffer,
  type RawBinding,
  rawDeclarations,
  rawDispatch,
  rawDispatchSize,
  storageBufferLimit,
} from "./raw";

export const ADAMW = "LoopAdamW";
export const SUM_OF_SQUARES = "LoopSumOfSquares";

const THREADS = 256;

/** One variable's step: its gradient and state; no m, v: an SGD entry. */
export interface AdamWEntry {
  g: tf.Tensor;
  w: tf.Tensor;
  m?: tf.Tensor;
  v?: tf.Tensor;
  /** Multiplies w after the update: 1 - lr * wd for a decayed matrix, 1 otherwise. */
  decay: number;
}

/** The step's scalars, as tf.train.adam has them (float32 on the GPU). */
export interface AdamWHyper {
  /** Global clip factor on every gradient. */
  clip: number;
  beta1: number;
  beta2: number;
  /** 1 - beta1^t and 1 - beta2^t: Adam's bias corrections, t the step being taken. */
  oneMinusAccBeta1: number;
  oneMinusAccBeta2: number;
  eps: number;
  lr: number;
  /** Learning rate of the SGD entries. */
  sgdLr: number;
}

/** The new state of one entry (each to dispose; one that is not the input tensor is to assign). */
export interface AdamWResult {
  w: tf.Tensor;
  m?: tf.Tensor;
  v?: tf.Tensor;
}

const HYPER_FIELDS = [
  "clip",
  "b1",
  "omb1",
  "b2",
  "omb2",
  "omab1",
  "omab2",
  "eps",
  "negLr",
  "sgdLr",
] as const;

/**
 * WGSL for one group: `layout` per entry is "a" (Adam) or "s" (SGD) followed by one letter per
 * state (w, then m, v for Adam): "i" in place, "o" read from `<x>In` and written to `<x>`.
 */
function adamWSource(layout: string[], names: string[], writes: boolean[]): string {
  const fields = [
    ...layout.map((_, j) => `n${j} : i32,`),
    ...layout.map((_, j) => `d${j} : f32,`),
    ...HYPER_FIELDS.map((f) => `${f} : f32,`),
  ];
  const src = (x: string, j: number, mode: string) => (mode === "o" ? `${x}${j}In` : `${x}${j}`);
  const bodies = layout.map((code, j) => {
    const [kind, wMode = "i", mMode = "i", vMode = "i"] = code.split("");
    if (kind === "s")
      return `
      if (i < u.n${j}) {
        let g = g${j}[i] * u.clip;
        w${j}[i] = ${src("w", j, wMode)}[i] - g * u.sgdLr;
      }`;
    return `
      if (i < u.n${j}) {
        let g = g${j}[i] * u.clip;
        let m = ${src("m", j, mMode)}[i] * u.b1 + g * u.omb1;
        let v = ${src("v", j, vMode)}[i] * u.b2 + (g * g) * u.omb2;
        m${j}[i] = m;
        v${j}[i] = v;
        let step = (m / u.omab1) / (sqrt(v / u.omab2) + u.eps);
        w${j}[i] = (step * u.negLr + ${src("w", j, wMode)}[i]) * u.d${j};
      }`;
  });
  return `
    struct U { ${fields.join(" ")} };
    @group(0) @binding(0) var<uniform> u : U;
    ${rawDeclarations(names, writes)}

    // Per entry j, element i: AdamW (or SGD) on w, m, v with the clipped gradient c g (module doc).
    @compute @workgroup_size(${THREADS})
    fn main(@builtin(global_invocation_id) gid : vec3<u32>,
            @builtin(num_workgroups) nwg : vec3<u32>) {
      let i = i32(gid.y * nwg.x * ${THREADS}u + gid.x);
      ${bodies.join("\n")}
    }`;
}

function adamWKernel(args: KernelArgs): tf.TensorInfo[] {
  const backend = webgpuBackend(args);
  const kinds = args.attrs?.kinds as string;
  const decay = args.attrs?.decay as number[];
  const hyper = args.attrs?.hyper as number[];
  const names: string[] = [];
  const bindings: RawBinding[] = [];
  const outputs: tf.TensorInfo[] = [];
  const layout: string[] = [];
  const sizes: number[] = [];
  [...kinds].forEach((kind, j) => {
    const g = input(args, `g${j}`);
    if (g.dtype !== "float32") throw new Error("adamW: float32 gradients only");
    names.push(`g${j}`);
    bindings.push({ dataId: g.dataId, write: false });
    let code = kind;
    for (const x of kind === "a" ? ["w", "m", "v"] : ["w"]) {
      const t = input(args, `${x}${j}`);
      assertShape(`adamW ${x}${j}`, t.shape, g.shape);
      if (t.dtype !== "float32") throw new Error("adamW: float32 state only");
      if (ownsBuffer(backend, t.dataId)) {
        names.push(`${x}${j}`);
        bindings.push({ dataId: t.dataId, write: true });
        backend.incRef(t.dataId);
        outputs.push({ dataId: t.dataId, shape: t.shape, dtype: t.dtype });
        code += "i";
      } else {
        const out = backend.makeTensorInfo(t.shape, "float32");
        names.push(`${x}${j}In`, `${x}${j}`);
        bindings.push({ dataId: t.dataId, write: false }, { dataId: out.dataId, write: true });
        outputs.push(out);
        code += "o";
      }
    }
    layout.push(code);
    sizes.push(g.shape.reduce((a, b) => a * b, 1));
  });
  const limit = storageBufferLimit(backend);
  if (bindings.length > limit)
    throw new Error(`adamW: ${bindings.length} storage buffers in one dispatch (limit ${limit})`);
  const uniforms: Uniform[] = [
    ...sizes.map((n) => ({ type: "int32" as const, data: [n] })),
    ...decay.map((d) => ({ type: "float32" as const, data: [d] })),
    ...hyper.map((h) => ({ type: "float32" as const, data: [h] })),
  ];
  const writes = bindings.map((b) => b.write);
  rawDispatch(
    backend,
    `loopAdamW_${layout.join("_")}`,
    () => adamWSource(layout, names, writes),
    bindings,
    uniforms,
    rawDispatchSize(Math.max(...sizes), THREADS),
  );
  return outputs;
}

/** WGSL: acc[slot] = sum over k, i of g_k[i]^2 (one workgroup, tree reduction). */
function sumOfSquaresSource(k: number): string {
  const names = ["acc", ...Array.from({ length: k }, (_, j) => `g${j}`)];
  const loops = Array.from(
    { length: k },
    (_, j) => `
      for (var i = li; i < u.n${j}; i += ${THREADS}) { let x = g${j}[i]; s += x * x; }`,
  );
  return `
    struct U { slot : i32, ${Array.from({ length: k }, (_, j) => `n${j} : i32,`).join(" ")} };
    @group(0) @binding(0) var<uniform> u : U;
    ${rawDeclarations(
      names,
      names.map((_, j) => j === 0),
    )}
    var<workgroup> red : array<f32, ${THREADS}>;

    // acc[slot] = sum_j sum_i g_j[i]^2.
    @compute @workgroup_size(${THREADS})
    fn main(@builtin(local_invocation_index) lid : u32) {
      let li = i32(lid);
      var s = 0.0;
      ${loops.join("")}
      red[lid] = s;
      workgroupBarrier();
      for (var stride = ${THREADS / 2}u; stride > 0u; stride = stride / 2u) {
        if (lid < stride) { red[lid] = red[lid] + red[lid + stride]; }
        workgroupBarrier();
      }
      if (lid == 0u) { acc[u.slot] = red[0]; }
    }`;
}

function sumOfSquaresKernel(args: KernelArgs): tf.TensorInfo {
  const backend = webgpuBackend(args);
  const acc = input(args, "acc");
  const slot = args.attrs?.slot as number;
  const k = args.attrs?.count as number;
  if (!ownsBuffer(backend, acc.dataId)) throw new Error("sumOfSquares: acc must own its buffer");
  if (!(slot >= 0 && slot < (acc.shape[0] as number)))
    throw new Error(`sumOfSquares: slot ${slot} outside [${acc.shape}]`);
  const grads = Array.from({ length: k }, (_, j) => input(args, `g${j}`));
  for (const g of grads)
    if (g.dtype !== "float32") throw new Error("sumOfSquares: float32 gradients only");
  rawDispatch(
    backend,
    `loopSumOfSquares_${k}`,
    () => sumOfSquaresSource(k),
    [
      { dataId: acc.dataId, write: true },
      ...grads.map((g) => ({ dataId: g.dataId, write: false })),
    ],
    [
      { type: "int32", data: [slot] },
      ...grads.map((g) => ({ type: "int32" as const, data: [g.shape.reduce((a, b) => a * b, 1)] })),
    ],
    [1, 1, 1],
  );
  backend.incRef(acc.dataId);
  return { dataId: acc.dataId, shape: acc.shape, dtype: acc.dtype };
}

export function adamWKernelConfigs(): tf.KernelConfig[] {
  return [
    { kernelName: ADAMW, backendName: "webgpu", kernelFunc: adamWKernel as tf.KernelFunc },
    {
      kernelName: SUM_OF_SQUARES,
      backendName: "webgpu",
      kernelFunc: sumOfSquaresKernel as tf.KernelFunc,
    },
  ];
}

function currentBackend(): Parameters<typeof storageBufferLimit>[0] {
  return tf.backend() as unknown as Parameters<typeof storageBufferLimit>[0];
}

/**
 * Sums of squares of `grads` (float32), one partial per group of gradients: [groups]; the global
 * squared norm is the sum of its values. ceil(n / (limit - 1)) dispatches.
 */
export function runSumOfSquares(grads: tf.Tensor[]): tf.Tensor1D {
  const per = storageBufferLimit(currentBackend()) - 1;
  const groups = Math.max(1, Math.ceil(grads.length / per));
  let acc = tf.zeros([groups]) as tf.Tensor1D;
  for (let s = 0; s < groups; s++) {
    const part = grads.slice(s * per, (s + 1) * per);
    const inputs: tf.NamedTensorMap = { acc };
    part.forEach((g, j) => {
      inputs[`g${j}`] = g;
    });
    const next = tf
      .engine()
      .runKernel<tf.Tensor1D>(SUM_OF_SQUARES, inputs, { slot: s, count: part.length });
    acc.dispose();
    acc = next;
  }
  return acc;
}

/** Storage buffers an entry binds: its gradient, and 1 (in place) or 2 (shared) per state. */
function bindingsOf(backend: ReturnType<typeof currentBackend>, e: AdamWEntry): number {
  let n = 1;
  for (const t of [e.w, e.m, e.v]) if (t) n += ownsBuffer(backend, t.dataId as object) ? 1 : 2;
  return n;
}

/**
 * One AdamW (or SGD) step of every entry, entries packed into dispatches in order while their
 * buffers fit the storage-buffer limit. Results by entry (see AdamWResult).
 */
export function runAdamW(entries: AdamWEntry[], hyper: AdamWHyper): AdamWResult[] {
  const backend = currentBackend();
  const limit = storageBufferLimit(backend);
  const h = [
    hyper.clip,
    hyper.beta1,
    1 - hyper.beta1,
    hyper.beta2,
    1 - hyper.beta2,
    hyper.oneMinusAccBeta1,
    hyper.oneMinusAccBeta2,
    hyper.eps,
    -hyper.lr,
    hyper.sgdLr,
  ];
  const results: AdamWResult[] = [];
  let group: AdamWEntry[] = [];
  let used = 0;
  const flush = () => {
    if (group.length === 0) return;
    const inputs: tf.NamedTensorMap = {};
    let kinds = "";
    group.forEach((e, j) => {
      const adam = e.m !== undefined && e.v !== undefined;
      kinds += adam ? "a" : "s";
      inputs[`g${j}`] = e.g;
      inputs[`w${j}`] = e.w;
      if (adam) {
        inputs[`m${j}`] = e.m as tf.Tensor;
        inputs[`v${j}`] = e.v as tf.Tensor;
      }
    });
    const outs = tf.engine().runKernel(ADAMW, inputs, {
      kinds,
      decay: group.map((e) => e.decay),
      hyper: h,
    }) as tf.Tensor[];
    let k = 0;
    for (const c of kinds) {
      const w = outs[k++] as tf.Tensor;
      if (c === "a") results.push({ w, m: outs[k++], v: outs[k++] });
      else results.push({ w });
    }
    group = [];
    used = 0;
  };
  for (const e of entries) {
    if (e.g.size === 0) throw new Error("adamW: empty variable");
    const n = bindingsOf(backend, e);
    if (used + n > limit) flush();
    group.push(e);
    used += n;
  }
  flush();
  return results;
}
