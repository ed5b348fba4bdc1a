/**
 * One decoding step (one new token per row, keys cached) as two tfjs WebGPU kernels, each several
 * small dispatches behind one kernel call (one entry in tf.profile), no gradient (decoding only):
 *
 * - decodeLayer: a whole pre-norm block for x [B, d]: LN1 and the QKV product (1 dispatch), the new
 *   key and value appended to the cached ones (2: [B, H, P, hd] -> [B, H, P + 1, hd]), attention of
 *   each row's query over its keys straight from the packed QKV row into the merged [B, d] layout
 *   (1), W_o + bias + residual (1), LN2 + W_1 + bias + GELU (1), W_2 + bias + residual (1): 7
 *   dispatches where the stock ops take ~45 kernels. Returns [x', k, v].
 * - copyDecodeHead: the tied vocabulary head and the copy head of gpt.ts forward() at one query per
 *   row (copyHead + copyContinue + copyTarget): vocabulary logits, copy query, copy keys appended,
 *   the copied-token term per token, the continuation prior and the masked scores (7 dispatches).
 *
 * The row programs (RowLinearProgram) run one workgroup per row: the row (layer-normed when asked)
 * in workgroup memory, threads over the output columns. References in plain tfjs ops below.
 */
import * as tf from "@tensorflow/tfjs";
import {
  assertShape,
  input,
  type KernelArgs,
  MAIN,
  NEG,
  type WebGPUProgram,
  WORKGROUP_LINEAR,
  webgpuBackend,
} from "./common";

export const DECODE_LAYER = "LoopDecodeLayer";
export const COPY_DECODE_HEAD = "LoopCopyDecodeHead";

const ROW_THREADS = 64;

const GELU = `
    fn geluRow(z : f32) -> f32 {
      let inner = clamp(0.7978845608028654 * (z + 0.044715 * z * z * z), -15.0, 15.0);
      return 0.5 * z * (1.0 + tanh(inner));
    }`;

interface RowLinearOptions {
  /** Layer-norm the row first (inputs gIn, bnIn after xIn). */
  ln?: boolean;
  /** W given as [M, K] (x W^T, e.g. a tied embedding). */
  transposed?: boolean;
  bias?: boolean;
  gelu?: boolean;
  /** Add rIn [N, M] (a residual). */
  residual?: boolean;
}

/** result[n, :] = act(LN?(x[n]) W + b) + r[n]: x [N, K], W [K, M] (or [M, K] transposed). */
class RowLinearProgram implements WebGPUProgram {
  variableNames: string[];
  outputShape: number[];
  shaderKey: string;
  dispatchLayout = { x: [0] };
  dispatch: [number, number, number];
  workgroupSize: [number, number, number] = [ROW_THREADS, 1, 1];
  private readonly o: RowLinearOptions;
  private readonly K: number;

  constructor(n: number, k: number, m: number, o: RowLinearOptions, outShape?: number[]) {
    this.o = o;
    this.K = k;
    this.variableNames = [
      "xIn",
      ...(o.ln ? ["gIn", "bnIn"] : []),
      "wIn",
      ...(o.bias ? ["bIn"] : []),
      ...(o.residual ? ["rIn"] : []),
    ];
    this.outputShape = outShape ?? [n, m];
    this.dispatch = [n, 1, 1];
    this.shaderKey = `loopRowLinear_${k}_${m}_${!!o.ln}_${!!o.transposed}_${!!o.bias}_${!!o.gelu}_${!!o.residual}`;
  }

