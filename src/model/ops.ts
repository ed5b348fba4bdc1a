import * as tf from "@tensorflow/tfjs";

/**
 * Tensor ops that keep every backend on its fast path. tfjs-wasm hands a matmul to XNNPACK only
 * when it is 2-D with no transposed operand and batch 1; a transposed or batched one falls to a
 * scalar loop 5-10x slower (../docs/model.md "Performance"). So on wasm every matmul here, and its
 * gradient, is a plain 2-D product of explicitly transposed operands; elsewhere the stock ops.
 */

/** Whether the current backend wants explicit transposes (its transposed matmul is slow). */
export function explicitTransposes(): boolean {
  return tf.getBackend() === "wasm";
}

/** x [.., M, K] with its last two axes swapped (an explicit transpose). */
function swapLast(x: tf.Tensor): tf.Tensor {
  const perm = x.shape.map((_, i) => i);
  const n = perm.length;
  [perm[n - 2], perm[n - 1]] = [perm[n - 1] as number, perm[n - 2] as number];
  return tf.transpose(x, perm);
}

/** tf.matMul, with each transposed operand transposed explicitly first on such backends. */
function product(a: tf.Tensor, b: tf.Tensor, transposeA: boolean, transposeB: boolean): tf.Tensor {
  const single = (x: tf.Tensor) => x.rank === 2 || (x.rank === 3 && x.shape[0] === 1);
  if (!explicitTransposes() || !single(a) || !single(b))
    return tf.matMul(a, b, transposeA, transposeB);
  return tf.matMul(transposeA ? swapLast(a) : a, transposeB ? swapLast(b) : b);
}

let gradientInstalled = false;

/**
 * tfjs clones every tensor a gradient saves (Identity), and tfjs-wasm's Identity copies the data
 * (cpu and webgl share it): 700 copies, 7% of a training step. Tensors are immutable, so on wasm
 * Identity shares its input's buffer by reference count, as tfjs-wasm's own Reshape does.
 */
function shareIdentityOnWasm(): void {
  const stock = tf.getKernel("Identity", "wasm");
  if (stock === undefined) return;
  tf.unregisterKernel("Identity", "wasm");
  tf.registerKernel({
    kernelName: "Identity",
    backendName: "wasm",
    kernelFunc: ({ inputs, backend }) => {
      const x = inputs.x as tf.TensorInfo;
      if (x.dtype === "string") return stock.kernelFunc({ inputs, backend, attrs: {} });
      (backend as unknown as { incRef(id: tf.DataId): void }).incRef(x.dataId);
      return { dataId: x.dataId, shape: x.shape, dtype: x.dtype };
    },
  });
}

/**
 * Replaces tfjs's BatchMatMul gradient with the same products, each transposed operand transposed
 * explicitly where the backend's transposed matmul is slow (wasm, batch 1: every 2-D product the
 * model runs): C = A B gives dA = dC B^T, dB = A^T dC (and the three transposed cases likewise).
 * Elsewhere it is tfjs's own gradient. Idempotent.
 */
export function installMatMulGradient(): void {
  if (gradientInstalled) return;
  gradientInstalled = true;
  shareIdentityOnWasm();
  tf.registerGradient({
    kernelName: "BatchMatMul",
    inputsToSave: ["a", "b"],
    gradFunc: (dy: tf.Tensor | tf.Tensor[], saved: tf.Tensor[], attrs?: tf.NamedAttrMap) => {
      const g = dy as tf.Tensor;
      const [a, b] = saved as [tf.Tensor, tf.Tensor];
      const { transposeA, transposeB } = (attrs ?? {}) as {
        transposeA?: boolean;
        transposeB?: boolean;
      };
      if (!transposeA && !transposeB)
        return { a: () => product(g, b, false, true), b: () => product(a, g, true, false) };
      if (!transposeA && transposeB)
        return { a: () => product(g, b, false, false), b: () => product(g, a, true, false) };
      if (transposeA && !transposeB)
        return { a: () => product(b, g, false, true), b: () => product(a, g, false, false) };
      return { a: () => product(b, g, true, true), b: () => product(g, a, true, true) };
    },
  });
}

