/**
 * Decoding against a pre-sized KV cache as tfjs WebGPU kernels, plus references in plain tfjs ops.
 *
 * - decodeAttention(q [B*H, 1, hd], kCache, vCache [B*H, Smax, hd], keyMask [B, Smax]) -> [B*H, 1, hd]:
 *   one query per row against every valid cache entry (mask 1, position < `length`), one dispatch.
 * - writeKV(cache [B*H, Smax, hd], kv [B*H, n, hd], position): rows position..position+n-1 of the
 *   cache become kv. tfjs tensors are immutable and a WebGPU program has one output, so there is no
 *   sanctioned in-place write; runWebGPUProgram does take an `output` TensorInfo, though, and the
 *   kernel passes the cache itself there: one dispatch of B*H*n*hd threads writes the new rows into
 *   the cache's GPU buffer, nothing else is touched or copied, and the kernel returns a tensor that
 *   aliases the cache (refcount raised, like Reshape). Consequences: the input cache tensor (and every
 *   tensor sharing its buffer) sees the write; no gradient; callers must treat the input as consumed:
 *   `const next = writeKV(cache, kv, pos); cache.dispose(); cache = next;` which is also right for
 *   the reference (other backends), where writeKV returns a new tensor and leaves the input alone.
 *   (nanogpt's AppendCache instead writes a whole new [B, H, Smax, hd] output each step: a full copy.)
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

export const DECODE_ATTENTION = "LoopDecodeAttention";
export const WRITE_KV = "LoopWriteKV";

export interface DecodeOptions {
  /** Keys at positions >= length are ignored (default Smax): bounds the scan. */
  length?: number;
  /** Default 1 / sqrt(hd). */
  scale?: number;
}

const DECODE_THREADS = 64;

/** One workgroup per row: scores for 64 keys at a time, online softmax, threads own output dims. */
class DecodeAttentionProgram implements WebGPUProgram {
  variableNames = ["qIn", "kIn", "vIn", "maskIn"];
  outputShape: number[];
  shaderKey: string;
  dispatchLayout = { x: [0] };
  dispatch: [number, number, number];
  workgroupSize: [number, number, number] = [DECODE_THREADS, 1, 1];
  uniforms = "scale : f32, len : i32,";
  private readonly hd: number;

  constructor(bh: number, hd: number) {
    this.hd = hd;
    this.outputShape = [bh, 1, hd];
    this.dispatch = [bh, 1, 1];
    this.shaderKey = `loopDecodeAttention_${hd}`;
  }

  getUserCode(): string {
    const hd = this.hd;
    const W = DECODE_THREADS;
    const dims = Math.ceil(hd / W);
    return `
    var<workgroup> qs : array<f32, ${hd}>;
    var<workgroup> ps : array<f32, ${W}>;
    var<workgroup> red : array<f32, ${W}>;

    // o = sum_j softmax_j(scale q . k_j | mask_j, j < len) v_j for one row; all-masked rows give 0.
    ${MAIN} {
      let BHn = uniforms.qInShape.x;
      let S = uniforms.kInShape.y;
      let len = min(uniforms.len, S);
      let bh = ${WORKGROUP_LINEAR};
      let okBh = bh < BHn;
      let li = i32(localIndex);
      let mRow = (bh / max(1, BHn / uniforms.maskInShape.x)) * S;
      for (var it = 0; it < ${Math.ceil(hd / W)}; it++) {
        let d = li + it * ${W};
        if (d < ${hd}) {
          var val = 0.0;
          if (okBh) { val = qIn[bh * ${hd} + d] * uniforms.scale; }
          qs[d] = val;
        }
      }
      var m = ${NEG};
      var l = 0.0;
      var acc : array<f32, ${dims}>;
      for (var t = 0; t < ${dims}; t++) { acc[t] = 0.0; }
      let nChunks = (len + ${W} - 1) / ${W};
      for (var c = 0; c < nChunks; c++) {
        workgroupBarrier();
        let j = c * ${W} + li;
        var s = ${NEG};
        if (okBh && j < len) {
          if (maskIn[mRow + j] > 0.5) {
            let kb = (bh * S + j) * ${hd};
            var dotv = 0.0;
            for (var d = 0; d < ${hd}; d++) { dotv += qs[d] * kIn[kb + d]; }
            s = dotv;
          }
        }
        red[li] = s;
        workgroupBarrier();
        for (var stride = ${W / 2}; stride > 0; stride = stride / 2) {
          if (li < stride) { red[li] = max(red[li], red[li + stride]); }
          workgroupBarrier();
        }
        let mNew = max(m, red[0]);
        workgroupBarrier();
        let p = select(0.0, exp(s - mNew), s > -1.0e38);
        ps[li] = p;
        red[li] = p;
        workgroupBarrier();
        for (var stride = ${W / 2}; stride > 0; stride = stride / 2) {
          if (li < stride) { red[li] = red[li] + red[li + stride]; }
          workgroupBarrier();
        }
        let corr = exp(m - mNew);
        l = l * corr + red[0];
        for (var t = 0; t < ${dims}; t++) {
          let d = li + t * ${W};
          if (okBh && d < ${hd}) {
            var a = acc[t] * corr;
            for (var c2 = 0; c2 < ${W}; c2++) {
              let j2 = c * ${W} + c2;
              if (j2 < len && ps[c2] > 0.0) { a += ps[c2] * vIn[(bh * S + j2) * ${hd} + d]; }
            }
            acc[t] = a;
          }
        }
        m = mNew;
      }
      for (var t = 0; t < ${dims}; t++) {
        let d = li + t * ${W};
        if (okBh && d < ${hd}) { result[bh * ${hd} + d] = select(0.0, acc[t] / l, l > 0.0); }
      }
    }`;
  }
}

