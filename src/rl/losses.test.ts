import * as tf from "@tensorflow/tfjs";
import { beforeAll, describe, expect, it } from "vitest";
import { selectBackend } from "../model/backend";
import {
  clipBounds,
  clippedPolicyLoss,
  type Grouping,
  imitationLoss,
  referenceKl,
  valueLoss,
} from "./losses";
import { isClipped } from "./tokenStats";

beforeAll(async () => {
  await selectBackend({ force: "cpu" });
});

const ln = Math.log;
const t2 = (rows: number[][]) => tf.tensor2d(rows);
const val = (t: tf.Tensor) => t.dataSync()[0] as number;

/**
 * Two trajectories, T = 3. Row 0: agent tokens 0 and 1, A = +1, ratios 1.5 and 0.5 (token 2 is an
 * observation). Row 1: agent token 0 only, A = -2, ratio 0.8.
 * Paper clip [0.9, 1.1]: row 0 -> min(1.5, 1.1) = 1.1 (clipped), min(0.5, 0.9) = 0.5; mean 0.8.
 * Row 1 -> min(-1.6, 0.9 * -2 = -1.8) = -1.8 (clipped). Loss = -(0.8 - 1.8) / divisor.
 */
const logp = () =>
  t2([
    [ln(1.5), ln(0.5), 7],
    [ln(0.8), 3, -2],
  ]);
const old = () =>
  t2([
    [0, 0, 0],
    [0, 0, 0],
  ]);
const mask = () =>
  t2([
    [1, 1, 0],
    [1, 0, 0],
  ]);
const adv = () => tf.tensor1d([1, -2]);

describe("clipped policy loss (per token)", () => {
  it("matches the hand-worked numbers with the paper's clip range", () => {
    tf.tidy(() => {
      const r = clippedPolicyLoss(
        { logp: logp(), oldLogp: old(), mask: mask(), advantages: adv() },
        { eps: 0.1, clip: "paper", divisor: 4 },
      );
      expect(val(r.loss)).toBeCloseTo(0.25, 6);
      expect(val(r.clipFraction)).toBeCloseTo(2 / 3, 6);
    });
  });

  it("the reference code's range [1/(1+eps), 1+eps] changes only the lower clip", () => {
    expect(clipBounds(0.1, "code")[0]).toBeCloseTo(1 / 1.1, 12);
    tf.tidy(() => {
      const r = clippedPolicyLoss(
        { logp: logp(), oldLogp: old(), mask: mask(), advantages: adv() },
        { eps: 0.1, clip: "code", divisor: 4 },
      );
      // Row 1: min(-1.6, -2/1.1) = -1.81818...; row 0 unchanged (0.8).
      expect(val(r.loss)).toBeCloseTo(-(0.8 - 2 / 1.1) / 4, 6);
    });
  });

  it("divides by the fixed minibatch size, not by the rollouts present", () => {
    tf.tidy(() => {
      const at = (divisor: number) =>
        val(
          clippedPolicyLoss(
            { logp: logp(), oldLogp: old(), mask: mask(), advantages: adv() },
            { eps: 0.1, clip: "paper", divisor },
          ).loss,
        );
      expect(at(32)).toBeCloseTo((0.25 * 4) / 32, 7);
    });
  });

  it("environment tokens change nothing: neither the loss nor its gradient", () => {
    tf.tidy(() => {
      const f = (lp: tf.Tensor) =>
        clippedPolicyLoss(
          { logp: lp as tf.Tensor2D, oldLogp: old(), mask: mask(), advantages: adv() },
          { eps: 0.1, clip: "paper", divisor: 4 },
        ).loss;
      const other = t2([
        [ln(1.5), ln(0.5), -40],
        [ln(0.8), 12, 0.3],
      ]);
      expect(val(f(other))).toBeCloseTo(val(f(logp())), 7);
      // Gradient at ratio 1 (no clipping active): -A / (|a(x)| * divisor) on agent tokens, 0 elsewhere.
      const g = tf.grad(f)(old()).arraySync() as number[][];
      expect(g[0]?.[0]).toBeCloseTo(-1 / (2 * 4), 6);
      expect(g[0]?.[1]).toBeCloseTo(-1 / (2 * 4), 6);
      expect(g[1]?.[0]).toBeCloseTo(2 / (1 * 4), 6);
      expect(Math.abs(g[0]?.[2] as number)).toBe(0);
      expect(Math.abs(g[1]?.[1] as number)).toBe(0);
      expect(Math.abs(g[1]?.[2] as number)).toBe(0);
    });
  });

  it("at ratio 1 (before any update) nothing is clipped and the k3 KL is 0", () => {
    tf.tidy(() => {
      const r = clippedPolicyLoss(
        { logp: old(), oldLogp: old(), mask: mask(), advantages: adv() },
        { eps: 0.1, clip: "paper", divisor: 2 },
      );
      expect(val(r.clipFraction)).toBe(0);
      expect(val(r.approxKl)).toBeCloseTo(0, 7);
      expect(val(r.meanRatio)).toBeCloseTo(1, 7);
      // Loss = -(mean A over trajectories' token means) / divisor = -(1 - 2) / 2.
      expect(val(r.loss)).toBeCloseTo(0.5, 6);
    });
  });
});

