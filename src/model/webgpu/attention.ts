/**
 * Fused causal multi-head attention (FlashAttention-2 style) as tfjs WebGPU kernels, with its
 * gradient, plus a reference implementation in plain tfjs ops (any backend).
 *
 * Shapes: q [B*H, T, hd], k and v [B*H, S, hd] (S >= T); query i sits at key position S - T + i and
 * sees keys 0..S-T+i (causal). Optional key mask [B, S] (1 attend, 0 padding); row b applies to
 * heads b*H..b*H+H-1. A query with no allowed key outputs zeros (as gpt.ts's maskedSoftmax).
 *
 * Kernels (tf.registerKernel, backend 'webgpu'; each name one dispatch unless said):
 * - LoopAttention / LoopAttentionMasked: O only (1 dispatch), used when no gradient is recorded.
 * - LoopAttentionTrain / LoopAttentionTrainMasked: [O, OL] where OL [B*H, T, hd+1] is O with the
 *   row's logsumexp in the last column (the flash program writes OL; a copy program gives O:
 *   2 dispatches). Their gradient (tf.registerGradient) runs LoopAttentionGrad.
 * - LoopAttentionGrad: [dq, dk, dv] from dO and the saved OL, probabilities recomputed from the
 *   logsumexp (3 dispatches).
 * A WebGPU program has one output buffer, hence the packed OL and the three backward programs.
 */
import * as tf from "@tensorflow/tfjs";
import {
  assertShape,
  attentionBlock,
  input,
  isRecordingGradients,
  type KernelArgs,
  MAIN,
  NEG,
  type Uniform,
  type WebGPUProgram,
  WORKGROUP_LINEAR,
  webgpuBackend,
} from "./common";

export const ATTENTION = "LoopAttention";
export const ATTENTION_MASKED = "LoopAttentionMasked";
export const ATTENTION_TRAIN = "LoopAttentionTrain";
export const ATTENTION_TRAIN_MASKED = "LoopAttentionTrainMasked";
export const ATTENTION_GRAD = "LoopAttentionGrad";
export const ATTENTION_PACKED = "LoopAttentionPacked";
export const ATTENTION_PACKED_TRAIN = "LoopAttentionPackedTrain";
export const ATTENTION_PACKED_GRAD = "LoopAttentionPackedGrad";

export interface AttentionOptions {
  /** [B, S], 1 = attend, 0 = padding; float32. */
  keyMask?: tf.Tensor2D;
  /** Default 1 / sqrt(hd). */
  scale?: number;
}

/**
 * WGSL: the workgroup's `threads` copy `rows` rows of `src` (tile row r starts at `srcBase`, zeros
 * where `rowValid` is false, times `mul`) into the [rows, hd] workgroup array `tile`.
 */
function loadTile(
  tile: string,
  src: string,
  rows: number,
  hd: number,
  threads: number,
  rowValid: string,
  srcBase: string,
  mul = "",
): string {
  const loads = Math.ceil((rows * hd) / threads);
  // A constant trip count keeps control flow uniform for the barriers that follow.
  return `
    for (var it = 0; it < ${loads}; it++) {
      let e = li + it * ${threads};
      if (e < ${rows * hd}) {
        let r = e / ${hd};
        let d = e - r * ${hd};
        var val = 0.0;
        if (${rowValid}) { val = ${src}[${srcBase} + d]${mul}; }
        ${tile}[e] = val;
      }
    }`;
}

/**
 * Where a program finds its rows. "heads": q [B*H, T, hd], k and v [B*H, S, hd], O, dO and dq
 * [B*H, T, hd], dk and dv [B*H, S, hd]. "packed" (training and scoring, S = T): q, k and v are the
 * column blocks of one [B*T, 3D] tensor (x W_qkv + b as it comes, D = H hd) and O, dO, dq, dk,
 * dv are [B*T, D] (heads side by side, as W_o takes them): no split, no transposes.
 */
export type AttentionLayout = "heads" | "packed";

/** WGSL functions giving the first element of (head row bh, position r) in each tensor. */
function rowFunctions(layout: AttentionLayout, hd: number): string {
  if (layout === "heads")
    return `
    fn qRow(bh : i32, r : i32) -> i32 { return (bh * uniforms.qInShape.y + r) * ${hd}; }
    fn kRow(bh : i32, r : i32) -> i32 { return (bh * uniforms.kInShape.y + r) * ${hd}; }
    fn vRow(bh : i32, r : i32) -> i32 { return (bh * uniforms.kInShape.y + r) * ${hd}; }
    fn oRow(bh : i32, r : i32) -> i32 { return (bh * uniforms.qInShape.y + r) * ${hd}; }
    fn okRow(bh : i32, r : i32) -> i32 { return (bh * uniforms.kInShape.y + r) * ${hd}; }`;
  const packed = (part: number, width: string) => `{
      let b = bh / uniforms.H;
      let D = uniforms.H * ${hd};
      return (b * uniforms.T + r) * ${width} + ${part} * D + (bh - b * uniforms.H) * ${hd};
    }`;
  return `
    fn qRow(bh : i32, r : i32) -> i32 ${packed(0, "3 * D")}
    fn kRow(bh : i32, r : i32) -> i32 ${packed(1, "3 * D")}
    fn vRow(bh : i32, r : i32) -> i32 ${packed(2, "3 * D")}
    fn oRow(bh : i32, r : i32) -> i32 ${packed(0, "D")}
    fn okRow(bh : i32, r : i32) -> i32 { return oRow(bh, r); }`;
}

