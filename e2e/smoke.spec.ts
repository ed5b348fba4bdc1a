import { expect, test } from "@playwright/test";

test("page loads and headless WebGPU has an adapter", async ({ page }, testInfo) => {
  await page.goto("/");
  await expect(page.getByTestId("app-title")).toHaveText("LOOP Playground");
  await expect(page.getByTestId("app-title")).toBeVisible();

  const gpu = await page.evaluate(async () => {
    const nav = navigator as Navigator & {
      gpu?: {
        requestAdapter(): Promise<{ info?: { vendor?: string; architecture?: string } } | null>;
      };
    };
    if (!nav.gpu) return { hasGpu: false, adapter: false, vendor: "", architecture: "" };
    const adapter = await nav.gpu.requestAdapter();
    return {
      hasGpu: true,
      adapter: adapter !== null,
      vendor: adapter?.info?.vendor ?? "",
      architecture: adapter?.info?.architecture ?? "",
    };
  });
  testInfo.annotations.push({ type: "webgpu", description: JSON.stringify(gpu) });
  expect(gpu.hasGpu, "navigator.gpu should exist").toBe(true);
  expect(gpu.adapter, "navigator.gpu.requestAdapter() should return an adapter").toBe(true);

  await page.screenshot({ path: testInfo.outputPath("smoke.png"), fullPage: true });
});