  getUserCode(): string {
    const { o, K } = this;
    const W = ROW_THREADS;
    const M = this.outputShape.reduce((a, b) => a * b, 1) / (this.dispatch[0] as number);
    const wAt = o.transposed ? `wIn[i * ${K} + k]` : `wIn[k * ${M} + i]`;
    return `
    ${GELU}
    var<workgroup> xs : array<f32, ${K}>;
    var<workgroup> stats : array<f32, 2>;
    ${MAIN} {
      let n = ${WORKGROUP_LINEAR};
      let li = i32(localIndex);
      for (var k = li; k < ${K}; k += ${W}) { xs[k] = xIn[n * ${K} + k]; }
      workgroupBarrier();
      ${
        o.ln
          ? `if (li == 0) {
        var mean = 0.0;
        for (var k = 0; k < ${K}; k++) { mean += xs[k]; }
        mean = mean / f32(${K});
        var v = 0.0;
        for (var k = 0; k < ${K}; k++) { let c = xs[k] - mean; v += c * c; }
        stats[0] = mean;
        stats[1] = inverseSqrt(v / f32(${K}) + 1e-5);
      }
      workgroupBarrier();
      let mean = stats[0];
      let rstd = stats[1];
      workgroupBarrier();
      for (var k = li; k < ${K}; k += ${W}) { xs[k] = (xs[k] - mean) * rstd * gIn[k] + bnIn[k]; }
      workgroupBarrier();`
          : ""
      }
      for (var i = li; i < ${M}; i += ${W}) {
        var acc = 0.0;
        for (var k = 0; k < ${K}; k++) { acc += xs[k] * ${wAt}; }
        ${o.bias ? "acc += bIn[i];" : ""}
        ${o.gelu ? "acc = geluRow(acc);" : ""}
        ${o.residual ? `acc += rIn[n * ${M} + i];` : ""}
        if (n < uniforms.xInShape.x) { result[n * ${M} + i] = acc; }
      }
    }`;
  }
}

/**
 * [B, G, P, e] cached rows + one new row per (b, g) -> [B, G, P + 1, e]: the new row of group g is
 * src[b, offset + g * e .. + e] (src [B, width]).
 */
class AppendRowProgram implements WebGPUProgram {
  variableNames = ["pastIn", "srcIn"];
  outputShape: number[];
  shaderKey = "loopAppendRow";
  dispatchLayout = { x: [0] };
  dispatch: [number, number, number];
  workgroupSize: [number, number, number] = [64, 1, 1];
  uniforms = "G : i32, P : i32, E : i32, width : i32, offset : i32, total : i32,";

  constructor(b: number, g: number, p: number, e: number) {
    this.outputShape = [b, g, p + 1, e];
    const n = b * g * (p + 1) * e;
    this.dispatch = [Math.ceil(n / 64), 1, 1];
  }

  getUserCode(): string {
    return `
    ${MAIN} {
      if (index >= uniforms.total) { return; }
      let E = uniforms.E;
      let S = uniforms.P + 1;
      let e = index % E;
      let s = (index / E) % S;
      let bg = index / (E * S);
      let g = bg % uniforms.G;
      let b = bg / uniforms.G;
      if (s < uniforms.P) {
        result[index] = pastIn[(bg * uniforms.P + s) * E + e];
      } else {
        result[index] = srcIn[b * uniforms.width + uniforms.offset + g * E + e];
      }
    }`;
  }
}

/**
 * Attention of one query per (row, head) over [B, H, S, hd] keys and values, the query read from
 * the packed QKV row [B, 3d] and the output written merged, [B, d]. Masked keys (mask 0) skipped;
 * a row with none gives 0.
 */
class RowAttentionProgram implements WebGPUProgram {
  variableNames = ["qkvIn", "kIn", "vIn", "maskIn"];
  outputShape: number[];
  shaderKey: string;
  dispatchLayout = { x: [0] };
  dispatch: [number, number, number];
  workgroupSize: [number, number, number] = [ROW_THREADS, 1, 1];
  uniforms = "scale : f32,";
  private readonly H: number;
  private readonly hd: number;

  constructor(b: number, h: number, hd: number) {
    this.H = h;
    this.hd = hd;
    this.outputShape = [b, h * hd];
    this.dispatch = [b * h, 1, 1];
    this.shaderKey = `loopRowAttention_${h}_${hd}`;
  }