/** WGSL: BHn (head rows), T (queries) and S (keys) of the call. */
function callDims(layout: AttentionLayout): string {
  return layout === "heads"
    ? `let BHn = uniforms.qInShape.x;
      let T = uniforms.qInShape.y;
      let S = uniforms.kInShape.y;`
    : `let T = uniforms.T;
      let S = uniforms.T;
      let BHn = (uniforms.qInShape.x / uniforms.T) * uniforms.H;`;
}

/** A [B*H, rows, hd] result's shape in the layout: as is, or [B*rows, H*hd] for "packed". */
function layoutShape(
  layout: AttentionLayout,
  bh: number,
  rows: number,
  hd: number,
  heads: number,
): number[] {
  return layout === "heads" ? [bh, rows, hd] : [(bh / heads) * rows, heads * hd];
}

/** The programs' uniforms: the scale, and for "packed" the sequence length and head count. */
function uniformDecl(layout: AttentionLayout): string {
  return layout === "heads" ? "scale : f32," : "scale : f32, T : i32, H : i32,";
}

/** Forward: O (and the row logsumexp) by online softmax over key blocks, never a [T, S] matrix. */
class FlashForwardProgram implements WebGPUProgram {
  variableNames: string[];
  outputShape: number[];
  shaderKey: string;
  dispatchLayout = { x: [0] };
  dispatch: [number, number, number];
  workgroupSize: [number, number, number];
  uniforms: string;
  private readonly hd: number;
  private readonly block: number;
  private readonly masked: boolean;
  private readonly withLse: boolean;
  private readonly layout: AttentionLayout;

  constructor(
    bh: number,
    t: number,
    hd: number,
    masked: boolean,
    withLse: boolean,
    layout: AttentionLayout = "heads",
    heads = 1,
  ) {
    this.hd = hd;
    this.block = attentionBlock(hd);
    this.masked = masked;
    this.withLse = withLse;
    this.layout = layout;
    this.uniforms = uniformDecl(layout);
    this.variableNames = masked ? ["qIn", "kIn", "vIn", "maskIn"] : ["qIn", "kIn", "vIn"];
    // OL stays [B*H, T, hd + 1] (the backward pass reads it); O alone takes the layout's shape.
    this.outputShape = withLse ? [bh, t, hd + 1] : layoutShape(layout, bh, t, hd, heads);
    this.workgroupSize = [this.block, 1, 1];
    this.dispatch = [bh * Math.ceil(t / this.block), 1, 1];
    this.shaderKey = `loopFlashFwd_${hd}_${this.block}_${masked}_${withLse}_${layout}`;
  }

  getUserCode(): string {
    const { hd, block: BR, masked, withLse } = this;
    const BC = BR;
    return `
    ${rowFunctions(this.layout, hd)}
    var<workgroup> kTile : array<f32, ${BC * hd}>;
    var<workgroup> vTile : array<f32, ${BC * hd}>;
    var<workgroup> mTile : array<f32, ${BC}>;
    var<workgroup> nBlocksShared : i32;

    // O_i = sum_j softmax_j(scale q_i . k_j | j <= S-T+i, mask) v_j; online max/sum per key block.
    ${MAIN} {
      ${callDims(this.layout)}
      let off = S - T;
      let nQB = (T + ${BR} - 1) / ${BR};
      let wg = ${WORKGROUP_LINEAR};
      let bh = wg / nQB;
      let qb = wg - bh * nQB;
      let li = i32(localIndex);
      let row = qb * ${BR} + li;
      let live = bh < BHn && row < T;
      let okBh = bh < BHn;
      ${masked ? "let mRow = (bh / max(1, BHn / uniforms.maskInShape.x)) * S;" : ""}
      if (li == 0) {
        let lastRow = min(qb * ${BR} + ${BR}, T) - 1;
        nBlocksShared = (off + lastRow + ${BC}) / ${BC};
      }
      let nKB = workgroupUniformLoad(&nBlocksShared);
      var qv : array<f32, ${hd}>;
      var acc : array<f32, ${hd}>;
      var sc : array<f32, ${BC}>;
      if (live) {
        let base = qRow(bh, row);
        for (var d = 0; d < ${hd}; d++) { qv[d] = qIn[base + d] * uniforms.scale; acc[d] = 0.0; }
      }
      var m = ${NEG};
      var l = 0.0;
      for (var kb = 0; kb < nKB; kb++) {
        workgroupBarrier();
        ${loadTile("kTile", "kIn", BC, hd, BR, `okBh && kb * ${BC} + r < S`, `kRow(bh, kb * ${BC} + r)`)}
        ${loadTile("vTile", "vIn", BC, hd, BR, `okBh && kb * ${BC} + r < S`, `vRow(bh, kb * ${BC} + r)`)}
        ${
          masked
            ? `if (li < ${BC}) {
          let j = kb * ${BC} + li;
          var mv = 0.0;
          if (okBh && j < S) { mv = maskIn[mRow + j]; }
          mTile[li] = mv;
        }`
            : ""
        }
        workgroupBarrier();
        if (live) {
          var bm = ${NEG};
          let lastKey = off + row;
          for (var c = 0; c < ${BC}; c++) {
            let j = kb * ${BC} + c;
            var x = ${NEG};
            if (j <= lastKey${masked ? " && mTile[c] > 0.5" : ""}) {
              var s = 0.0;
              for (var d = 0; d < ${hd}; d++) { s += qv[d] * kTile[c * ${hd} + d]; }
              x = s;
              bm = max(bm, s);
            }
            sc[c] = x;
          }
          if (bm > -1.0e38) {
            let mNew = max(m, bm);
            let corr = exp(m - mNew);
            l = l * corr;
            for (var d = 0; d < ${hd}; d++) { acc[d] = acc[d] * corr; }
            for (var c = 0; c < ${BC}; c++) {
              if (sc[c] > -1.0e38) {
                let p = exp(sc[c] - mNew);
                l += p;
                for (var d = 0; d < ${hd}; d++) { acc[d] += p * vTile[c * ${hd} + d]; }
              }
            }
            m = mNew;
          }
        }
      }
      if (live) {
        let inv = select(0.0, 1.0 / l, l > 0.0);
        let ob = ${withLse ? `(bh * T + row) * ${hd + 1}` : "oRow(bh, row)"};
        for (var d = 0; d < ${hd}; d++) { result[ob + d] = acc[d] * inv; }
        ${withLse ? `result[ob + ${hd}] = select(3.0e38, m + log(l), l > 0.0);` : ""}
      }
    }`;
  }
}

