import type { Trajectory } from "../agent/modelRollout";
import { contextBudget, contextStarts, segments } from "../agent/transcript";
import { bucketLength } from "../model/buckets";
import { packBatch } from "../model/score";

/**
 * A trajectory as the trainer scores it: the very token ids that were sampled, cut into rows by
 * the same context rule the sampler used (never re-tokenized).
 */
export interface TrainRow {
  /** Index of the trajectory in the iteration. */
  traj: number;
  tokens: number[];
  /** 1 on the agent tokens this row trains. */
  mask: number[];
  /** Turn of each masked-in token, -1 elsewhere. */
  turnOf: number[];
  /** Sampling log-prob of each masked-in token (0 elsewhere). */
  sampleLogp: number[];
  /** Index of each masked-in token within its turn's action, -1 elsewhere. */
  indexInTurn: number[];
}

/** The rows of one trajectory; throws if its recorded context starts disagree with the rule. */
export function trajectoryRows(t: Trajectory, index: number, context: number): TrainRow[] {
  const budget = contextBudget(context);
  const starts = contextStarts(
    t.prompt.length,
    t.turns.map((x) => x.action.length + x.observation.length),
    budget,
  );
  starts.forEach((s, i) => {
    if (t.starts[i] !== s)
      throw new Error(
        `trajectory ${t.taskId}: turn ${i} was sampled from context start ${t.starts[i]}, the rule gives ${s}`,
      );
  });
  return segments(t.prompt, t.turns, budget).map((seg) => {
    const sampleLogp = new Array<number>(seg.tokens.length).fill(0);
    const indexInTurn = new Array<number>(seg.tokens.length).fill(-1);
    const seen = new Map<number, number>();
    seg.turnOf.forEach((turn, k) => {
      if (turn < 0) return;
      const n = seen.get(turn) ?? 0;
      sampleLogp[k] = t.logprobs[turn]?.[n] ?? 0;
      indexInTurn[k] = n;
      seen.set(turn, n + 1);
    });
    return {
      traj: index,
      tokens: seg.tokens,
      mask: seg.agentMask,
      turnOf: seg.turnOf,
      sampleLogp,
      indexInTurn,
    };
  });
}

/** Rows padded to one bucket length, in the scorer's column space (column c predicts token c+1). */
export interface PackedRows {
  B: number;
  T: number;
  ids: Int32Array;
  targets: Int32Array;
  mask: Float32Array;
  sampleLogp: Float32Array;
  turnOf: Int32Array[];
  trajectoryOfRow: number[];
}

export function packRows(rows: readonly TrainRow[], context: number): PackedRows {
  const { ids, targets, mask, B, T } = packBatch(
    rows.map((r) => r.tokens),
    rows.map((r) => r.mask),
    context,
  );
  const sampleLogp = new Float32Array(B * T);
  const turnOf = rows.map((r, b) => {
    const out = new Int32Array(T).fill(-1);
    for (let c = 0; c < T && c + 1 < r.tokens.length; c++) {
      out[c] = r.turnOf[c + 1] as number;
      sampleLogp[b * T + c] = r.sampleLogp[c + 1] as number;
    }
    return out;
  });
  return { B, T, ids, targets, mask, sampleLogp, turnOf, trajectoryOfRow: rows.map((r) => r.traj) };
}

/**
 * Groups trajectories' rows into micro-batches of at most `tokens` padded tokens (B x bucket),
 * shortest first. With `split` false a trajectory's rows stay together (a trajectory-level ratio
 * spans them), so one long trajectory (many context windows) can exceed `tokens`; with `split`
 * true each row may go to its own micro-batch (the losses then need the trajectory's agent-token
 * count from `Grouping.agentTokensOfRow`).
 */
export function microBatches(
  byTrajectory: readonly TrainRow[][],
  context: number,
  tokens: number,
  split = false,
): TrainRow[][] {
  const groups = split ? byTrajectory.flat().map((r) => [r]) : byTrajectory;
  const len = (rows: readonly TrainRow[]) =>
    Math.max(...rows.map((r) => bucketLength(Math.max(r.tokens.length - 1, 1), context)));
  const sorted = groups.filter((r) => r.length > 0).sort((a, b) => len(a) - len(b));
  const out: TrainRow[][] = [];
  let current: TrainRow[] = [];
  for (const rows of sorted) {
    const T = Math.max(len(rows), current.length ? len(current) : 0);
    if (current.length > 0 && (current.length + rows.length) * T > tokens) {
      out.push(current);
      current = [];
    }
    current.push(...rows);
  }
  if (current.length > 0) out.push(current);
  return out;
}

/** Agent tokens of each trajectory over all its rows, by trajectory index. */
export function agentTokensByTrajectory(rows: Iterable<TrainRow>): Map<number, number> {
  const n = new Map<number, number>();
  for (const r of rows) n.set(r.traj, (n.get(r.traj) ?? 0) + r.mask.reduce((a, x) => a + x, 0));
  return n;
}
