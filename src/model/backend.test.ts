import * as tf from "@tensorflow/tfjs";
import { afterAll, describe, expect, it, vi } from "vitest";
import { isSoftwareAdapter, selectBackend } from "./backend";

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
    // tfjs runs wasm single-threaded in Node, whatever is asked.
    expect(info.threads).toEqual({ count: 1, reason: "Node: tfjs runs wasm single-threaded" });
    expect((await selectBackend({ force: "cpu" })).threads).toEqual({
      count: 1,
      reason: "not the wasm backend",
    });
  });

  it("can be forced, and a forced backend that cannot start is a clear error", async () => {
    expect((await selectBackend({ force: "cpu" })).name).toBe("cpu");
    await expect(selectBackend({ force: "webgpu" })).rejects.toThrow(
      /No tfjs backend could start \(webgpu: /,
    );
    expect(tf.getBackend()).toBe("cpu");
  });

  it("passes over a software WebGPU adapter (and webgl) for wasm, unless told not to", async () => {
    const swiftshader = { info: { vendor: "google", architecture: "swiftshader" } };
    vi.stubGlobal("navigator", { gpu: { requestAdapter: async () => swiftshader } });
    try {
      const info = await selectBackend();
      expect(info.name).toBe("wasm");
      expect(info.softwareGpu).toBe("google swiftshader");
      expect(info.attempts[0]?.error).toMatch(/google swiftshader\) is a software fallback/);
      expect(info.attempts[1]?.error).toMatch(/^skipped: the GPU here is emulated/);
      // Allowed (or forced), the adapter is tried: here tfjs's webgpu then fails on the fake.
      const allowed = await selectBackend({ allowSoftwareGpu: true });
      expect(allowed.softwareGpu).toBeUndefined();
      expect(allowed.attempts[0]?.error).not.toMatch(/software fallback/);
    } finally {
      vi.unstubAllGlobals();
      await tf.setBackend("cpu");
    }
  });

  it("installs a WebGPU provider's navigator.gpu where there is none (Node), and says what failed", async () => {
    const g = globalThis as { navigator?: unknown; GPUBufferUsage?: unknown };
    const before = Object.getOwnPropertyDescriptor(globalThis, "navigator");
    const gpu = { requestAdapter: async () => null };
    try {
      if (before) Reflect.deleteProperty(globalThis, "navigator");
      const info = await selectBackend({
        webgpuProvider: async () => ({ gpu, globals: { GPUBufferUsage: { STORAGE: 128 } } }),
      });
      expect((g.navigator as { gpu?: unknown }).gpu).toBe(gpu);
      expect(g.GPUBufferUsage).toEqual({ STORAGE: 128 });
      expect(info.attempts[0]?.error).toMatch(/requestAdapter\(\) returned no adapter/);
      expect(info.name).toBe("wasm");
      // A provider that cannot load (no Vulkan loader, say) is reported, and the next backend runs.
      Reflect.deleteProperty(globalThis, "navigator");
      const failed = await selectBackend({
        webgpuProvider: async () => {
          throw new Error("libvulkan.so.1: cannot open shared object file");
        },
      });
      expect(failed.attempts[0]?.error).toMatch(/libvulkan/);
      expect(failed.name).toBe("wasm");
    } finally {
      Reflect.deleteProperty(globalThis, "navigator");
      Reflect.deleteProperty(globalThis, "GPUBufferUsage");
      if (before) Object.defineProperty(globalThis, "navigator", before);
      await tf.setBackend("cpu");
    }
  });

  it("knows a software adapter by the fallback flag or its name", () => {
    expect(isSoftwareAdapter({ isFallbackAdapter: true }, "acme gpu")).toBe(true);
    expect(isSoftwareAdapter({ info: { isFallbackAdapter: true } }, "acme gpu")).toBe(true);
    expect(isSoftwareAdapter({}, "google swiftshader")).toBe(true);
    expect(isSoftwareAdapter({}, "mesa llvmpipe")).toBe(true);
    expect(isSoftwareAdapter({ isFallbackAdapter: false }, "nvidia ampere")).toBe(false);
  });
});