/** O = OL[..., :hd]: drops the logsumexp column ("packed": into [B*T, D], heads side by side). */
class DropLseProgram implements WebGPUProgram {
  variableNames = ["olIn"];
  outputShape: number[];
  shaderKey: string;
  dispatchLayout = { x: [0] };
  dispatch: [number, number, number];
  workgroupSize: [number, number, number] = [64, 1, 1];
  size = true;
  uniforms?: string;
  private readonly hd: number;
  private readonly layout: AttentionLayout;

  constructor(bh: number, t: number, hd: number, layout: AttentionLayout = "heads", heads = 1) {
    this.hd = hd;
    this.layout = layout;
    this.outputShape = layoutShape(layout, bh, t, hd, heads);
    if (layout === "packed") this.uniforms = "T : i32, H : i32,";
    this.dispatch = [Math.ceil((bh * t * hd) / 64), 1, 1];
    this.shaderKey = `loopDropLse_${hd}_${layout}`;
  }

  getUserCode(): string {
    const hd = this.hd;
    if (this.layout === "packed")
      return `
    // result[b * T + t, h * hd + d] = OL[b * H + h, t, d].
    ${MAIN} {
      if (index < uniforms.size) {
        let D = uniforms.H * ${hd};
        let n = index / D;
        let c = index - n * D;
        let h = c / ${hd};
        let b = n / uniforms.T;
        let bh = b * uniforms.H + h;
        let t = n - b * uniforms.T;
        result[index] = olIn[(bh * uniforms.T + t) * ${hd + 1} + c - h * ${hd}];
      }
    }`;
    return `
    // result[r, d] = OL[r, d] for d < hd.
    ${MAIN} {
      if (index < uniforms.size) {
        let r = index / ${hd};
        result[index] = olIn[r * ${hd + 1} + index - r * ${hd}];
      }
    }`;
  }
}

/** Backward, one thread per query: dq_i = scale sum_j p_ij (dO_i . v_j - D_i) k_j. */
class FlashDqProgram implements WebGPUProgram {
  variableNames: string[];
  outputShape: number[];
  shaderKey: string;
  dispatchLayout = { x: [0] };
  dispatch: [number, number, number];
  workgroupSize: [number, number, number];
  uniforms: string;
  private readonly hd: number;
  private readonly block: number;
  private readonly masked: boolean;
  private readonly layout: AttentionLayout;

  constructor(
    bh: number,
    t: number,
    hd: number,
    masked: boolean,
    layout: AttentionLayout = "heads",
    heads = 1,
  ) {
    this.hd = hd;
    this.block = attentionBlock(hd);
    this.masked = masked;
    this.layout = layout;
    this.uniforms = uniformDecl(layout);
    this.variableNames = ["dyIn", "qIn", "kIn", "vIn", "olIn", ...(masked ? ["maskIn"] : [])];
    this.outputShape = layoutShape(layout, bh, t, hd, heads);
    this.workgroupSize = [this.block, 1, 1];
    this.dispatch = [bh * Math.ceil(t / this.block), 1, 1];
    this.shaderKey = `loopFlashDq_${hd}_${this.block}_${masked}_${layout}`;
  }

