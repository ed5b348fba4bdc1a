/**
 * y = x W + b as one dispatch on webgpu (tfjs's packed matmul with the bias in its epilogue,
 * tf.fused.matMul), with a gradient of three: dx = dy W^T, dW = x^T dy (tfjs's transposed
 * products, no explicit transpose on a GPU) and db = sum_n dy by LoopColumnSum, one dispatch
 * (tfjs's sum over axis 0 transposes first: two). Plus the reference in plain tfjs ops.
 */
import * as tf from "@tensorflow/tfjs";
import { mm } from "../ops";
import {
  assertShape,
  flatDispatch,
  input,
  type KernelArgs,
  MAIN,
  type WebGPUProgram,
  webgpuBackend,
} from "./common";

export const COLUMN_SUM = "LoopColumnSum";

const THREADS = 64;

/** result[m] = sum_n x[n, m]: one thread per column, reading rows in order (coalesced across threads). */
class ColumnSumProgram implements WebGPUProgram {
  variableNames = ["xIn"];
  outputShape: number[];
  shaderKey = "loopColumnSum";
  dispatchLayout = { x: [0] };
  dispatch: [number, number, number];
  workgroupSize: [number, number, number] = [THREADS, 1, 1];

  constructor(m: number) {
    this.outputShape = [m];
    this.dispatch = flatDispatch(m, THREADS);
  }

  getUserCode(): string {
    return `
    ${MAIN} {
      let N = uniforms.xInShape.x;
      let M = uniforms.xInShape.y;
      if (index < M) {
        var acc = 0.0;
        for (var n = 0; n < N; n++) { acc += xIn[n * M + index]; }
        result[index] = acc;
      }
    }`;
  }
}

function columnSumKernel(args: KernelArgs): tf.TensorInfo {
  const x = input(args, "x");
  assertShape("columnSum x", x.shape, [null, null]);
  return webgpuBackend(args).runWebGPUProgram(
    new ColumnSumProgram(x.shape[1] as number),
    [x],
    "float32",
  );
}

export function linearKernelConfigs(): tf.KernelConfig[] {
  return [{ kernelName: COLUMN_SUM, backendName: "webgpu", kernelFunc: columnSumKernel }];
}

/** sum_n x[n, :] of x [N, M] -> [M] (webgpu, one dispatch). */
export function runColumnSum(x: tf.Tensor2D): tf.Tensor1D {
  return tf.engine().runKernel<tf.Tensor1D>(COLUMN_SUM, { x });
}

/** x W + b with the gradient above (webgpu). */
export function runLinear(x: tf.Tensor2D, w: tf.Tensor2D, b: tf.Tensor1D): tf.Tensor2D {
  const f = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
    const [xx, ww, bb] = args as [tf.Tensor2D, tf.Tensor2D, tf.Tensor1D];
    const save = args[3] as tf.GradSaveFunc;
    save([xx, ww]);
    return {
      value: tf.fused.matMul({ a: xx, b: ww, bias: bb }),
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
        const [sx, sw] = saved as [tf.Tensor2D, tf.Tensor2D];
        const g = dy as tf.Tensor2D;
        return [tf.matMul(g, sw, false, true), tf.matMul(sx, g, true, false), runColumnSum(g)];
      },
    };
  });
  return f(x, w, b) as tf.Tensor2D;
}

/** x W + b in plain ops (on the backend's fast path: ops.ts's mm). */
export function referenceLinear(x: tf.Tensor2D, w: tf.Tensor2D, b: tf.Tensor1D): tf.Tensor2D {
  return mm(x, w).add(b);
}
