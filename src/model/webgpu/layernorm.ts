/**
 * Fused layer norm over the last axis of x [N, d] as tfjs WebGPU kernels (one dispatch forward,
 * three backward: dx, dgamma, dbeta), with its gradient, plus the reference in plain tfjs ops
 * (gpt.ts's layerNorm: biased variance, eps inside the square root).
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

export const LAYER_NORM = "LoopLayerNorm";
export const LAYER_NORM_GRAD = "LoopLayerNormGrad";

/** WGSL: mean and 1/sqrt(var + eps) of row n of xIn (two passes, as tf.moments). */
function rowStats(d: number): string {
  return `
    fn rowStats(n : i32) -> vec2<f32> {
      var sum = 0.0;
      for (var j = 0; j < ${d}; j++) { sum += xIn[n * ${d} + j]; }
      let mean = sum / ${d}.0;
      var sq = 0.0;
      for (var j = 0; j < ${d}; j++) { let c = xIn[n * ${d} + j] - mean; sq += c * c; }
      return vec2<f32>(mean, inverseSqrt(sq / ${d}.0 + uniforms.eps));
    }`;
}

/** One thread per row: y = (x - mean) rstd g + b. */
class LayerNormProgram implements WebGPUProgram {
  variableNames = ["xIn", "gIn", "bIn"];
  outputShape: number[];
  shaderKey: string;
  dispatchLayout = { x: [0] };
  dispatch: [number, number, number];
  workgroupSize: [number, number, number] = [64, 1, 1];
  uniforms = "eps : f32,";
  private readonly d: number;

  constructor(n: number, d: number) {
    this.d = d;
    this.outputShape = [n, d];
    this.dispatch = flatDispatch(n, 64);
    this.shaderKey = `loopLayerNorm_${d}`;
  }

  getUserCode(): string {
    const d = this.d;
    return `
    ${rowStats(d)}
    // y[n, j] = (x[n, j] - mean_n) * rstd_n * g[j] + b[j].
    ${MAIN} {
      if (index < uniforms.xInShape.x) {
        let st = rowStats(index);
        for (var j = 0; j < ${d}; j++) {
          let o = index * ${d} + j;
          result[o] = (xIn[o] - st.x) * st.y * gIn[j] + bIn[j];
        }
      }
    }`;
  }
}

/** One thread per row: dx = rstd (dxh - mean(dxh) - xh mean(dxh xh)), dxh = dy g, xh normalised x. */
class LayerNormDxProgram implements WebGPUProgram {
  variableNames = ["xIn", "gIn", "dyIn"];
  outputShape: number[];
  shaderKey: string;
  dispatchLayout = { x: [0] };
  dispatch: [number, number, number];
  workgroupSize: [number, number, number] = [64, 1, 1];
  uniforms = "eps : f32,";
  private readonly d: number;

  constructor(n: number, d: number) {
    this.d = d;
    this.outputShape = [n, d];
    this.dispatch = flatDispatch(n, 64);
    this.shaderKey = `loopLayerNormDx_${d}`;
  }

  getUserCode(): string {
    const d = this.d;
    return `
    ${rowStats(d)}
    // dx = rstd * (dy g - mean_j(dy g) - xh * mean_j(dy g xh)).
    ${MAIN} {
      if (index < uniforms.xInShape.x) {
        let st = rowStats(index);
        var s1 = 0.0;
        var s2 = 0.0;
        for (var j = 0; j < ${d}; j++) {
          let o = index * ${d} + j;
          let g = dyIn[o] * gIn[j];
          s1 += g;
          s2 += g * (xIn[o] - st.x) * st.y;
        }
        s1 = s1 / ${d}.0;
        s2 = s2 / ${d}.0;
        for (var j = 0; j < ${d}; j++) {
          let o = index * ${d} + j;
          let xh = (xIn[o] - st.x) * st.y;
          result[o] = st.y * (dyIn[o] * gIn[j] - s1 - xh * s2);
        }
      }
    }`;
  }
}

const GB_THREADS = 64;

/**
 * One workgroup: dgamma_j = sum_n dy[n, j] xh[n, j] (or dbeta_j = sum_n dy[n, j]); row stats for 64
 * rows at a time are computed cooperatively (one thread per row) into workgroup memory.
 */
class LayerNormGBProgram implements WebGPUProgram {
  variableNames: string[];
  outputShape: number[];
  shaderKey: string;
  dispatchLayout = { x: [0] };
  dispatch: [number, number, number] = [1, 1, 1];
  workgroupSize: [number, number, number] = [GB_THREADS, 1, 1];
  uniforms = "eps : f32,";
  private readonly d: number;
  private readonly beta: boolean;

  constructor(d: number, beta: boolean) {
    this.d = d;
    this.beta = beta;
    // Every binding must be read by the shader ('auto' layout): dbeta takes dy only.
    this.variableNames = beta ? ["dyIn"] : ["xIn", "dyIn"];
    this.outputShape = [d];
    this.shaderKey = `loopLayerNorm${beta ? "Db" : "Dg"}_${d}`;
  }