  getUserCode(): string {
    const { hd, block: BR, masked } = this;
    const BC = BR;
    return `
    ${rowFunctions(this.layout, hd)}
    var<workgroup> kTile : array<f32, ${BC * hd}>;
    var<workgroup> vTile : array<f32, ${BC * hd}>;
    var<workgroup> mTile : array<f32, ${BC}>;
    var<workgroup> nBlocksShared : i32;

    // p_ij = exp(scale q_i . k_j - lse_i); D_i = dO_i . O_i; dq_i = scale sum_j p_ij (dO_i . v_j - D_i) k_j.
    ${MAIN} {
      ${callDims(this.layout)}
      let off = S - T;
      let nQB = (T + ${BR} - 1) / ${BR};
      let wg = ${WORKGROUP_LINEAR};
      let bh = wg / nQB;
      let qb = wg - bh * nQB;
      let li = i32(localIndex);
      let row = qb * ${BR} + li;
      let live = bh < BHn && row < T;
      let okBh = bh < BHn;
      ${masked ? "let mRow = (bh / max(1, BHn / uniforms.maskInShape.x)) * S;" : ""}
      if (li == 0) {
        let lastRow = min(qb * ${BR} + ${BR}, T) - 1;
        nBlocksShared = (off + lastRow + ${BC}) / ${BC};
      }
      let nKB = workgroupUniformLoad(&nBlocksShared);
      var qv : array<f32, ${hd}>;
      var dov : array<f32, ${hd}>;
      var dq : array<f32, ${hd}>;
      var lse = 3.0e38;
      var Di = 0.0;
      if (live) {
        let base = qRow(bh, row);
        let dbase = oRow(bh, row);
        let obase = (bh * T + row) * ${hd + 1};
        for (var d = 0; d < ${hd}; d++) {
          qv[d] = qIn[base + d] * uniforms.scale;
          dov[d] = dyIn[dbase + d];
          Di += dov[d] * olIn[obase + d];
          dq[d] = 0.0;
        }
        lse = olIn[obase + ${hd}];
      }
      for (var kb = 0; kb < nKB; kb++) {
        workgroupBarrier();
        ${loadTile("kTile", "kIn", BC, hd, BR, `okBh && kb * ${BC} + r < S`, `kRow(bh, kb * ${BC} + r)`)}
        ${loadTile("vTile", "vIn", BC, hd, BR, `okBh && kb * ${BC} + r < S`, `vRow(bh, kb * ${BC} + r)`)}
        ${
          masked
            ? `if (li < ${BC}) {
          let j = kb * ${BC} + li;
          var mv = 0.0;
          if (okBh && j < S) { mv = maskIn[mRow + j]; }
          mTile[li] = mv;
        }`
            : ""
        }
        workgroupBarrier();
        if (live) {
          let lastKey = off + row;
          for (var c = 0; c < ${BC}; c++) {
            let j = kb * ${BC} + c;
            if (j <= lastKey${masked ? " && mTile[c] > 0.5" : ""}) {
              var s = 0.0;
              var dp = 0.0;
              for (var d = 0; d < ${hd}; d++) {
                s += qv[d] * kTile[c * ${hd} + d];
                dp += dov[d] * vTile[c * ${hd} + d];
              }
              let ds = exp(s - lse) * (dp - Di);
              for (var d = 0; d < ${hd}; d++) { dq[d] += ds * kTile[c * ${hd} + d]; }
            }
          }
        }
      }
      if (live) {
        let base = oRow(bh, row);
        for (var d = 0; d < ${hd}; d++) { result[base + d] = dq[d] * uniforms.scale; }
      }
    }`;
  }
}

/**
 * Backward, one thread per key, looping over the query blocks that see it:
 * dv_j = sum_i p_ij dO_i, or dk_j = scale sum_i p_ij (dO_i . v_j - D_i) q_i.
 */
class FlashDkvProgram implements WebGPUProgram {
  variableNames: string[];
  outputShape: number[];
  shaderKey: string;
  dispatchLayout = { x: [0] };
  dispatch: [number, number, number];
  workgroupSize: [number, number, number];
  uniforms: string;
  private readonly hd: number;
  private readonly block: number;
  private readonly masked: boolean;
  private readonly which: "dk" | "dv";
  private readonly layout: AttentionLayout;

  constructor(
    bh: number,
    s: number,
    hd: number,
    masked: boolean,
    which: "dk" | "dv",
    layout: AttentionLayout = "heads",
    heads = 1,
  ) {
    this.hd = hd;
    this.block = attentionBlock(hd);
    this.masked = masked;
    this.which = which;
    this.layout = layout;
    this.uniforms = uniformDecl(layout);
    // A binding the shader never reads is dropped from the 'auto' layout (an invalid bind group):
    // the dv program gets no v.
    this.variableNames = [
      "dyIn",
      "qIn",
      "kIn",
      ...(which === "dk" ? ["vIn"] : []),
      "olIn",
      ...(masked ? ["maskIn"] : []),
    ];
    this.outputShape = layoutShape(layout, bh, s, hd, heads);
    this.workgroupSize = [this.block, 1, 1];
    this.dispatch = [bh * Math.ceil(s / this.block), 1, 1];
    this.shaderKey = `loopFlash_${which}_${hd}_${this.block}_${masked}_${layout}`;
  }

