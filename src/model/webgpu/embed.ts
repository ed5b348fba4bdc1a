/**
 * Summed embedding lookups as tfjs WebGPU kernels, with the gradient, plus the reference in plain
 * tfjs ops: embedSum(tables [rows_t, d], ids [k, N] int32) -> [N, d], out[n] = sum_t
 * tables[t][ids[t, n]] (the model's token + position + previous-token embeddings in one pass).
 *
 * - Forward: one dispatch (tfjs program, thread per output element; 6 tables + ids + output = 8
 *   storage buffers, WebGPU's default limit: more tables are summed in chunks of 6 by the caller).
 * - Backward: one dispatch for every table's gradient (raw.ts: one writable buffer per table), a
 *   thread per (table, row) that zeroes its row and adds dy[n] for each n with ids[t, n] = row, in
 *   order: deterministic, no atomics, O(rows * N + N * d) a table. ids outside a table's rows
 *   contribute nothing (forward and backward).
 */
import * as tf from "@tensorflow/tfjs";
import {
  assertShape,
  flatDispatch,
  input,
  type KernelArgs,
  MAIN,
  type WebGPUProgram,
  webgpuBackend,
} from "./common";
import { rawDeclarations, rawDispatch, rawDispatchSize } from "./raw";

export const EMBED_SUM = "LoopEmbedSum";
export const EMBED_SUM_GRAD = "LoopEmbedSumGrad";

/** Tables per kernel call: 6 tables, the ids and the output fill WebGPU's default 8 bindings. */
export const EMBED_MAX_TABLES = 6;

const THREADS = 64;

/** out[n, j] = sum_t table_t[ids[t, n], j]; a thread per output element. */
class EmbedSumProgram implements WebGPUProgram {
  variableNames: string[];
  outputShape: number[];
  shaderKey: string;
  dispatchLayout = { x: [0] };
  dispatch: [number, number, number];
  workgroupSize: [number, number, number] = [THREADS, 1, 1];
  size = true;
  private readonly k: number;
  private readonly d: number;

  constructor(k: number, n: number, d: number) {
    this.k = k;
    this.d = d;
    this.variableNames = ["ids", ...Array.from({ length: k }, (_, t) => `t${t}`)];
    this.outputShape = [n, d];
    this.dispatch = flatDispatch(n * d, THREADS);
    this.shaderKey = `loopEmbedSum_${k}_${d}`;
  }

  getUserCode(): string {
    const { k, d } = this;
    const terms = Array.from(
      { length: k },
      (_, t) => `
        {
          let r = ids[${t} * N + n];
          if (r >= 0 && r < uniforms.t${t}Shape.x) { s += t${t}[r * ${d} + j]; }
        }`,
    ).join("");
    return `
    // out[n, j] = sum_t t_t[ids[t, n], j] (ids outside a table's rows add nothing).
    ${MAIN} {
      if (index < uniforms.size) {
        let N = uniforms.idsShape.y;
        let n = index / ${d};
        let j = index - n * ${d};
        var s = 0.0;
        ${terms}
        result[index] = s;
      }
    }`;
  }
}

/** WGSL of the backward pass for k tables of width d: grad_t[r, :] = sum_{n: ids[t, n] = r} dy[n, :]. */
function embedGradSource(k: number, d: number): string {
  const names = ["dy", "ids", ...Array.from({ length: k }, (_, t) => `g${t}`)];
  const rows = Array.from({ length: k }, (_, t) => `r${t} : i32,`).join(" ");
  // Thread index -> (table, row): tables' rows laid end to end.
  const branches = Array.from(
    { length: k },
    (_, t) => `
      if (found == 0 && row < u.r${t}) {
        found = 1;
        for (var j = 0; j < ${d}; j++) { g${t}[row * ${d} + j] = 0.0; }
        for (var n = 0; n < u.n; n++) {
          if (ids[${t} * u.n + n] == row) {
            for (var j = 0; j < ${d}; j++) { g${t}[row * ${d} + j] += dy[n * ${d} + j]; }
          }
        }
      }
      if (found == 0) { row -= u.r${t}; }`,
  ).join("");
  return `
    struct U { n : i32, total : i32, ${rows} };
    @group(0) @binding(0) var<uniform> u : U;
    ${rawDeclarations(
      names,
      names.map((_, i) => i >= 2),
      names.map((_, i) => (i === 1 ? "i32" : "f32")),
    )}

    // grad_t[r, j] = sum over n with ids[t, n] = r of dy[n, j], in order of n; a thread per (t, r).
    @compute @workgroup_size(${THREADS})
    fn main(@builtin(global_invocation_id) gid : vec3<u32>,
            @builtin(num_workgroups) nwg : vec3<u32>) {
      let index = i32(gid.y * nwg.x * ${THREADS}u + gid.x);
      if (index >= u.total) { return; }
      var row = index;
      var found = 0;
      ${branches}
    }`;
}

function tablesOf(args: KernelArgs, k: number): tf.TensorInfo[] {
  return Array.from({ length: k }, (_, t) => input(args, `t${t}`));
}

