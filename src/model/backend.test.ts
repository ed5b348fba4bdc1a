import * as tf from "@tensorflow/tfjs";
import { afterAll, describe, expect, it } from "vitest";
import { selectBackend } from "./backend";

afterAll(async () => {
  await tf.setBackend("cpu");
});

describe("selectBackend", () => {
  it("in Node falls through webgpu and webgl to wasm, saying why", async () => {
    const info = await selectBackend();
    expect(info.name).toBe("wasm");
    expect(tf.getBackend()).toBe("wasm");
    expect(info.attempts.map((a) => a.name)).toEqual(["webgpu", "webgl", "wasm"]);
    expect(info.attempts[0]?.error).toMatch(/WebGPU not supported/);
  });

  it("can be forced, and a forced backend that cannot start is a clear error", async () => {
    expect((await selectBackend({ force: "cpu" })).name).toBe("cpu");
    await expect(selectBackend({ force: "webgpu" })).rejects.toThrow(
      /No tfjs backend could start \(webgpu: /,
    );
    expect(tf.getBackend()).toBe("cpu");
  });
});