  getUserCode(): string {
    const { d, beta } = this;
    const W = GB_THREADS;
    const cols = Math.ceil(d / W);
    if (beta)
      return `
    // dbeta[j] = sum_n dy[n, j].
    ${MAIN} {
      let N = uniforms.dyInShape.x;
      let li = i32(localIndex);
      for (var t = 0; t < ${cols}; t++) {
        let j = li + t * ${W};
        if (j < ${d}) {
          var s = 0.0;
          for (var n = 0; n < N; n++) { s += dyIn[n * ${d} + j]; }
          result[j] = s;
        }
      }
    }`;
    return `
    ${rowStats(d)}
    var<workgroup> stats : array<vec2<f32>, ${W}>;
    // dgamma[j] = sum_n dy[n, j] (x[n, j] - mean_n) rstd_n.
    ${MAIN} {
      let N = uniforms.xInShape.x;
      let li = i32(localIndex);
      var acc : array<f32, ${cols}>;
      for (var t = 0; t < ${cols}; t++) { acc[t] = 0.0; }
      let tiles = (N + ${W} - 1) / ${W};
      for (var tile = 0; tile < tiles; tile++) {
        workgroupBarrier();
        let r = tile * ${W} + li;
        if (r < N) { stats[li] = rowStats(r); }
        workgroupBarrier();
        for (var t = 0; t < ${cols}; t++) {
          let j = li + t * ${W};
          if (j < ${d}) {
            var a = acc[t];
            for (var rr = 0; rr < ${W}; rr++) {
              let n = tile * ${W} + rr;
              if (n < N) {
                let st = stats[rr];
                a += dyIn[n * ${d} + j] * (xIn[n * ${d} + j] - st.x) * st.y;
              }
            }
            acc[t] = a;
          }
        }
      }
      for (var t = 0; t < ${cols}; t++) {
        let j = li + t * ${W};
        if (j < ${d}) { result[j] = acc[t]; }
      }
    }`;
  }
}

function epsUniform(args: KernelArgs) {
  return [{ type: "float32" as const, data: [(args.attrs?.eps as number | undefined) ?? 1e-5] }];
}

function layerNormKernel(args: KernelArgs): tf.TensorInfo {
  const backend = webgpuBackend(args);
  const x = input(args, "x");
  const g = input(args, "gamma");
  const b = input(args, "beta");
  const [n, d] = x.shape as [number, number];
  assertShape("layerNorm x", x.shape, [n, d]);
  assertShape("layerNorm gamma", g.shape, [d]);
  assertShape("layerNorm beta", b.shape, [d]);
  return backend.runWebGPUProgram(
    new LayerNormProgram(n, d),
    [x, g, b],
    "float32",
    epsUniform(args),
  );
}

function layerNormGradKernel(args: KernelArgs): tf.TensorInfo[] {
  const backend = webgpuBackend(args);
  const x = input(args, "x");
  const g = input(args, "gamma");
  const dy = input(args, "dy");
  const [n, d] = x.shape as [number, number];
  const u = epsUniform(args);
  return [
    backend.runWebGPUProgram(new LayerNormDxProgram(n, d), [x, g, dy], "float32", u),
    backend.runWebGPUProgram(new LayerNormGBProgram(d, false), [x, dy], "float32", u),
    backend.runWebGPUProgram(new LayerNormGBProgram(d, true), [dy], "float32", u),
  ];
}

export function layerNormKernelConfigs(): tf.KernelConfig[] {
  return [
    { kernelName: LAYER_NORM, backendName: "webgpu", kernelFunc: layerNormKernel },
    { kernelName: LAYER_NORM_GRAD, backendName: "webgpu", kernelFunc: layerNormGradKernel },
  ];
}

export function layerNormGradConfigs(): tf.GradConfig[] {
  return [
    {
      kernelName: LAYER_NORM,
      inputsToSave: ["x", "gamma"],
      gradFunc: (dy, saved, attrs) => {
        const [x, gamma] = saved as [tf.Tensor, tf.Tensor];
        const [dx, dg, db] = tf
          .engine()
          .runKernel<tf.Tensor[]>(
            LAYER_NORM_GRAD,
            { x, gamma, dy: dy as tf.Tensor },
            attrs as tf.NamedAttrMap,
          ) as [tf.Tensor, tf.Tensor, tf.Tensor];
        return { x: () => dx, gamma: () => dg, beta: () => db };
      },
    },
  ];
}

/** gpt.ts's layer norm in plain ops. */
export function referenceLayerNorm(
  x: tf.Tensor2D,
  gamma: tf.Tensor1D,
  beta: tf.Tensor1D,
  eps = 1e-5,
): tf.Tensor2D {
  return tf.tidy(() => {
    const { mean, variance } = tf.moments(x, -1, true);
    return x.sub(mean).div(variance.add(eps).sqrt()).mul(gamma).add(beta) as tf.Tensor2D;
  });
}

export function runLayerNorm(
  x: tf.Tensor2D,
  gamma: tf.Tensor1D,
  beta: tf.Tensor1D,
  eps = 1e-5,
): tf.Tensor2D {
  return tf.engine().runKernel<tf.Tensor2D>(LAYER_NORM, { x, gamma, beta }, { eps });
}