  getUserCode(): string {
    const { H, hd } = this;
    const d = H * hd;
    const W = ROW_THREADS;
    return `
    var<workgroup> qs : array<f32, ${hd}>;
    var<workgroup> ms : array<f32, ${W}>;
    var<workgroup> ls : array<f32, ${W}>;
    var<workgroup> accs : array<f32, ${W * hd}>;
    ${MAIN} {
      let bh = ${WORKGROUP_LINEAR};
      let b = bh / ${H};
      let h = bh - b * ${H};
      let li = i32(localIndex);
      let S = uniforms.kInShape.z;
      for (var e = li; e < ${hd}; e += ${W}) { qs[e] = qkvIn[b * ${3 * d} + h * ${hd} + e] * uniforms.scale; }
      workgroupBarrier();
      var m = ${NEG};
      var l = 0.0;
      var acc : array<f32, ${hd}>;
      for (var e = 0; e < ${hd}; e++) { acc[e] = 0.0; }
      for (var j = li; j < S; j += ${W}) {
        if (maskIn[b * S + j] > 0.5) {
          let kb = (bh * S + j) * ${hd};
          var s = 0.0;
          for (var e = 0; e < ${hd}; e++) { s += qs[e] * kIn[kb + e]; }
          let mNew = max(m, s);
          let corr = exp(m - mNew);
          let p = exp(s - mNew);
          l = l * corr + p;
          for (var e = 0; e < ${hd}; e++) { acc[e] = acc[e] * corr + p * vIn[kb + e]; }
          m = mNew;
        }
      }
      ms[li] = m;
      ls[li] = l;
      for (var e = 0; e < ${hd}; e++) { accs[li * ${hd} + e] = acc[e]; }
      workgroupBarrier();
      for (var e = li; e < ${hd}; e += ${W}) {
        var M = ${NEG};
        for (var t = 0; t < ${W}; t++) { M = max(M, ms[t]); }
        var L = 0.0;
        var o = 0.0;
        for (var t = 0; t < ${W}; t++) {
          if (ls[t] > 0.0) {
            let c = exp(ms[t] - M);
            L += c * ls[t];
            o += c * accs[t * ${hd} + e];
          }
        }
        result[b * ${d} + h * ${hd} + e] = select(0.0, o / L, L > 0.0);
      }
    }`;
  }
}

/**
 * The continuation prior times cont * scale, [B, S]: a = softmax of the previous query's content
 * scores over its allowed keys (j < prevKey[b, S - 1], mask 1), read at each key's predecessor
 * (prevKey[b, j]; -1 or a disallowed key: 0). One workgroup per row.
 */
class CopyPriorProgram implements WebGPUProgram {
  variableNames = ["keysIn", "pqIn", "maskIn", "prevIn", "contIn"];
  outputShape: number[];
  shaderKey: string;
  dispatchLayout = { x: [0] };
  dispatch: [number, number, number];
  workgroupSize: [number, number, number] = [ROW_THREADS, 1, 1];
  uniforms = "scale : f32, contScale : f32,";
  private readonly d: number;

  constructor(b: number, s: number, d: number) {
    this.d = d;
    this.outputShape = [b, s];
    this.dispatch = [b, 1, 1];
    this.shaderKey = `loopCopyPrior_${d}`;
  }

  getUserCode(): string {
    const { d } = this;
    const W = ROW_THREADS;
    return `
    var<workgroup> qs : array<f32, ${d}>;
    var<workgroup> red : array<f32, ${W}>;
    fn content(b : i32, j : i32, S : i32) -> f32 {
      var s = 0.0;
      for (var e = 0; e < ${d}; e++) { s += qs[e] * keysIn[(b * S + j) * ${d} + e]; }
      return s * uniforms.scale;
    }
    ${MAIN} {
      let b = ${WORKGROUP_LINEAR};
      let li = i32(localIndex);
      let S = uniforms.outShape.y;
      for (var e = li; e < ${d}; e += ${W}) { qs[e] = pqIn[b * ${d} + e]; }
      let prevIndex = prevIn[b * S + S - 1];
      workgroupBarrier();
      var m = ${NEG};
      for (var j = li; j < S; j += ${W}) {
        if (j < prevIndex && maskIn[b * S + j] > 0.5) { m = max(m, content(b, j, S)); }
      }
      red[li] = m;
      workgroupBarrier();
      for (var stride = ${W / 2}; stride > 0; stride = stride / 2) {
        if (li < stride) { red[li] = max(red[li], red[li + stride]); }
        workgroupBarrier();
      }
      let M = red[0];
      workgroupBarrier();
      var l = 0.0;
      for (var j = li; j < S; j += ${W}) {
        if (j < prevIndex && maskIn[b * S + j] > 0.5) { l += exp(content(b, j, S) - M); }
      }
      red[li] = l;
      workgroupBarrier();
      for (var stride = ${W / 2}; stride > 0; stride = stride / 2) {
        if (li < stride) { red[li] = red[li] + red[li + stride]; }
        workgroupBarrier();
      }
      let L = red[0];
      let c = contIn[0] * uniforms.contScale;
      for (var j = li; j < S; j += ${W}) {
        let p = prevIn[b * S + j];
        var a = 0.0;
        if (p >= 0 && p < prevIndex && maskIn[b * S + p] > 0.5 && L > 0.0) { a = exp(content(b, p, S) - M) / L; }
        result[b * S + j] = a * c;
      }
    }`;
  }
}

