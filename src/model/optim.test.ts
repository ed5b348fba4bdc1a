import * as tf from "@tensorflow/tfjs";
import { beforeAll, describe, expect, it } from "vitest";
import { selectBackend } from "./backend";
import { AdamW } from "./optim";

beforeAll(async () => {
  await selectBackend({ force: "cpu" });
});

describe("AdamW", () => {
  it("updates the sgd variables by plain SGD (in proportion to their gradient, undecayed), the rest by Adam", async () => {
    const a = tf.variable(tf.tensor2d([[1, 2]]), true, "opt.a");
    const b = tf.variable(tf.tensor2d([[1, 2]]), true, "opt.b");
    // d/da = [3, 0.01], d/db = [3, 0.01]: Adam's first step moves both entries by about lr.
    const ga = tf.tensor2d([[3, 0.01]]);
    const opt = new AdamW({
      lr: 0.1,
      weightDecay: 0.5,
      clipNorm: 0,
      sgd: { variables: new Set(["opt.b"]), lr: 0.2 },
    });
    await opt.step(() => tf.add(tf.sum(tf.mul(a, ga)), tf.sum(tf.mul(b, ga))) as tf.Scalar, [a, b]);
    const [a0, a1] = Array.from(a.dataSync());
    const [b0, b1] = Array.from(b.dataSync());
    // Adam: w - lr * m_hat / (sqrt(v_hat) + eps) = w - lr * sign(g) on the first step, then decay.
    expect(a0).toBeCloseTo((1 - 0.1) * (1 - 0.1 * 0.5), 5);
    expect(a1).toBeCloseTo((2 - 0.1) * (1 - 0.1 * 0.5), 5);
    // SGD: w - 0.2 * g, no decay.
    expect(b0).toBeCloseTo(1 - 0.2 * 3, 6);
    expect(b1).toBeCloseTo(2 - 0.2 * 0.01, 6);
    // Only Adam's variables have moments.
    const state = await opt.exportState([a, b]);
    expect(state.moments.map((m) => m.index)).toEqual([0]);
    opt.dispose();
    tf.dispose([a, b, ga]);
  });
});