  getUserCode(): string {
    const { hd, block: BK, masked, which } = this;
    const BQ = BK;
    const dk = which === "dk";
    return `
    ${rowFunctions(this.layout, hd)}
    var<workgroup> qTile : array<f32, ${BQ * hd}>;
    var<workgroup> dTile : array<f32, ${BQ * hd}>;
    var<workgroup> lseTile : array<f32, ${BQ}>;
    var<workgroup> dRow : array<f32, ${BQ}>;
    var<workgroup> firstShared : i32;

    // ${dk ? "dk_j = sum_i p_ij (dO_i . v_j - D_i) (scale q_i)" : "dv_j = sum_i p_ij dO_i"}, p_ij = exp(scale q_i . k_j - lse_i), i >= j - (S-T).
    ${MAIN} {
      ${callDims(this.layout)}
      let off = S - T;
      let nKB = (S + ${BK} - 1) / ${BK};
      let nQB = (T + ${BQ} - 1) / ${BQ};
      let wg = ${WORKGROUP_LINEAR};
      let bh = wg / nKB;
      let kb = wg - bh * nKB;
      let li = i32(localIndex);
      let j = kb * ${BK} + li;
      let okBh = bh < BHn;
      var live = okBh && j < S;
      ${masked ? "if (live) { live = maskIn[(bh / max(1, BHn / uniforms.maskInShape.x)) * S + j] > 0.5; }" : ""}
      if (li == 0) {
        firstShared = max(0, kb * ${BK} - off) / ${BQ};
      }
      let qb0 = workgroupUniformLoad(&firstShared);
      var kv : array<f32, ${hd}>;
      ${dk ? `var vv : array<f32, ${hd}>;` : ""}
      var acc : array<f32, ${hd}>;
      if (live) {
        let base = kRow(bh, j);
        ${dk ? "let vbase = vRow(bh, j);" : ""}
        for (var d = 0; d < ${hd}; d++) {
          kv[d] = kIn[base + d];
          ${dk ? "vv[d] = vIn[vbase + d];" : ""}
          acc[d] = 0.0;
        }
      }
      for (var qb = qb0; qb < nQB; qb++) {
        workgroupBarrier();
        ${loadTile("qTile", "qIn", BQ, hd, BK, `okBh && qb * ${BQ} + r < T`, `qRow(bh, qb * ${BQ} + r)`, " * uniforms.scale")}
        ${loadTile("dTile", "dyIn", BQ, hd, BK, `okBh && qb * ${BQ} + r < T`, `oRow(bh, qb * ${BQ} + r)`)}
        if (li < ${BQ}) {
          let i = qb * ${BQ} + li;
          var lse = 3.0e38;
          var Di = 0.0;
          if (okBh && i < T) {
            let ob = (bh * T + i) * ${hd + 1};
            lse = olIn[ob + ${hd}];
            ${dk ? `let db = oRow(bh, i);\n            for (var d = 0; d < ${hd}; d++) { Di += dyIn[db + d] * olIn[ob + d]; }` : ""}
          }
          lseTile[li] = lse;
          dRow[li] = Di;
        }
        workgroupBarrier();
        if (live) {
          for (var r = 0; r < ${BQ}; r++) {
            let i = qb * ${BQ} + r;
            if (i < T && j <= off + i) {
              var s = 0.0;
              ${dk ? "var dp = 0.0;" : ""}
              for (var d = 0; d < ${hd}; d++) {
                s += qTile[r * ${hd} + d] * kv[d];
                ${dk ? `dp += dTile[r * ${hd} + d] * vv[d];` : ""}
              }
              let p = exp(s - lseTile[r]);
              ${
                dk
                  ? `let ds = p * (dp - dRow[r]);
              for (var d = 0; d < ${hd}; d++) { acc[d] += ds * qTile[r * ${hd} + d]; }`
                  : `for (var d = 0; d < ${hd}; d++) { acc[d] += p * dTile[r * ${hd} + d]; }`
              }
            }
          }
        }
      }
      if (okBh && j < S) {
        let base = okRow(bh, j);
        for (var d = 0; d < ${hd}; d++) { result[base + d] = select(0.0, acc[d], live); }
      }
    }`;
  }
}

interface AttentionDims {
  bh: number;
  t: number;
  s: number;
  hd: number;
}

