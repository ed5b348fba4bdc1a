import { expect, type Page, test } from "@playwright/test";
import { describeThreads, planWasmThreads } from "../src/model/wasmThreads";

// The preview server sends COOP/COEP (vite.config.ts), so the page is cross-origin isolated and the
// tfjs wasm backend loads its threaded binary. tfjs-wasm runs half the logical cores' threads (at
// most 8): on the 2-core CI machine that is 1, and the badge says why.

test.describe.configure({ timeout: 180_000 });

/** Requests that failed or were refused (a COEP-blocked resource fails), collected as they come. */
function watchLoads(page: Page): string[] {
  const failed: string[] = [];
  page.on("requestfailed", (r) => failed.push(`${r.url()}: ${r.failure()?.errorText}`));
  page.on("response", (r) => {
    if (r.status() >= 400) failed.push(`${r.url()}: HTTP ${r.status()}`);
  });
  return failed;
}

test("the page is cross-origin isolated; wasm trains, its badge showing its threads", async ({
  page,
}, testInfo) => {
  const failed = watchLoads(page);
  await page.goto("/?preset=tiny&backend=wasm&tasks=1&k=2&turns=1&evalEvery=0");
  const env = await page.evaluate(() => ({
    isolated: crossOriginIsolated,
    sab: typeof SharedArrayBuffer === "function",
    cores: navigator.hardwareConcurrency,
  }));
  testInfo.annotations.push({ type: "runtime", description: JSON.stringify(env) });
  expect(env.isolated, "COOP/COEP should make the page cross-origin isolated").toBe(true);
  expect(env.sab).toBe(true);

  const badge = page.getByTestId("backend");
  await expect(badge).toHaveAttribute("data-backend", "wasm", { timeout: 60_000 });
  testInfo.annotations.push({ type: "badge", description: (await badge.textContent()) ?? "" });
  const expected = planWasmThreads({
    isNode: false,
    crossOriginIsolated: true,
    sharedArrayBuffer: true,
    hardwareConcurrency: env.cores,
  });
  // E.g. "wasm · 4 threads" on 8 cores; "wasm · 1 thread (tfjs-wasm uses at most half the 2
  // logical cores)" on CI.
  await expect(badge).toHaveText(`wasm · ${describeThreads(expected)}`);
  await expect(badge).toHaveAttribute("data-threads", String(expected.count));

  // The threaded backend computes: one training iteration of the tiny model finishes.
  await expect(page.getByTestId("phase")).toHaveText("ready", { timeout: 60_000 });
  await page.getByTestId("train-step").click();
  await expect
    .poll(async () => Number(await page.getByTestId("iteration").textContent()), {
      timeout: 120_000,
    })
    .toBe(1);
  expect(failed, "everything the page loads should load under COEP").toEqual([]);
});

test("?threads=1 runs wasm on one thread and says so", async ({ page }) => {
  await page.goto("/?preset=tiny&backend=wasm&threads=1");
  const badge = page.getByTestId("backend");
  await expect(badge).toHaveAttribute("data-backend", "wasm", { timeout: 60_000 });
  await expect(badge).toHaveText("wasm · 1 thread (1 thread requested)");
  // Not a setting: the app's settings leave it in the URL.
  await expect(page).toHaveURL(/threads=1/);
});

test("the bench page runs wasm on 2 threads where tfjs-wasm sees 4 cores", async ({ page }) => {
  const failed = watchLoads(page);
  // The bench page runs tfjs on the page itself, so this reaches tfjs-wasm's core count: with 4
  // cores it starts 2 threads even on the 2-core CI machine, and they compute.
  await page.addInitScript(() =>
    Object.defineProperty(Navigator.prototype, "hardwareConcurrency", { get: () => 4 }),
  );
  await page.goto("/bench.html?preset=tiny&vocab=64&batch=1&context=16&new=2&reps=1&backends=wasm");
  await page.waitForFunction(() => window.__benchResults !== undefined, null, { timeout: 120_000 });
  const r = await page.evaluate(() => ({
    isolated: crossOriginIsolated,
    results: window.__benchResults,
  }));
  expect(r.isolated).toBe(true);
  expect(r.results?.error).toBeUndefined();
  expect(r.results?.unavailable).toEqual([]);
  expect(r.results?.results[0]?.detail).toBe("simd true, threads true, 2 threads");
  expect(r.results?.results[0]?.trainTokensPerSecond).toBeGreaterThan(0);
  expect(failed).toEqual([]);
});