/**
 * The copy scores [B, 1, S]: q . k_j * scale + b + prior + targetScale * perToken[b, next_j], and
 * -1e9 added where key j is not earlier than the query (j < S - 1) or masked.
 */
class CopyScoresProgram implements WebGPUProgram {
  variableNames = ["qIn", "keysIn", "maskIn", "priorIn", "nextIn", "tokIn", "cbIn"];
  outputShape: number[];
  shaderKey: string;
  dispatchLayout = { x: [0] };
  dispatch: [number, number, number];
  workgroupSize: [number, number, number] = [64, 1, 1];
  uniforms = "scale : f32, targetScale : f32, V : i32,";
  private readonly d: number;

  constructor(b: number, s: number, d: number) {
    this.d = d;
    this.outputShape = [b, 1, s];
    this.dispatch = [Math.ceil((b * s) / 64), 1, 1];
    this.shaderKey = `loopCopyScores_${d}`;
  }

  getUserCode(): string {
    const { d } = this;
    return `
    ${MAIN} {
      let S = uniforms.outShape.z;
      if (index >= uniforms.outShape.x * S) { return; }
      let b = index / S;
      let j = index - b * S;
      var s = 0.0;
      for (var e = 0; e < ${d}; e++) { s += qIn[b * ${d} + e] * keysIn[index * ${d} + e]; }
      var allowed = 0.0;
      if (j < S - 1) { allowed = maskIn[index]; }
      let y = nextIn[index];
      var term = 0.0;
      if (y >= 0 && y < uniforms.V) { term = tokIn[b * uniforms.V + y]; }
      result[index] = s * uniforms.scale + cbIn[0] + (allowed - 1.0) * 1e9 + priorIn[index] + term * uniforms.targetScale;
    }`;
  }
}

/** out[i] = table[ids[i]] (int32), ids outside the table kept. */
class LookupProgram implements WebGPUProgram {
  variableNames = ["tableIn", "idsIn"];
  outputShape: number[];
  shaderKey = "loopLookupInt";
  dispatchLayout = { x: [0] };
  dispatch: [number, number, number];
  workgroupSize: [number, number, number] = [64, 1, 1];
  size = true;

  constructor(shape: number[]) {
    this.outputShape = shape;
    this.dispatch = [Math.ceil(shape.reduce((a, b) => a * b, 1) / 64), 1, 1];
  }

  getUserCode(): string {
    return `
    ${MAIN} {
      if (index < uniforms.size) {
        let y = idsIn[index];
        var o = y;
        if (y >= 0 && y < uniforms.tableInShape) { o = tableIn[y]; }
        setOutputAtIndexI32(index, o);
      }
    }`;
  }
}

function decodeLayerKernel(args: KernelArgs): tf.TensorInfo[] {
  const be = webgpuBackend(args);
  const x = input(args, "x");
  const pastK = input(args, "pastK");
  const pastV = input(args, "pastV");
  const mask = input(args, "keyMask");
  const [B, d] = x.shape as [number, number];
  const [, H, P, hd] = pastK.shape as [number, number, number, number];
  const S = P + 1;
  assertShape("decodeLayer pastV", pastV.shape, [B, H, P, hd]);
  assertShape("decodeLayer keyMask", mask.shape, [B, S]);
  const w = (n: string) => input(args, n);
  const m = w("w1").shape[1] as number;
  const tmp: tf.TensorInfo[] = [];
  const run = (p: WebGPUProgram, ins: tf.TensorInfo[], u?: { type: string; data: number[] }[]) => {
    const out = be.runWebGPUProgram(p, ins, "float32", u as never);
    return out;
  };
  const qkv = run(new RowLinearProgram(B, d, 3 * d, { ln: true, bias: true }), [
    x,
    w("ln1g"),
    w("ln1b"),
    w("wqkv"),
    w("bqkv"),
  ]);
  tmp.push(qkv);
  const append = (past: tf.TensorInfo, which: number) =>
    run(
      new AppendRowProgram(B, H, P, hd),
      [past, qkv],
      [
        { type: "int32", data: [H] },
        { type: "int32", data: [P] },
        { type: "int32", data: [hd] },
        { type: "int32", data: [3 * d] },
        { type: "int32", data: [which * d] },
        { type: "int32", data: [B * H * S * hd] },
      ],
    );
  const k = append(pastK, 1);
  const v = append(pastV, 2);
  const att = run(
    new RowAttentionProgram(B, H, hd),
    [qkv, k, v, mask],
    [{ type: "float32", data: [1 / Math.sqrt(hd)] }],
  );
  tmp.push(att);
  const x1 = run(new RowLinearProgram(B, d, d, { bias: true, residual: true }), [
    att,
    w("wo"),
    w("bo"),
    x,
  ]);
  tmp.push(x1);
  const u = run(new RowLinearProgram(B, d, m, { ln: true, bias: true, gelu: true }), [
    x1,
    w("ln2g"),
    w("ln2b"),
    w("w1"),
    w("b1"),
  ]);
  tmp.push(u);
  const x2 = run(new RowLinearProgram(B, m, d, { bias: true, residual: true }), [
    u,
    w("w2"),
    w("b2"),
    x1,
  ]);
  for (const t of tmp) be.disposeData(t.dataId);
  return [x2, k, v];
}

