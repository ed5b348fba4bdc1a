/**
 * Fused y = GELU(x W + b) (tanh approximation, as gpt.ts's gelu) as a tfjs WebGPU kernel: one
 * dispatch forward (a 16x16-tiled matmul with bias and GELU in its epilogue), four backward:
 * dz = dy * GELU'(x W + b) by the same tiled program (z recomputed, not stored), then tfjs's own
 * dx = dz W^T, dW = x^T dz, and db = sum_n dz by linear.ts's column sum. Plus the reference in
 * plain tfjs ops.
 */
import * as tf from "@tensorflow/tfjs";
import {
  assertShape,
  input,
  type KernelArgs,
  MAIN,
  type WebGPUProgram,
  WORKGROUP_LINEAR,
  webgpuBackend,
} from "./common";
import { runColumnSum } from "./linear";

export const MATMUL_BIAS_GELU = "LoopMatMulBiasGelu";
export const MATMUL_BIAS_GELU_DZ = "LoopMatMulBiasGeluDz";

const TILE = 16;

/** WGSL: gelu(z) and gelu'(z), tanh approximation (tanh argument clamped: tanh(15) is 1 in f32). */
const GELU_FNS = `
    fn geluInner(z : f32) -> f32 {
      return clamp(0.7978845608028654 * (z + 0.044715 * z * z * z), -15.0, 15.0);
    }
    fn gelu(z : f32) -> f32 {
      return 0.5 * z * (1.0 + tanh(geluInner(z)));
    }
    fn geluGrad(z : f32) -> f32 {
      let t = tanh(geluInner(z));
      return 0.5 * (1.0 + t) + 0.5 * z * (1.0 - t * t) * 0.7978845608028654 * (1.0 + 0.134145 * z * z);
    }`;

/** 16x16 output tile per workgroup, one output per thread; epilogue gelu(acc + b) or dy gelu'(acc + b). */
class MatMulBiasGeluProgram implements WebGPUProgram {
  variableNames: string[];
  outputShape: number[];
  shaderKey: string;
  dispatchLayout = { x: [0] };
  dispatch: [number, number, number];
  workgroupSize: [number, number, number] = [TILE * TILE, 1, 1];
  private readonly dz: boolean;

  constructor(n: number, m: number, dz: boolean) {
    this.dz = dz;
    this.variableNames = dz ? ["xIn", "wIn", "bIn", "dyIn"] : ["xIn", "wIn", "bIn"];
    this.outputShape = [n, m];
    this.dispatch = [Math.ceil(n / TILE) * Math.ceil(m / TILE), 1, 1];
    this.shaderKey = `loopMatMulBiasGelu_${dz}`;
  }

  getUserCode(): string {
    const T = TILE;
    return `
    ${GELU_FNS}
    var<workgroup> aTile : array<f32, ${T * T}>;
    var<workgroup> bTile : array<f32, ${T * T}>;

    // z = x W + b; ${this.dz ? "result = dy * gelu'(z)" : "result = gelu(z)"}.
    ${MAIN} {
      let N = uniforms.xInShape.x;
      let K = uniforms.xInShape.y;
      let M = uniforms.wInShape.y;
      let tilesM = (M + ${T - 1}) / ${T};
      let wg = ${WORKGROUP_LINEAR};
      let tn = wg / tilesM;
      let tm = wg - tn * tilesM;
      let li = i32(localIndex);
      let ly = li / ${T};
      let lx = li - ly * ${T};
      let n = tn * ${T} + ly;
      let m = tm * ${T} + lx;
      var acc = 0.0;
      let kTiles = (K + ${T - 1}) / ${T};
      for (var kt = 0; kt < kTiles; kt++) {
        let ka = kt * ${T} + lx;
        var av = 0.0;
        if (n < N && ka < K) { av = xIn[n * K + ka]; }
        aTile[li] = av;
        let kb = kt * ${T} + ly;
        var bv = 0.0;
        if (kb < K && m < M) { bv = wIn[kb * M + m]; }
        bTile[li] = bv;
        workgroupBarrier();
        for (var kk = 0; kk < ${T}; kk++) { acc += aTile[ly * ${T} + kk] * bTile[kk * ${T} + lx]; }
        workgroupBarrier();
      }
      if (n < N && m < M) {
        let z = acc + bIn[m];
        ${this.dz ? "result[n * M + m] = dyIn[n * M + m] * geluGrad(z);" : "result[n * M + m] = gelu(z);"}
      }
    }`;
  }
}

function dims(args: KernelArgs) {
  const x = input(args, "x");
  const w = input(args, "w");
  const b = input(args, "b");
  const [n, k] = x.shape as [number, number];
  const m = w.shape[1] as number;
  assertShape("matMulBiasGelu x", x.shape, [n, k]);
  assertShape("matMulBiasGelu w", w.shape, [k, m]);
  assertShape("matMulBiasGelu b", b.shape, [m]);
  return { x, w, b, n, m };
}

function forwardKernel(args: KernelArgs): tf.TensorInfo {
  const { x, w, b, n, m } = dims(args);
  return webgpuBackend(args).runWebGPUProgram(
    new MatMulBiasGeluProgram(n, m, false),
    [x, w, b],
    "float32",
  );
}

function dzKernel(args: KernelArgs): tf.TensorInfo {
  const { x, w, b, n, m } = dims(args);
  const dy = input(args, "dy");
  assertShape("matMulBiasGelu dy", dy.shape, [n, m]);
  return webgpuBackend(args).runWebGPUProgram(
    new MatMulBiasGeluProgram(n, m, true),
    [x, w, b, dy],
    "float32",
  );
}

export function geluKernelConfigs(): tf.KernelConfig[] {
  return [
    { kernelName: MATMUL_BIAS_GELU, backendName: "webgpu", kernelFunc: forwardKernel },
    { kernelName: MATMUL_BIAS_GELU_DZ, backendName: "webgpu", kernelFunc: dzKernel },
  ];
}

export function geluGradConfigs(): tf.GradConfig[] {
  return [
    {
      kernelName: MATMUL_BIAS_GELU,
      inputsToSave: ["x", "w", "b"],
      gradFunc: (dy, saved) => {
        const [x, w, b] = saved as [tf.Tensor2D, tf.Tensor2D, tf.Tensor1D];
        const dz = tf
          .engine()
          .runKernel<tf.Tensor2D>(MATMUL_BIAS_GELU_DZ, { x, w, b, dy: dy as tf.Tensor });
        return {
          x: () => tf.matMul(dz, w, false, true),
          w: () => tf.matMul(x, dz, true, false),
          b: () => runColumnSum(dz),
        };
      },
    },
  ];
}

/** gelu(x W + b) in plain ops, as gpt.ts (mm, add, gelu). */
export function referenceMatMulBiasGelu(
  x: tf.Tensor2D,
  w: tf.Tensor2D,
  b: tf.Tensor1D,
): tf.Tensor2D {
  return tf.tidy(() => {
    const z = tf.matMul(x, w).add(b);
    const inner = z.add(z.pow(3).mul(0.044715)).mul(Math.sqrt(2 / Math.PI));
    return z.mul(0.5).mul(inner.tanh().add(1)) as tf.Tensor2D;
  });
}

export function runMatMulBiasGelu(x: tf.Tensor2D, w: tf.Tensor2D, b: tf.Tensor1D): tf.Tensor2D {
  return tf.engine().runKernel<tf.Tensor2D>(MATMUL_BIAS_GELU, { x, w, b });
}
