import * as tf from "@tensorflow/tfjs";
import "@tensorflow/tfjs-backend-wasm";
import { afterAll, describe, expect, it } from "vitest";
import { installMatMulGradient, logSumExpRows, mm, mmT } from "./ops";

const close = (a: tf.Tensor, b: tf.Tensor) => {
  const d = tf.tidy(() => tf.max(tf.abs(tf.sub(a, b))).dataSync()[0] as number);
  expect(d).toBeLessThan(1e-4);
};

afterAll(async () => {
  await tf.setBackend("cpu");
});

describe.each(["cpu", "wasm"])("fast-path ops on %s", (backend) => {
  it("every transposed product and its gradient equal the plain formulas", async () => {
    await tf.setBackend(backend);
    installMatMulGradient();
    const a = tf.randomNormal([5, 7], 0, 1, "float32", 1);
    const b = tf.randomNormal([7, 3], 0, 1, "float32", 2);
    const dy = tf.randomNormal([5, 3], 0, 1, "float32", 3);
    for (const [tA, tB] of [
      [false, false],
      [false, true],
      [true, false],
      [true, true],
    ] as const) {
      const A = tA ? tf.transpose(a) : a;
      const B = tB ? tf.transpose(b) : b;
      const grads = tf.grads((x: tf.Tensor, y: tf.Tensor) => tf.matMul(x, y, tA, tB))([A, B], dy);
      // C = A B: dA = dC B^T, dB = A^T dC (transposed back where the operand was transposed).
      const dA = tf.matMul(dy, tf.transpose(b));
      const dB = tf.matMul(tf.transpose(a), dy);
      close(tf.matMul(A, B, tA, tB), tf.matMul(a, b));
      close(grads[0] as tf.Tensor, tA ? tf.transpose(dA) : dA);
      close(grads[1] as tf.Tensor, tB ? tf.transpose(dB) : dB);
    }
    close(mm(a as tf.Tensor2D, b as tf.Tensor2D), tf.matMul(a, b));
    close(mmT(a as tf.Tensor2D, tf.transpose(b) as tf.Tensor2D), tf.matMul(a, b));
  });

  it("a clone keeps its values after its source is disposed, and nothing leaks", async () => {
    await tf.setBackend(backend);
    installMatMulGradient();
    const before = tf.memory();
    for (let i = 0; i < 20; i++) {
      const x = tf.tensor2d([
        [1, 2],
        [3, 4],
      ]);
      const y = tf.clone(x);
      x.dispose();
      expect(Array.from(y.dataSync())).toEqual([1, 2, 3, 4]);
      // A gradient saves (clones) its inputs; the saved copies must go with the tape.
      const g = tf.grad((z: tf.Tensor) => tf.sum(tf.mul(z, z)))(y);
      expect(Array.from(g.dataSync())).toEqual([2, 4, 6, 8]);
      tf.dispose([y, g]);
    }
    expect(tf.memory().numTensors).toBe(before.numTensors);
    expect(tf.memory().numBytes).toBe(before.numBytes);
  });

  it("the row log-sum-exp has the stock value and the softmax as its gradient", async () => {
    await tf.setBackend(backend);
    const x = tf.randomNormal([4, 9], 0, 3, "float32", 4) as tf.Tensor2D;
    const dy = tf.randomNormal([4], 0, 1, "float32", 5);
    close(logSumExpRows(x), tf.logSumExp(x, 1));
    const g = tf.grad((z: tf.Tensor) => logSumExpRows(z as tf.Tensor2D))(x, dy);
    close(g, tf.mul(tf.softmax(x), tf.expandDims(dy, 1)));
  });
});