function attentionDims(
  what: string,
  q: tf.TensorInfo,
  k: tf.TensorInfo,
  v: tf.TensorInfo,
  mask?: tf.TensorInfo,
): AttentionDims {
  const [bh, t, hd] = q.shape as [number, number, number];
  assertShape(`${what} q`, q.shape, [null, null, null]);
  const s = k.shape[1] as number;
  assertShape(`${what} k`, k.shape, [bh, null, hd]);
  assertShape(`${what} v`, v.shape, [bh, s, hd]);
  if (s < t) throw new Error(`${what}: S (${s}) must be >= T (${t})`);
  // Per-thread arrays of hd floats, and [rows, hd] tiles in 16 KiB of workgroup memory.
  if (hd > 256) throw new Error(`${what}: head dim ${hd} > 256 is not supported`);
  if (mask) {
    assertShape(`${what} keyMask`, mask.shape, [null, s]);
    if (bh % (mask.shape[0] as number) !== 0)
      throw new Error(`${what}: B*H (${bh}) is not a multiple of the mask's B (${mask.shape[0]})`);
  }
  for (const [name, x] of [
    ["q", q],
    ["k", k],
    ["v", v],
    ["keyMask", mask],
  ] as const)
    if (x && x.dtype !== "float32") throw new Error(`${what}: ${name} must be float32`);
  return { bh, t, s, hd };
}

function scaleUniform(args: KernelArgs, hd: number): Uniform[] {
  const scale = (args.attrs?.scale as number | undefined) ?? 1 / Math.sqrt(hd);
  return [{ type: "float32", data: [scale] }];
}

/** Kernel: attention forward; with `train`, [O, OL] (OL: O plus the logsumexp column). */
function attentionForward(args: KernelArgs, masked: boolean, train: boolean) {
  const backend = webgpuBackend(args);
  const q = input(args, "q");
  const k = input(args, "k");
  const v = input(args, "v");
  const mask = masked ? input(args, "mask") : undefined;
  const { bh, t, hd } = attentionDims("fusedAttention", q, k, v, mask);
  const inputs = mask ? [q, k, v, mask] : [q, k, v];
  const program = new FlashForwardProgram(bh, t, hd, masked, train);
  const out = backend.runWebGPUProgram(program, inputs, "float32", scaleUniform(args, hd));
  if (!train) return out;
  const o = backend.runWebGPUProgram(new DropLseProgram(bh, t, hd), [out], "float32");
  return [o, out];
}

/** Kernel: [dq, dk, dv] from dy (dO), q, k, v, OL and the optional mask. */
function attentionBackward(args: KernelArgs) {
  const backend = webgpuBackend(args);
  const dy = input(args, "dy");
  const q = input(args, "q");
  const k = input(args, "k");
  const v = input(args, "v");
  const ol = input(args, "ol");
  const mask = args.inputs.mask;
  const { bh, t, s, hd } = attentionDims("fusedAttention backward", q, k, v, mask);
  assertShape("fusedAttention backward dy", dy.shape, [bh, t, hd]);
  assertShape("fusedAttention backward ol", ol.shape, [bh, t, hd + 1]);
  const masked = mask !== undefined;
  const inputs = mask ? [dy, q, k, v, ol, mask] : [dy, q, k, v, ol];
  const u = scaleUniform(args, hd);
  const dq = backend.runWebGPUProgram(new FlashDqProgram(bh, t, hd, masked), inputs, "float32", u);
  const dk = backend.runWebGPUProgram(
    new FlashDkvProgram(bh, s, hd, masked, "dk"),
    inputs,
    "float32",
    u,
  );
  const dv = backend.runWebGPUProgram(
    new FlashDkvProgram(bh, s, hd, masked, "dv"),
    inputs.filter((x) => x !== v),
    "float32",
    u,
  );
  return [dq, dk, dv];
}

/** The packed call's sizes from qkv [B*T, 3D], its mask [B, T] and attrs.heads. */
function packedDims(what: string, args: KernelArgs) {
  const qkv = input(args, "qkv");
  const mask = input(args, "mask");
  const heads = args.attrs?.heads as number;
  const [bt, d3] = qkv.shape as [number, number];
  assertShape(`${what} qkv`, qkv.shape, [null, null]);
  const [b, t] = mask.shape as [number, number];
  assertShape(`${what} keyMask`, mask.shape, [null, null]);
  if (b * t !== bt) throw new Error(`${what}: qkv has ${bt} rows, the mask ${b} x ${t}`);
  if (d3 % (3 * heads) !== 0) throw new Error(`${what}: ${d3} columns are not 3 x ${heads} heads`);
  const hd = d3 / 3 / heads;
  if (hd > 256) throw new Error(`${what}: head dim ${hd} > 256 is not supported`);
  if (qkv.dtype !== "float32" || mask.dtype !== "float32")
    throw new Error(`${what}: qkv and keyMask must be float32`);
  const u: Uniform[] = [
    ...scaleUniform(args, hd),
    { type: "int32", data: [t] },
    { type: "int32", data: [heads] },
  ];
  return { qkv, mask, heads, bh: b * heads, t, hd, u };
}

/** Kernel: packed attention forward, O [B*T, D]; with `train`, [O, OL] (OL [B*H, T, hd + 1]). */
function packedForward(args: KernelArgs, train: boolean) {
  const backend = webgpuBackend(args);
  const { qkv, mask, heads, bh, t, hd, u } = packedDims("fusedAttentionPacked", args);
  const inputs = [qkv, qkv, qkv, mask];
  const program = new FlashForwardProgram(bh, t, hd, true, train, "packed", heads);
  const out = backend.runWebGPUProgram(program, inputs, "float32", u);
  if (!train) return out;
  const o = backend.runWebGPUProgram(
    new DropLseProgram(bh, t, hd, "packed", heads),
    [out],
    "float32",
    u.slice(1),
  );
  return [o, out];
}