describe("ratio levels", () => {
  // One row, three agent tokens: turn 0 has log-ratios ln 2 and ln 0.5 (product 1), turn 1 ln 1.2.
  const lp = () => t2([[ln(2), ln(0.5), ln(1.2)]]);
  const zeros = () => t2([[0, 0, 0]]);
  const ones = () => t2([[1, 1, 1]]);
  const run = (ratio: "token" | "turn" | "trajectory") =>
    tf.tidy(() =>
      val(
        clippedPolicyLoss(
          { logp: lp(), oldLogp: zeros(), mask: ones(), advantages: tf.tensor1d([1]) },
          {
            eps: 0.1,
            clip: "paper",
            divisor: 1,
            ratio,
            grouping: { trajectoryOfRow: [0], turnOfToken: [Int32Array.from([0, 0, 1])] },
          },
        ).loss,
      ),
    );

  it("per token: min(2, 1.1), min(0.5, 0.9), min(1.2, 1.1)", () => {
    expect(run("token")).toBeCloseTo(-(1.1 + 0.5 + 1.1) / 3, 6);
  });

  it("per turn: turn 0's ratio is 2 x 0.5 = 1, turn 1's is 1.2 (clipped to 1.1)", () => {
    expect(run("turn")).toBeCloseTo(-(1 + 1 + 1.1) / 3, 6);
  });

  it("per trajectory: one ratio 1.2 for every token, clipped to 1.1", () => {
    expect(run("trajectory")).toBeCloseTo(-1.1, 6);
  });

  it("a trajectory split over two rows is averaged over all its agent tokens", () => {
    tf.tidy(() => {
      const r = clippedPolicyLoss(
        {
          logp: t2([
            [0, 0],
            [0, 0],
          ]),
          oldLogp: t2([
            [0, 0],
            [0, 0],
          ]),
          mask: t2([
            [1, 1],
            [1, 0],
          ]),
          advantages: tf.tensor1d([3, 3]),
        },
        { eps: 0.1, clip: "paper", divisor: 1, grouping: { trajectoryOfRow: [5, 5] } },
      );
      // One trajectory of 3 agent tokens, each contributing 3: its mean is 3, not 3 + 3.
      expect(val(r.loss)).toBeCloseTo(-3, 6);
    });
  });

  it("a trajectory's rows split over two calls (agentTokensOfRow) add up to the loss and gradient of one call", () => {
    // One trajectory, two rows (3 + 1 agent tokens), per-token and per-turn ratios.
    const lp = [
      [ln(1.3), ln(0.7), ln(1.02), 4],
      [ln(0.95), 1, 2, 3],
    ];
    const m = [
      [1, 1, 1, 0],
      [1, 0, 0, 0],
    ];
    const turns = [Int32Array.from([0, 0, 1, -1]), Int32Array.from([2, -1, -1, -1])];
    for (const ratio of ["token", "turn"] as const) {
      const lossAndGrad = (rows: number[], grouping: (rows: number[]) => Grouping) => {
        const x = tf.variable(t2(rows.map((b) => lp[b] as number[])));
        const f = () =>
          clippedPolicyLoss(
            {
              logp: x as tf.Tensor2D,
              oldLogp: tf.zerosLike(x) as tf.Tensor2D,
              mask: t2(rows.map((b) => m[b] as number[])),
              advantages: tf.tensor1d(rows.map(() => 0.5)),
            },
            { eps: 0.1, clip: "paper", divisor: 2, ratio, grouping: grouping(rows) },
          ).loss;
        const { value, grads } = tf.variableGrads(f, [x]);
        const out = {
          loss: val(value),
          grad: Array.from(Object.values(grads)[0]?.dataSync() ?? []),
        };
        x.dispose();
        return out;
      };
      const whole = lossAndGrad([0, 1], (rows) => ({
        trajectoryOfRow: rows.map(() => 0),
        turnOfToken: rows.map((b) => turns[b] as Int32Array),
      }));
      const parts = [[0], [1]].map((rows) =>
        lossAndGrad(rows, (r) => ({
          trajectoryOfRow: r.map(() => 0),
          turnOfToken: r.map((b) => turns[b] as Int32Array),
          agentTokensOfRow: r.map(() => 4),
        })),
      );
      expect(parts.reduce((a, p) => a + p.loss, 0)).toBeCloseTo(whole.loss, 6);
      expect(
        [...(parts[0]?.grad ?? []), ...(parts[1]?.grad ?? [])].map((g) => g.toFixed(6)),
      ).toEqual(whole.grad.map((g) => g.toFixed(6)));
      // Not the same as treating each part as a whole trajectory.
      const alone = lossAndGrad([1], (r) => ({
        trajectoryOfRow: r.map(() => 0),
        turnOfToken: r.map((b) => turns[b] as Int32Array),
      }));
      expect(alone.loss).not.toBeCloseTo(parts[1]?.loss ?? 0, 3);
    }
  });

  it("a per-trajectory ratio refuses split rows", () => {
    tf.tidy(() => {
      expect(() =>
        clippedPolicyLoss(
          { logp: logp(), oldLogp: old(), mask: mask(), advantages: adv() },
          {
            eps: 0.1,
            clip: "paper",
            divisor: 1,
            ratio: "trajectory",
            grouping: { trajectoryOfRow: [0, 0], agentTokensOfRow: [3, 3] },
          },
        ),
      ).toThrow(/all of a trajectory's rows/);
    });
  });
});

describe("other token losses", () => {
  it("imitation: minus the mean agent-token log-prob per trajectory, over the divisor", () => {
    tf.tidy(() => {
      const l = imitationLoss(
        t2([
          [-1, -3, -100],
          [-2, -100, -100],
        ]),
        mask(),
        2,
      );
      expect(val(l)).toBeCloseTo((2 + 2) / 2, 6);
    });
  });

  it("k3 KL to the reference is 0 at equality and positive otherwise", () => {
    tf.tidy(() => {
      expect(val(referenceKl(old(), old(), mask(), 1))).toBeCloseTo(0, 7);
      // Row 0 token 0: d = 0 - ln 1.5 -> e^d - d - 1.
      const d0 = -ln(1.5);
      const d1 = -ln(0.5);
      const d2 = -ln(0.8);
      const want =
        ((Math.exp(d0) - d0 - 1 + Math.exp(d1) - d1 - 1) / 2 + Math.exp(d2) - d2 - 1) / 2;
      expect(val(referenceKl(logp(), old(), mask(), 2))).toBeCloseTo(want, 6);
    });
  });

  it("value loss: 1/2 (V - R)^2 on agent tokens", () => {
    tf.tidy(() => {
      const v = valueLoss(
        t2([
          [0.5, 1, 9],
          [0, 9, 9],
        ]),
        tf.tensor1d([1, 1]),
        mask(),
        2,
      );
      expect(val(v)).toBeCloseTo(((0.125 + 0) / 2 + 0.5) / 2, 6);
    });
  });
});

describe("isClipped (the player's clipped-or-not)", () => {
  it("is the flat branch of min(rA, clip(r)A)", () => {
    const b: [number, number] = [0.9, 1.1];
    expect(isClipped(1.2, 1, b)).toBe(true); // A > 0, r above 1 + eps
    expect(isClipped(0.8, 1, b)).toBe(false); // A > 0, r below: the unclipped branch is the min
    expect(isClipped(0.8, -1, b)).toBe(true); // A < 0, r below 1 - eps
    expect(isClipped(1.2, -1, b)).toBe(false);
    expect(isClipped(1.05, 1, b)).toBe(false);
    expect(isClipped(5, 0, b)).toBe(false);
    expect(isClipped(5, 1, null)).toBe(false); // no clip (REINFORCE-style objectives)
  });
});