function copyDecodeHeadKernel(args: KernelArgs): tf.TensorInfo[] {
  const be = webgpuBackend(args);
  const attrs = args.attrs as { contScale: number; targetScale: number };
  const h = input(args, "h");
  const pastKeys = input(args, "pastKeys");
  const mask = input(args, "keyMask");
  const [B, d] = h.shape as [number, number];
  const P = pastKeys.shape[1] as number;
  const S = P + 1;
  assertShape("copyDecodeHead pastKeys", pastKeys.shape, [B, P, d]);
  assertShape("copyDecodeHead keyMask", mask.shape, [B, S]);
  const w = (n: string) => input(args, n);
  const V = w("wte").shape[0] as number;
  const r = w("wc").shape[1] as number;
  const run = (p: WebGPUProgram, ins: tf.TensorInfo[], u?: { type: string; data: number[] }[]) =>
    be.runWebGPUProgram(p, ins, "float32", u as never);
  const logits = run(new RowLinearProgram(B, d, V, { transposed: true }, [B, 1, V]), [h, w("wte")]);
  const q = run(new RowLinearProgram(B, d, d, {}), [h, w("wq")]);
  const kNew = run(new RowLinearProgram(B, d, d, {}), [h, w("wk")]);
  const keys4 = run(
    new AppendRowProgram(B, 1, P, d),
    [pastKeys, kNew],
    [
      { type: "int32", data: [1] },
      { type: "int32", data: [P] },
      { type: "int32", data: [d] },
      { type: "int32", data: [d] },
      { type: "int32", data: [0] },
      { type: "int32", data: [B * S * d] },
    ],
  );
  const qc = run(new RowLinearProgram(B, d, r, {}), [h, w("wc")]);
  const perToken = run(new RowLinearProgram(B, r, V, { transposed: true, bias: true }), [
    qc,
    w("tok"),
    w("tbias"),
  ]);
  const scale = 1 / Math.sqrt(d);
  const prior = run(
    new CopyPriorProgram(B, S, d),
    [keys4, w("pastQuery"), mask, w("prevKey"), w("cont")],
    [
      { type: "float32", data: [scale] },
      { type: "float32", data: [attrs.contScale] },
    ],
  );
  const scores = run(
    new CopyScoresProgram(B, S, d),
    [q, keys4, mask, prior, w("next"), perToken, w("cb")],
    [
      { type: "float32", data: [scale] },
      { type: "float32", data: [attrs.targetScale] },
      { type: "int32", data: [V] },
    ],
  );
  const outs: tf.TensorInfo[] = [logits, scores, { ...keys4, shape: [B, S, d] }, q];
  const emit = args.inputs.emit;
  if (emit) outs.push(be.runWebGPUProgram(new LookupProgram([B, S]), [emit, w("next")], "int32"));
  for (const t of [kNew, qc, perToken, prior]) be.disposeData(t.dataId);
  return outs;
}

export function decodeStepKernelConfigs(): tf.KernelConfig[] {
  return [
    { kernelName: DECODE_LAYER, backendName: "webgpu", kernelFunc: decodeLayerKernel as never },
    {
      kernelName: COPY_DECODE_HEAD,
      backendName: "webgpu",
      kernelFunc: copyDecodeHeadKernel as never,
    },
  ];
}