function embedSumKernel(args: KernelArgs): tf.TensorInfo {
  const backend = webgpuBackend(args);
  const ids = input(args, "ids");
  const k = ids.shape[0] as number;
  const n = ids.shape[1] as number;
  if (ids.dtype !== "int32") throw new Error("embedSum: ids must be int32");
  if (k < 1 || k > EMBED_MAX_TABLES) throw new Error(`embedSum: 1 to 6 tables, got ${k}`);
  const tables = tablesOf(args, k);
  const d = tables[0]?.shape[1] as number;
  for (const t of tables) assertShape("embedSum table", t.shape, [null, d]);
  return backend.runWebGPUProgram(new EmbedSumProgram(k, n, d), [ids, ...tables], "float32");
}

function embedSumGradKernel(args: KernelArgs): tf.TensorInfo[] {
  const backend = webgpuBackend(args);
  const dy = input(args, "dy");
  const ids = input(args, "ids");
  const rows = args.attrs?.rows as number[];
  const [k, n] = ids.shape as [number, number];
  const d = dy.shape[1] as number;
  assertShape("embedSum dy", dy.shape, [n, d]);
  const grads = rows.map((r) => backend.makeTensorInfo([r, d], "float32"));
  const total = rows.reduce((a, b) => a + b, 0);
  rawDispatch(
    backend,
    `loopEmbedSumGrad_${k}_${d}`,
    () => embedGradSource(k, d),
    [
      { dataId: dy.dataId, write: false },
      { dataId: ids.dataId, write: false },
      ...grads.map((g) => ({ dataId: g.dataId, write: true })),
    ],
    [
      { type: "int32", data: [n] },
      { type: "int32", data: [total] },
      ...rows.map((r) => ({ type: "int32" as const, data: [r] })),
    ],
    rawDispatchSize(total, THREADS),
  );
  return grads;
}

export function embedKernelConfigs(): tf.KernelConfig[] {
  return [
    { kernelName: EMBED_SUM, backendName: "webgpu", kernelFunc: embedSumKernel as tf.KernelFunc },
    {
      kernelName: EMBED_SUM_GRAD,
      backendName: "webgpu",
      kernelFunc: embedSumGradKernel as tf.KernelFunc,
    },
  ];
}

export function embedGradConfigs(): tf.GradConfig[] {
  return [
    {
      kernelName: EMBED_SUM,
      inputsToSave: ["ids"],
      gradFunc: (dy, saved, attrs) => {
        const [ids] = saved as [tf.Tensor2D];
        const rows = (attrs as { rows: number[] }).rows;
        const grads = tf
          .engine()
          .runKernel<tf.Tensor[]>(EMBED_SUM_GRAD, { dy: dy as tf.Tensor, ids }, { rows });
        const out: Record<string, () => tf.Tensor> = { ids: () => tf.zeros(ids.shape) };
        rows.forEach((_, t) => {
          out[`t${t}`] = () => grads[t] as tf.Tensor;
        });
        return out;
      },
    },
  ];
}

/** The ids as one [k, N] int32 tensor (stacked: a copy, done on the CPU for small CPU-side ids). */
function stackIds(ids: tf.Tensor1D[] | tf.Tensor2D): tf.Tensor2D {
  return Array.isArray(ids) ? (tf.stack(ids) as tf.Tensor2D) : ids;
}

/** embedSum in plain ops: sum_t gather(tables[t], ids[t]). */
export function referenceEmbedSum(
  tables: tf.Tensor2D[],
  ids: tf.Tensor1D[] | tf.Tensor2D,
): tf.Tensor2D {
  return tf.tidy(() => {
    const rows = Array.isArray(ids) ? ids : tf.unstack(ids);
    return tables
      .map((t, i) => tf.gather(t, rows[i] as tf.Tensor1D))
      .reduce((a, b) => tf.add(a, b)) as tf.Tensor2D;
  });
}

export function runEmbedSum(tables: tf.Tensor2D[], ids: tf.Tensor1D[] | tf.Tensor2D): tf.Tensor2D {
  return tf.tidy(() => {
    const stacked = stackIds(ids);
    if (stacked.shape[0] !== tables.length)
      throw new Error(`embedSum: ${tables.length} tables, ${stacked.shape[0]} rows of ids`);
    let out: tf.Tensor2D | null = null;
    for (let s = 0; s < tables.length; s += EMBED_MAX_TABLES) {
      const chunk = tables.slice(s, s + EMBED_MAX_TABLES);
      const chunkIds =
        s === 0 && chunk.length === tables.length
          ? stacked
          : stacked.slice([s, 0], [chunk.length, stacked.shape[1]]);
      const inputs: tf.NamedTensorMap = { ids: chunkIds };
      chunk.forEach((t, i) => {
        inputs[`t${i}`] = t;
      });
      const part = tf
        .engine()
        .runKernel<tf.Tensor2D>(EMBED_SUM, inputs, { rows: chunk.map((t) => t.shape[0]) });
      out = out ? tf.add(out, part) : part;
    }
    return out as tf.Tensor2D;
  });
}