/** cache[r, position + i, :] = kv[r, i, :], written into the cache's own buffer (the output). */
class WriteKVProgram implements WebGPUProgram {
  variableNames = ["kvIn"];
  outputShape: number[];
  shaderKey = "loopWriteKV";
  dispatchLayout = { x: [0] };
  dispatch: [number, number, number];
  workgroupSize: [number, number, number] = [64, 1, 1];
  uniforms = "position : i32,";

  constructor(cacheShape: number[], kvSize: number) {
    this.outputShape = cacheShape;
    this.dispatch = [Math.max(1, Math.ceil(kvSize / 64)), 1, 1];
  }

  getUserCode(): string {
    return `
    // result (the cache) [r, position + i, d] = kv[r, i, d]; every other element is left as it is.
    ${MAIN} {
      let n = uniforms.kvInShape.y;
      let hd = uniforms.kvInShape.z;
      if (index < uniforms.kvInShape.x * n * hd) {
        let r = index / (n * hd);
        let rest = index - r * n * hd;
        let i = rest / hd;
        let d = rest - i * hd;
        let t = uniforms.position + i;
        if (t >= 0 && t < uniforms.outShape.y) {
          result[(r * uniforms.outShape.y + t) * hd + d] = kvIn[index];
        }
      }
    }`;
  }
}

function decodeKernel(args: KernelArgs): tf.TensorInfo {
  const backend = webgpuBackend(args);
  const q = input(args, "q");
  const k = input(args, "k");
  const v = input(args, "v");
  const mask = input(args, "mask");
  const [bh, , hd] = q.shape as [number, number, number];
  const smax = k.shape[1] as number;
  assertShape("decodeAttention q", q.shape, [bh, 1, hd]);
  assertShape("decodeAttention kCache", k.shape, [bh, smax, hd]);
  assertShape("decodeAttention vCache", v.shape, [bh, smax, hd]);
  assertShape("decodeAttention keyMask", mask.shape, [null, smax]);
  const length = (args.attrs?.length as number | undefined) ?? smax;
  const scale = (args.attrs?.scale as number | undefined) ?? 1 / Math.sqrt(hd);
  return backend.runWebGPUProgram(new DecodeAttentionProgram(bh, hd), [q, k, v, mask], "float32", [
    { type: "float32", data: [scale] },
    { type: "int32", data: [length] },
  ]);
}