/** a [M, K] x b [K, N] -> [M, N], forward and backward on the backend's fast path. */
export function mm(a: tf.Tensor2D, b: tf.Tensor2D): tf.Tensor2D {
  installMatMulGradient();
  return tf.matMul(a, b);
}

/** a [M, K] x b^T, b [N, K] -> [M, N] (attention scores, the tied head). */
export function mmT(a: tf.Tensor2D, b: tf.Tensor2D): tf.Tensor2D {
  installMatMulGradient();
  return explicitTransposes() ? tf.matMul(a, tf.transpose(b)) : tf.matMul(a, b, false, true);
}

/**
 * log sum_j exp(x_ij) over the last axis of [N, M] -> [N], with the softmax as its gradient
 * (d lse / d x = softmax(x)); stock logSumExp's gradient goes through max and broadcast masks.
 */
export const logSumExpRows = tf.customGrad(((x: tf.Tensor2D, save: tf.GradSaveFunc) => {
  const max = tf.max(x, 1, true);
  const value = tf.log(tf.sum(tf.exp(tf.sub(x, max)), 1)).add(max.reshape([-1]));
  save([x, value]);
  return {
    value,
    gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
      const [sx, sv] = saved as [tf.Tensor2D, tf.Tensor1D];
      return [tf.exp(tf.sub(sx, sv.reshape([-1, 1]))).mul(dy.reshape([-1, 1]))];
    },
  };
}) as unknown as Parameters<typeof tf.customGrad>[0]) as unknown as (x: tf.Tensor2D) => tf.Tensor1D;

/**
 * Rows `ids` of `table` [rows, d] -> [N, d]: a gather whose gradient is a scatter-add of dy into
 * the rows (tf.scatterND sums duplicate indices). wasm has no UnsortedSegmentSum (gather's own
 * gradient) and cpu's loops over segments. 4096 ids into a [1479, 64] table on wasm, forward and
 * backward: 9 ms, against 341 ms for a one-hot matmul.
 */
export function gatherRows(table: tf.Tensor2D, ids: tf.Tensor1D, rows: number): tf.Tensor2D {
  const [, d] = table.shape;
  // The ids are saved (kept past the caller's tidy scope, which ends before the backward pass).
  const f = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
    const t = args[0] as tf.Tensor2D;
    const save = args[1] as tf.GradSaveFunc;
    save([ids]);
    return {
      value: tf.gather(t, ids) as tf.Tensor2D,
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) =>
        tf.scatterND((saved[0] as tf.Tensor).reshape([-1, 1]), dy, [rows, d]),
    };
  });
  return f(table) as tf.Tensor2D;
}

/** x[i, cols[i]] for each row of x [N, M] -> [N] (a gather; its gradient a scatter). */
export function pickColumns(x: tf.Tensor2D, cols: Int32Array): tf.Tensor1D {
  const [N, M] = x.shape;
  const flat = new Int32Array(N);
  for (let i = 0; i < N; i++) flat[i] = i * M + (cols[i] as number);
  return gatherRows(x.reshape([N * M, 1]), tf.tensor1d(flat, "int32"), N * M).reshape([N]);
}

/**
 * values [N] placed at flat positions `at` of a zero vector of `size` (a scatter; its gradient a
 * gather): what a computation on selected positions gives back to the whole batch.
 */
export function placeAt(values: tf.Tensor1D, at: Int32Array, size: number): tf.Tensor1D {
  const idx = tf.tensor1d(at, "int32");
  const f = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
    const v = args[0] as tf.Tensor1D;
    const save = args[1] as tf.GradSaveFunc;
    save([idx]);
    return {
      value: tf.scatterND(idx.reshape([-1, 1]), v, [size]) as tf.Tensor1D,
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => tf.gather(dy, saved[0] as tf.Tensor),
    };
  });
  return f(values) as tf.Tensor1D;
}

/** x with no gradient flowing back through it (a fixed feature of the computation). */
export const stopGradient = tf.customGrad(((x: tf.Tensor) => ({
  value: tf.clone(x),
  gradFunc: () => [tf.zerosLike(x)],
})) as unknown as Parameters<typeof tf.customGrad>[0]) as unknown as <T extends tf.Tensor>(
  x: T,
) => T;
