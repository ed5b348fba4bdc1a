import { expect, test } from "@playwright/test";
import type { KernelResults } from "../src/ui/kernels/main";

// The custom WebGPU kernels (src/model/webgpu) against plain tfjs ops, in headless Chromium on
// SwiftShader: kernels.html runs every check and leaves its results in window.__kernelResults.
test("custom WebGPU kernels match the reference ops with fewer dispatches", async ({
  page,
}, testInfo) => {
  // SwiftShader compiles and runs the shaders on 2 CPU cores: minutes, not seconds.
  test.setTimeout(300_000);
  page.on("console", (msg) => {
    if (msg.text().startsWith("[kernels]")) console.log(msg.text());
  });
  await page.goto("/kernels.html");
  await page.waitForFunction(() => window.__kernelResults !== undefined, undefined, {
    timeout: 290_000,
    polling: 1000,
  });
  const results = (await page.evaluate(() => window.__kernelResults)) as KernelResults;
  testInfo.annotations.push({ type: "kernels", description: JSON.stringify(results) });

  expect(results.error, "the page should finish without an error").toBeUndefined();
  expect(results.backend).toBe("webgpu");
  expect(results.gpuErrors, "no WebGPU validation or shader errors").toEqual([]);
  expect(results.checks.length).toBeGreaterThanOrEqual(16);
  // The decoding step's kernels (webgpu/decodestep.ts): one block, and both heads; the packed
  // training path (linear.ts, attention.ts).
  for (const name of ["decodeLayer", "copyDecodeHead", "linear", "attentionPacked"])
    expect(
      results.checks.some((c) => c.name.startsWith(name)),
      `${name} ran`,
    ).toBe(true);
  for (const check of results.checks) {
    for (const [what, diff] of Object.entries(check.diffs))
      expect(diff, `${check.name}: max abs diff of ${what}`).toBeLessThan(1e-4);
    if (check.dispatches)
      expect(
        check.dispatches.kernel,
        `${check.name}: kernel dispatches vs reference (${JSON.stringify(check.dispatches)})`,
      ).toBeLessThan(check.dispatches.reference);
  }
  // The fused AdamW step (webgpu/adamw.ts) against the plain ops: same weights and moments within
  // 1e-5 relative after 6 steps (clipped, unclipped, shared buffers, skipped), a 5x cut at least.
  const adamW = results.checks.find((c) => c.name.startsWith("adamW"));
  expect(adamW, "the AdamW check ran").toBeDefined();
  for (const what of ["weightsRel", "mRel", "vRel", "gradNormRel"])
    expect(adamW?.diffs[what], `adamW ${what}`).toBeLessThan(1e-5);
  expect(adamW?.diffs.stateMismatch, "adamW step count, moments, skipped steps").toBe(0);
  expect(adamW?.diffs.snapshotDriftFused, "a clone of a weight keeps its values").toBe(0);
  const opt = results.optimizer ?? {};
  expect((opt.fusedDispatches ?? Number.POSITIVE_INFINITY) * 5).toBeLessThanOrEqual(
    opt.stockDispatches ?? 0,
  );
  const bench = results.dispatchBench ?? {};
  expect(bench.kernelForward).toBeLessThan(bench.stockCoreForward ?? 0);
  expect(bench.kernelForwardBackward).toBeLessThan(bench.stockCoreForwardBackward ?? 0);
});