function writeKVKernel(args: KernelArgs): tf.TensorInfo {
  const backend = webgpuBackend(args);
  const cache = input(args, "cache");
  const kv = input(args, "kv");
  const [bh, smax, hd] = cache.shape as [number, number, number];
  const n = kv.shape[1] as number;
  assertShape("writeKV kv", kv.shape, [bh, null, hd]);
  const position = args.attrs?.position as number;
  if (!(position >= 0 && position + n <= smax))
    throw new Error(
      `writeKV: rows ${position}..${position + n - 1} are outside the cache (${smax})`,
    );
  if (cache.dtype !== "float32" || kv.dtype !== "float32") throw new Error("writeKV: float32 only");
  backend.runWebGPUProgram(
    new WriteKVProgram(cache.shape, bh * n * hd),
    [kv],
    "float32",
    [{ type: "int32", data: [position] }],
    cache,
  );
  // A read-back may have cached the old values on the CPU; the GPU buffer is the truth now.
  const data = backend.tensorMap.get(cache.dataId);
  if (data.resource) data.values = null as unknown as typeof data.values;
  backend.incRef(cache.dataId);
  return { dataId: cache.dataId, shape: cache.shape, dtype: cache.dtype };
}

export function kvCacheKernelConfigs(): tf.KernelConfig[] {
  return [
    { kernelName: DECODE_ATTENTION, backendName: "webgpu", kernelFunc: decodeKernel },
    { kernelName: WRITE_KV, backendName: "webgpu", kernelFunc: writeKVKernel },
  ];
}

/** decodeAttention in plain tfjs ops: softmax over the valid keys (mask 1, j < length), then v. */
export function referenceDecodeAttention(
  q: tf.Tensor3D,
  kCache: tf.Tensor3D,
  vCache: tf.Tensor3D,
  keyMask: tf.Tensor2D,
  opts: DecodeOptions = {},
): tf.Tensor3D {
  return tf.tidy(() => {
    const [bh, , hd] = q.shape;
    const [b, smax] = keyMask.shape;
    const scale = opts.scale ?? 1 / Math.sqrt(hd);
    let allowed: tf.Tensor = keyMask;
    if (opts.length !== undefined && opts.length < smax)
      allowed = allowed.mul(tf.range(0, smax).less(opts.length).toFloat().reshape([1, smax]));
    const a4 = allowed.reshape([b, 1, 1, smax]);
    const scores = tf
      .matMul(q, kCache, false, true)
      .mul(scale)
      .reshape([b, bh / b, 1, smax]);
    const p = tf
      .softmax(scores.add(a4.sub(1).mul(1e9)))
      .mul(a4)
      .reshape([bh, 1, smax]);
    return tf.matMul(p, vCache) as tf.Tensor3D;
  });
}

/** writeKV in plain tfjs ops: a new tensor, the cache with rows position.. replaced by kv. */
export function referenceWriteKV(
  cache: tf.Tensor3D,
  kv: tf.Tensor3D,
  position: number,
): tf.Tensor3D {
  return tf.tidy(() => {
    const [bh, smax, hd] = cache.shape;
    const n = kv.shape[1];
    const parts: tf.Tensor3D[] = [];
    if (position > 0) parts.push(cache.slice([0, 0, 0], [bh, position, hd]));
    parts.push(kv);
    if (position + n < smax)
      parts.push(cache.slice([0, position + n, 0], [bh, smax - position - n, hd]));
    return parts.length === 1 ? (tf.clone(kv) as tf.Tensor3D) : tf.concat(parts, 1);
  });
}

export function runDecodeAttention(
  q: tf.Tensor3D,
  kCache: tf.Tensor3D,
  vCache: tf.Tensor3D,
  keyMask: tf.Tensor2D,
  opts: DecodeOptions = {},
): tf.Tensor3D {
  const attrs: tf.NamedAttrMap = {
    length: opts.length ?? kCache.shape[1],
    scale: opts.scale ?? 1 / Math.sqrt(q.shape[2]),
  };
  return tf
    .engine()
    .runKernel<tf.Tensor3D>(DECODE_ATTENTION, { q, k: kCache, v: vCache, mask: keyMask }, attrs);
}

export function runWriteKV(cache: tf.Tensor3D, kv: tf.Tensor3D, position: number): tf.Tensor3D {
  return tf.engine().runKernel<tf.Tensor3D>(WRITE_KV, { cache, kv }, { position });
}