/** Kernel: [dq, dk, dv], each [B*T, D], from dy [B*T, D], qkv, OL and the mask. */
function packedBackward(args: KernelArgs) {
  const backend = webgpuBackend(args);
  const { qkv, mask, heads, bh, t, hd, u } = packedDims("fusedAttentionPacked backward", args);
  const dy = input(args, "dy");
  const ol = input(args, "ol");
  assertShape("fusedAttentionPacked backward dy", dy.shape, [(bh / heads) * t, heads * hd]);
  assertShape("fusedAttentionPacked backward ol", ol.shape, [bh, t, hd + 1]);
  const inputs = [dy, qkv, qkv, qkv, ol, mask];
  const run = (program: WebGPUProgram, xs: tf.TensorInfo[]) =>
    backend.runWebGPUProgram(program, xs, "float32", u);
  return [
    run(new FlashDqProgram(bh, t, hd, true, "packed", heads), inputs),
    run(new FlashDkvProgram(bh, t, hd, true, "dk", "packed", heads), inputs),
    run(new FlashDkvProgram(bh, t, hd, true, "dv", "packed", heads), [dy, qkv, qkv, ol, mask]),
  ];
}

/** The kernel and gradient configs of this file (registered by registerWebGpuKernels). */
export function attentionKernelConfigs(): tf.KernelConfig[] {
  const kernel = (kernelName: string, kernelFunc: tf.KernelFunc): tf.KernelConfig => ({
    kernelName,
    backendName: "webgpu",
    kernelFunc,
  });
  return [
    kernel(ATTENTION, (a) => attentionForward(a, false, false)),
    kernel(ATTENTION_MASKED, (a) => attentionForward(a, true, false)),
    kernel(ATTENTION_TRAIN, (a) => attentionForward(a, false, true)),
    kernel(ATTENTION_TRAIN_MASKED, (a) => attentionForward(a, true, true)),
    kernel(ATTENTION_GRAD, attentionBackward),
    kernel(ATTENTION_PACKED, (a) => packedForward(a, false)),
    kernel(ATTENTION_PACKED_TRAIN, (a) => packedForward(a, true)),
    kernel(ATTENTION_PACKED_GRAD, packedBackward),
  ];
}

function attentionGrad(masked: boolean): tf.GradConfig {
  return {
    kernelName: masked ? ATTENTION_TRAIN_MASKED : ATTENTION_TRAIN,
    inputsToSave: masked ? ["q", "k", "v", "mask"] : ["q", "k", "v"],
    outputsToSave: [false, true],
    gradFunc: (dys, saved, attrs) => {
      // dys: [dO, dOL]; OL never leaves the wrapper, so dOL is tfjs's zeros and is not needed.
      const dy = (Array.isArray(dys) ? dys[0] : dys) as tf.Tensor;
      const [q, k, v] = saved as [tf.Tensor, tf.Tensor, tf.Tensor];
      const mask = masked ? (saved[3] as tf.Tensor) : undefined;
      const ol = saved[saved.length - 1] as tf.Tensor;
      const inputs: tf.NamedTensorMap = mask ? { dy, q, k, v, ol, mask } : { dy, q, k, v, ol };
      const [dq, dk, dv] = tf
        .engine()
        .runKernel<tf.Tensor[]>(ATTENTION_GRAD, inputs, attrs as tf.NamedAttrMap) as [
        tf.Tensor,
        tf.Tensor,
        tf.Tensor,
      ];
      const grads: Record<string, () => tf.Tensor> = { q: () => dq, k: () => dk, v: () => dv };
      if (mask) grads.mask = () => tf.zerosLike(mask);
      return grads;
    },
  };
}

/** The packed kernel's gradient: d(qkv) = [dq, dk, dv] side by side (one concat). */
const packedGrad: tf.GradConfig = {
  kernelName: ATTENTION_PACKED_TRAIN,
  inputsToSave: ["qkv", "mask"],
  outputsToSave: [false, true],
  gradFunc: (dys, saved, attrs) => {
    const dy = (Array.isArray(dys) ? dys[0] : dys) as tf.Tensor;
    const [qkv, mask, ol] = saved as [tf.Tensor, tf.Tensor, tf.Tensor];
    const parts = tf
      .engine()
      .runKernel<tf.Tensor[]>(
        ATTENTION_PACKED_GRAD,
        { dy, qkv, mask, ol },
        attrs as tf.NamedAttrMap,
      ) as tf.Tensor[];
    return { qkv: () => tf.concat(parts, 1), mask: () => tf.zerosLike(mask) };
  },
};

export function attentionGradConfigs(): tf.GradConfig[] {
  return [attentionGrad(false), attentionGrad(true), packedGrad];
}