/** One block's parameters (gpt.ts layerNames order). */
export interface DecodeLayerWeights {
  ln1g: tf.Tensor1D;
  ln1b: tf.Tensor1D;
  wqkv: tf.Tensor2D;
  bqkv: tf.Tensor1D;
  wo: tf.Tensor2D;
  bo: tf.Tensor1D;
  ln2g: tf.Tensor1D;
  ln2b: tf.Tensor1D;
  w1: tf.Tensor2D;
  b1: tf.Tensor1D;
  w2: tf.Tensor2D;
  b2: tf.Tensor1D;
}

export interface DecodeLayerResult {
  x: tf.Tensor2D;
  k: tf.Tensor4D;
  v: tf.Tensor4D;
}

export function runDecodeLayer(
  x: tf.Tensor2D,
  wts: DecodeLayerWeights,
  pastK: tf.Tensor4D,
  pastV: tf.Tensor4D,
  keyMask: tf.Tensor2D,
): DecodeLayerResult {
  const [xo, k, v] = tf
    .engine()
    .runKernel(DECODE_LAYER, { x, ...wts, pastK, pastV, keyMask } as never) as tf.Tensor[];
  return { x: xo as tf.Tensor2D, k: k as tf.Tensor4D, v: v as tf.Tensor4D };
}

/** referenceDecodeLayer in plain ops: the block of gpt.ts for one token per row over a cache. */
export function referenceDecodeLayer(
  x: tf.Tensor2D,
  w: DecodeLayerWeights,
  pastK: tf.Tensor4D,
  pastV: tf.Tensor4D,
  keyMask: tf.Tensor2D,
): DecodeLayerResult {
  return tf.tidy(() => {
    const [B, d] = x.shape;
    const [, H, , hd] = pastK.shape;
    const ln = (t: tf.Tensor2D, g: tf.Tensor1D, b: tf.Tensor1D) => {
      const { mean, variance } = tf.moments(t, -1, true);
      return t.sub(mean).div(variance.add(1e-5).sqrt()).mul(g).add(b) as tf.Tensor2D;
    };
    const qkv = tf.matMul(ln(x, w.ln1g, w.ln1b), w.wqkv).add(w.bqkv) as tf.Tensor2D;
    const [q, kn, vn] = tf.split(qkv, 3, 1) as tf.Tensor2D[];
    const heads = (t: tf.Tensor2D) => t.reshape([B, H, 1, hd]) as tf.Tensor4D;
    const k = tf.concat([pastK, heads(kn as tf.Tensor2D)], 2) as tf.Tensor4D;
    const v = tf.concat([pastV, heads(vn as tf.Tensor2D)], 2) as tf.Tensor4D;
    const S = k.shape[2];
    const s = tf
      .matMul(heads(q as tf.Tensor2D), k, false, true)
      .mul(1 / Math.sqrt(hd))
      .add(keyMask.reshape([B, 1, 1, S]).sub(1).mul(1e9));
    const valid = keyMask.sum(1).greater(0).toFloat().reshape([B, 1, 1, 1]);
    const att = tf.matMul(tf.softmax(s), v).mul(valid).reshape([B, d]) as tf.Tensor2D;
    const x1 = x.add(tf.matMul(att, w.wo).add(w.bo)) as tf.Tensor2D;
    const z = tf.matMul(ln(x1, w.ln2g, w.ln2b), w.w1).add(w.b1);
    const inner = z.add(z.pow(3).mul(0.044715)).mul(Math.sqrt(2 / Math.PI));
    const u = z.mul(0.5).mul(inner.tanh().add(1)) as tf.Tensor2D;
    const x2 = x1.add(tf.matMul(u, w.w2).add(w.b2)) as tf.Tensor2D;
    return { x: x2, k, v };
  });
}

/** The copy head's parameters and decoding state (gpt.ts forward() at one query per row). */
export interface CopyDecodeInputs {
  /** The final hidden state of the new token [B, d]. */
  h: tf.Tensor2D;
  wte: tf.Tensor2D;
  wq: tf.Tensor2D;
  wk: tf.Tensor2D;
  /** copy.b [1] */
  cb: tf.Tensor;
  /** copy.cont [1] */
  cont: tf.Tensor;
  wc: tf.Tensor2D;
  tok: tf.Tensor2D;
  /** copy.bias [V, 1] */
  tbias: tf.Tensor2D;
  pastKeys: tf.Tensor3D;
  /** [B, S] (S = past + 1) */
  keyMask: tf.Tensor2D;
  /** int32 [B, S] */
  prevKey: tf.Tensor2D;
  pastQuery: tf.Tensor2D;
  /** int32 [B, S] */
  next: tf.Tensor2D;
  /** int32 [V], optional (ModelConfig.copyEmit) */
  emit?: tf.Tensor1D;
}

