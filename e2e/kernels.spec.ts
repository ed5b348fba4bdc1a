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
  expect(results.checks.length).toBeGreaterThanOrEqual(11);
  for (const check of results.checks) {
    for (const [what, diff] of Object.entries(check.diffs))
      expect(diff, `${check.name}: max abs diff of ${what}`).toBeLessThan(1e-4);
    if (check.dispatches)
      expect(
        check.dispatches.kernel,
        `${check.name}: kernel dispatches vs reference (${JSON.stringify(check.dispatches)})`,
      ).toBeLessThan(check.dispatches.reference);
  }
  const bench = results.dispatchBench ?? {};
  expect(bench.kernelForward).toBeLessThan(bench.stockCoreForward ?? 0);
  expect(bench.kernelForwardBackward).toBeLessThan(bench.stockCoreForwardBackward ?? 0);
});