/**
 * Causal attention in plain tfjs ops, same contract as fusedAttention: softmax(scale q k^T + bias) v
 * with the causal and key-mask bias of gpt.ts (-1e9), probabilities times the mask (rows with no
 * allowed key are zero). Materialises [B*H, T, S].
 */
export function referenceAttention(
  q: tf.Tensor3D,
  k: tf.Tensor3D,
  v: tf.Tensor3D,
  opts: AttentionOptions = {},
): tf.Tensor3D {
  return tf.tidy(() => {
    const [bh, t, hd] = q.shape;
    const s = k.shape[1];
    const scale = opts.scale ?? 1 / Math.sqrt(hd);
    const scores = tf.matMul(q, k, false, true).mul(scale); // [BH, T, S]
    // Key j is allowed for query i iff j <= S - T + i.
    const causal = tf.linalg.bandPart(tf.ones([t, s]), -1, s - t);
    if (!opts.keyMask) {
      const p = tf.softmax(scores.add(causal.sub(1).mul(1e9)));
      return tf.matMul(p, v) as tf.Tensor3D;
    }
    const b = opts.keyMask.shape[0];
    const allowed = causal.reshape([1, 1, t, s]).mul(opts.keyMask.reshape([b, 1, 1, s]));
    const p = tf
      .softmax(scores.reshape([b, bh / b, t, s]).add(allowed.sub(1).mul(1e9)))
      .mul(allowed)
      .reshape([bh, t, s]);
    return tf.matMul(p, v) as tf.Tensor3D;
  });
}

/**
 * Causal multi-head attention (see the file comment): the fused WebGPU kernels on the webgpu
 * backend (gradients included), referenceAttention on any other. Register the kernels first
 * (registerWebGpuKernels; done here if not yet).
 */
export function runFusedAttention(
  q: tf.Tensor3D,
  k: tf.Tensor3D,
  v: tf.Tensor3D,
  opts: AttentionOptions = {},
): tf.Tensor3D {
  const engine = tf.engine();
  const train = isRecordingGradients(engine);
  const masked = opts.keyMask !== undefined;
  const name = train
    ? masked
      ? ATTENTION_TRAIN_MASKED
      : ATTENTION_TRAIN
    : masked
      ? ATTENTION_MASKED
      : ATTENTION;
  const inputs: tf.NamedTensorMap = opts.keyMask ? { q, k, v, mask: opts.keyMask } : { q, k, v };
  const attrs: tf.NamedAttrMap = { scale: opts.scale ?? 1 / Math.sqrt(q.shape[2]) };
  if (!train) return engine.runKernel<tf.Tensor3D>(name, inputs, attrs);
  const [o, ol] = engine.runKernel<tf.Tensor[]>(name, inputs, attrs) as [tf.Tensor3D, tf.Tensor];
  // The tape keeps its own reference to OL for the backward pass.
  ol.dispose();
  return o;
}

/**
 * Causal multi-head attention straight from x W_qkv + b: qkv [B*T, 3D] (q, k, v column blocks,
 * heads side by side in each), keyMask [B, T] -> [B*T, D], the layout W_o takes. The fused
 * kernels in the "packed" layout (no split or transposes, forward or backward).
 */
export function runFusedAttentionPacked(
  qkv: tf.Tensor2D,
  heads: number,
  keyMask: tf.Tensor2D,
  scale?: number,
): tf.Tensor2D {
  const engine = tf.engine();
  const hd = qkv.shape[1] / 3 / heads;
  const attrs: tf.NamedAttrMap = { heads, scale: scale ?? 1 / Math.sqrt(hd) };
  const inputs: tf.NamedTensorMap = { qkv, mask: keyMask };
  if (!isRecordingGradients(engine))
    return engine.runKernel<tf.Tensor2D>(ATTENTION_PACKED, inputs, attrs);
  const [o, ol] = engine.runKernel<tf.Tensor[]>(ATTENTION_PACKED_TRAIN, inputs, attrs) as [
    tf.Tensor2D,
    tf.Tensor,
  ];
  ol.dispose();
  return o;
}

/** The same in plain ops: split, heads, referenceAttention, heads merged. */
export function referenceAttentionPacked(
  qkv: tf.Tensor2D,
  heads: number,
  keyMask: tf.Tensor2D,
  scale?: number,
): tf.Tensor2D {
  return tf.tidy(() => {
    const [B, T] = keyMask.shape;
    const D = qkv.shape[1] / 3;
    const hd = D / heads;
    const split = (t: tf.Tensor) =>
      t
        .reshape([B, T, heads, hd])
        .transpose([0, 2, 1, 3])
        .reshape([B * heads, T, hd]) as tf.Tensor3D;
    const [q, k, v] = tf.split(qkv, 3, 1);
    const o = referenceAttention(
      split(q as tf.Tensor),
      split(k as tf.Tensor),
      split(v as tf.Tensor),
      {
        keyMask,
        ...(scale !== undefined ? { scale } : {}),
      },
    );
    return o
      .reshape([B, heads, T, hd])
      .transpose([0, 2, 1, 3])
      .reshape([B * T, D]) as tf.Tensor2D;
  });
}