export interface CopyDecodeResult {
  /** [B, 1, V] */
  logits: tf.Tensor3D;
  /** [B, 1, S] */
  scores: tf.Tensor3D;
  /** [B, S, d] */
  keys: tf.Tensor3D;
  /** this position's copy query [B, d] */
  query: tf.Tensor2D;
  /** emit[next] [B, S] (int32), or `next` itself without a table */
  writes: tf.Tensor2D;
}

export function runCopyDecodeHead(
  i: CopyDecodeInputs,
  contScale: number,
  targetScale: number,
): CopyDecodeResult {
  const outs = tf
    .engine()
    .runKernel(
      COPY_DECODE_HEAD,
      { ...i } as never,
      { contScale, targetScale } as never,
    ) as tf.Tensor[];
  return {
    logits: outs[0] as tf.Tensor3D,
    scores: outs[1] as tf.Tensor3D,
    keys: outs[2] as tf.Tensor3D,
    query: outs[3] as tf.Tensor2D,
    writes: (outs[4] ?? i.next) as tf.Tensor2D,
  };
}

/** The copy decode head in plain ops (gpt.ts forward() and copyContinuation(), Q = T = 1). */
export function referenceCopyDecodeHead(
  i: CopyDecodeInputs,
  contScale: number,
  targetScale: number,
): CopyDecodeResult {
  return tf.tidy(() => {
    const [B, d] = i.h.shape;
    const V = i.wte.shape[0];
    const S = i.keyMask.shape[1];
    const logits = tf.matMul(i.h, i.wte, false, true).reshape([B, 1, V]) as tf.Tensor3D;
    const keys = tf.concat([i.pastKeys, tf.matMul(i.h, i.wk).reshape([B, 1, d])], 1) as tf.Tensor3D;
    const q = tf.matMul(i.h, i.wq) as tf.Tensor2D;
    const js = tf.range(0, S, 1, "int32").reshape([1, S]);
    const allowed = tf
      .less(js, S - 1)
      .toFloat()
      .mul(i.keyMask);
    const content = tf
      .matMul(q.reshape([B, 1, d]), keys, false, true)
      .mul(1 / Math.sqrt(d))
      .reshape([B, S]);
    const prevIndex = i.prevKey.slice([0, S - 1], [B, 1]);
    const before = tf.less(js, prevIndex).toFloat().mul(i.keyMask);
    const prevContent = tf
      .matMul(i.pastQuery.reshape([B, 1, d]), keys, false, true)
      .mul(1 / Math.sqrt(d))
      .reshape([B, S]);
    const a = tf.softmax(prevContent.add(before.sub(1).mul(1e9))).mul(before);
    const padded = tf.concat([tf.zeros([B, 1]), a], 1).reshape([B * (S + 1)]);
    const offs = tf
      .range(0, B * (S + 1), S + 1, "int32")
      .reshape([B, 1])
      .tile([1, S]);
    const prior = tf.gather(padded, i.prevKey.add(offs).add(tf.scalar(1, "int32"))).reshape([B, S]);
    const perToken = tf
      .matMul(tf.matMul(i.h, i.wc), i.tok, false, true)
      .add(i.tbias.reshape([1, V]));
    const toffs = tf
      .range(0, B * V, V, "int32")
      .reshape([B, 1])
      .tile([1, S]);
    const term = tf.gather(perToken.reshape([B * V]), i.next.add(toffs).reshape([B * S]));
    const scores = content
      .add(i.cb)
      .add(allowed.sub(1).mul(1e9))
      .add(prior.mul(i.cont).mul(contScale))
      .add(term.reshape([B, S]).mul(targetScale))
      .reshape([B, 1, S]) as tf.Tensor3D;
    const writes = (
      i.emit ? tf.gather(i.emit, i.next.reshape([B * S])).reshape([B, S]) : i.next.clone()
    ) as tf.Tensor2D;
    return { logits, scores, keys, query: q, writes };
  });
}
