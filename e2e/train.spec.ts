import { readFileSync, writeFileSync } from "node:fs";
import { expect, type Page, test } from "@playwright/test";
import { unpackCheckpoint } from "../src/model/checkpoint";

// A tiny untrained model, two tasks x two rollouts, a two-turn budget, on wasm: an iteration takes
// seconds on these CPU-only machines (WebGPU runs on SwiftShader here, much slower).
const QUICK = "/?preset=tiny&backend=wasm&tasks=2&k=2&turns=2&evalEvery=1&evalLimit=2";

async function ready(page: Page) {
  await expect(page.getByTestId("phase")).toHaveText("ready", { timeout: 60_000 });
}

async function iteration(page: Page): Promise<number> {
  return Number(await page.getByTestId("iteration").textContent());
}

/** Opens the quick page (with more settings in `extra`) and steps exactly one iteration. */
async function stepOnce(page: Page, extra = "") {
  await page.goto(QUICK + extra);
  await ready(page);
  await page.getByTestId("train-step").click();
  await expect.poll(() => iteration(page), { timeout: 120_000 }).toBe(1);
}

test.describe.configure({ timeout: 240_000 });

test("on a software WebGPU adapter the badge says so and trains on wasm; webgpu can be forced", async ({
  page,
}) => {
  // These machines have no GPU: Chromium's WebGPU is SwiftShader, which auto mode passes over.
  await page.goto("/?preset=tiny");
  await expect(page.getByTestId("backend")).toHaveAttribute("data-backend", "wasm", {
    timeout: 60_000,
  });
  await expect(page.getByTestId("webgpu-software")).toContainText(/swiftshader/i);
  await page.getByTestId("backend-select").selectOption("webgpu");
  await expect(page.getByTestId("backend")).toHaveAttribute("data-backend", "webgpu", {
    timeout: 60_000,
  });
  await expect(page.getByTestId("backend")).toContainText(/webgpu · .*swiftshader/i);
  await expect(page).toHaveURL(/backend=webgpu/);
  await expect(page.getByTestId("phase")).toHaveText("ready", { timeout: 60_000 });
});

test("without a GPU the shipped base offers a pool of two tasks that shows learning sooner", async ({
  page,
}) => {
  await page.goto("/?backend=wasm&k=6");
  await ready(page);
  const demo = page.getByTestId("cpu-demo");
  await expect(demo).toBeVisible();
  await demo.click();
  // The pool's settings apply (others kept) and land in the URL; the offer is gone.
  await expect(page.getByTestId("pool-input")).toHaveValue("2");
  await expect(page.getByTestId("tasks-input")).toHaveValue("2");
  await expect(page.getByTestId("k-input")).toHaveValue("4");
  await expect(page.getByTestId("seed-input")).toHaveValue("22");
  await expect(page).toHaveURL(/pool=2/);
  await expect(page).toHaveURL(/seed=22/);
  await expect(page).toHaveURL(/backend=wasm/);
  await expect(demo).toHaveCount(0);
  await ready(page);
});

test("LOOP trains: iterations land in the charts while the page stays responsive", async ({
  page,
}) => {
  // A pool of the two tasks: both are replayed every iteration.
  await page.goto(`${QUICK}&pool=2`);
  await ready(page);
  await expect(page.getByTestId("backend")).toHaveAttribute("data-backend", "wasm");
  // An empty chart says what will fill it.
  await expect(page.getByTestId("chart-eval")).toContainText(
    "evaluated after every iteration, on the first 2 dev tasks",
  );
  await page.evaluate(() => {
    const w = window as unknown as { longTasks: number[] };
    w.longTasks = [];
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) w.longTasks.push(e.duration);
    }).observe({ type: "longtask", buffered: false });
  });
  await page.getByTestId("train-start").click();
  await expect.poll(() => iteration(page), { timeout: 180_000 }).toBeGreaterThanOrEqual(2);
  await page.getByTestId("train-pause").click();
  await expect(page.getByTestId("chart-reward")).toHaveAttribute("data-points", /^[2-9]|\d\d/);
  await expect(page.getByTestId("chart-eval")).toHaveAttribute("data-points", /^[1-9]/);
  await expect(page.getByTestId("chart-eval")).not.toContainText("dev tasks");
  await expect(page.getByTestId("advantage-histogram")).toBeVisible();
  // Each pool task's row: the successes of its two rollouts in each iteration so far.
  const rows = page.getByTestId("task-row");
  await expect(rows).toHaveCount(2);
  for (const row of await rows.all())
    expect((await row.textContent())?.match(/\d\/2/g)?.length ?? 0).toBeGreaterThanOrEqual(2);
  const longest = await page.evaluate(() =>
    Math.max(0, ...(window as unknown as { longTasks: number[] }).longTasks),
  );
  console.log("long tasks", longest);
  // Training runs in the worker: the main thread only renders.
  expect(longest).toBeLessThan(200);
  await page.screenshot({ path: "test-results/training.png", fullPage: true });
});

test("a run is live from its first batch of rollouts; pause holds it midway; a reset starts clean", async ({
  page,
}) => {
  // Longer episodes than QUICK's: the first iteration takes a while here.
  await page.goto("/?preset=tiny&backend=wasm&tasks=4&k=4&turns=10&evalEvery=0");
  await ready(page);
  await page.getByTestId("train-start").click();
  await expect(page.getByTestId("phase")).toHaveText("running");
  // Episodes show their turns while the first iteration is still being played.
  await expect(page.getByTestId("live-episode").first()).toBeVisible({ timeout: 60_000 });
  await expect(page.getByTestId("live-progress")).toContainText(/\d+\/16 episodes/);
  expect(await iteration(page)).toBe(0);
  // Pause mid-iteration: the rollouts hold (after the batch in progress).
  await page.getByTestId("train-pause").click();
  await expect(page.getByTestId("phase")).toHaveText("paused");
  await page.waitForTimeout(1500);
  const held = (await page.getByTestId("live-progress").textContent()) ?? "";
  await page.waitForTimeout(2000);
  await expect(page.getByTestId("live-progress")).toHaveText(held);
  expect(await iteration(page)).toBe(0);
  // Reset mid-iteration: the old run stops, nothing of it lands in the new one.
  await page.getByTestId("train-reset").click();
  await ready(page);
  await page.waitForTimeout(2000);
  expect(await iteration(page)).toBe(0);
  await expect(page.getByTestId("chart-reward")).toHaveAttribute("data-points", "0");
  await expect(page.getByTestId("live-episode")).toHaveCount(0);
  // A step of the new run is its iteration 1, and its only point.
  await page.getByTestId("train-step").click();
  await expect.poll(() => iteration(page), { timeout: 120_000 }).toBe(1);
  await expect(page.getByTestId("phase")).toHaveText("paused", { timeout: 30_000 });
  await expect(page.getByTestId("chart-reward")).toHaveAttribute("data-points", "1");
});

test("step runs exactly one iteration; a rollout's turns step with the arrow keys", async ({
  page,
}) => {
  // A grammar-constrained policy (the default): even the untrained model's actions start as calls.
  await stepOnce(page);
  await expect(page.getByTestId("grammar-select")).toHaveValue("on");
  await expect(page.getByTestId("phase")).toHaveText("paused", { timeout: 30_000 });
  await page.waitForTimeout(1500);
  expect(await iteration(page)).toBe(1);
  // The rollouts as they were played: 2 tasks x 2 episodes, each with its latest action.
  await expect(page.getByTestId("live-progress")).toContainText("4/4 episodes finished");
  await expect(page.getByTestId("live-episode")).toHaveCount(4);
  await expect(page.getByTestId("live-episode").first()).toContainText(/turn [12]/);
  const group = page.getByTestId("rollout-group");
  await expect(group.getByTestId("rollout-card")).toHaveCount(2);
  await expect(page.getByTestId("group-formula")).toContainText("Leave-one-out");
  await group.getByTestId("rollout-card").nth(1).click();
  await expect(page.getByTestId("turn-index")).toHaveText(/turn 1 \/ [12]/);
  const total = Number((await page.getByTestId("turn-index").textContent())?.split("/")[1]);
  // The card's click hands the arrow keys to the player.
  await expect(page.getByTestId("episode-player")).toBeFocused();
  await page.keyboard.press("ArrowRight");
  await expect(page.getByTestId("turn-index")).toHaveText(`turn ${Math.min(2, total)} / ${total}`);
  await expect(page.getByTestId("episode-tests")).toBeVisible();
  await page.keyboard.press("ArrowLeft");
  await expect(page.getByTestId("turn-index")).toHaveText(`turn 1 / ${total}`);
  await expect(page.getByTestId("action-tokens")).toHaveText(/^[a-z_]+\.[a-z_]+/);
  // Colour the action by the ratio after the update: every token tells its ratio and entropy.
  await page.getByTestId("colour-select").selectOption("ratio");
  await expect(page.getByTestId("colour-legend")).toContainText("after this iteration's update");
  const first = page.getByTestId("action-tokens").locator(".tok").first();
  await expect(first).toHaveAttribute("title", /ratio = \d+\.\d{3}.*entropy = \d+\.\d{2} nats/);
  await page.screenshot({ path: "test-results/episode.png", fullPage: true });
});

test("settings survive a reload through the URL", async ({ page }) => {
  await page.goto(QUICK);
  await page.getByTestId("algo-select").selectOption("grpo");
  await page.getByTestId("seed-input").fill("7");
  await page.getByTestId("pool-input").fill("3");
  await page.getByTestId("grammar-select").selectOption("off");
  await expect(page).toHaveURL(/algo=grpo/);
  await expect(page).toHaveURL(/seed=7/);
  await expect(page).toHaveURL(/pool=3/);
  await expect(page).toHaveURL(/grammar=off/);
  await page.reload();
  await expect(page.getByTestId("algo-select")).toHaveValue("grpo");
  await expect(page.getByTestId("seed-input")).toHaveValue("7");
  await expect(page.getByTestId("pool-input")).toHaveValue("3");
  await expect(page.getByTestId("grammar-select")).toHaveValue("off");
});

test("a run survives a reload (IndexedDB), exports and imports; a bad file is refused", async ({
  page,
}, info) => {
  await stepOnce(page);
  await expect(page.getByTestId("run-item")).toHaveCount(1);
  await page.reload();
  await ready(page);
  await expect(page.getByTestId("run-item")).toHaveCount(1);
  // Export the current (empty) run? Step once so it has metrics, then export it.
  await page.getByTestId("train-step").click();
  await expect.poll(() => iteration(page), { timeout: 120_000 }).toBe(1);
  const download = page.waitForEvent("download");
  await page.getByTestId("run-export").click();
  const file = info.outputPath("run.json");
  await (await download).saveAs(file);
  const run = JSON.parse(readFileSync(file, "utf8"));
  expect(run.metrics).toHaveLength(1);
  const bad = info.outputPath("bad.json");
  writeFileSync(bad, JSON.stringify({ format: "something else" }));
  await page.getByTestId("run-import").setInputFiles(bad);
  await expect(page.getByTestId("runs-message")).toContainText("Refused");
  await expect(page.getByTestId("run-item")).toHaveCount(2);
  await page.getByTestId("run-import").setInputFiles(file);
  await expect(page.getByTestId("runs-message")).toContainText("Imported");
  await expect(page.getByTestId("run-item")).toHaveCount(3);
});

/** The current run's metrics, through its export (what a person downloads). */
async function exportedMetrics(page: Page, path: string) {
  const download = page.waitForEvent("download");
  await page.getByTestId("run-export").click();
  await (await download).saveAs(path);
  return JSON.parse(readFileSync(path, "utf8")).metrics as {
    iteration: number;
    meanReward: number;
    policyLoss: number;
    entropy: number;
  }[];
}

test("a run continues after a reload from its last iteration, as if it never stopped", async ({
  page,
}, info) => {
  // Two iterations straight, as the reference.
  await stepOnce(page);
  await expect(page.getByTestId("phase")).toHaveText("paused", { timeout: 30_000 });
  await page.getByTestId("train-step").click();
  await expect.poll(() => iteration(page), { timeout: 120_000 }).toBe(2);
  await expect(page.getByTestId("phase")).toHaveText("paused", { timeout: 30_000 });
  const straight = await exportedMetrics(page, info.outputPath("straight.json"));
  // One iteration of a fresh run (same settings), then the tab is reloaded.
  await page.getByTestId("train-reset").click();
  await ready(page);
  await page.getByTestId("train-step").click();
  await expect.poll(() => iteration(page), { timeout: 120_000 }).toBe(1);
  await expect(page.getByTestId("phase")).toHaveText("paused", { timeout: 30_000 });
  await page.reload();
  await ready(page);
  expect(await iteration(page)).toBe(0);
  // Both stored runs can be continued; the newest is listed first.
  await expect(page.getByTestId("run-continue")).toHaveCount(2);
  await expect(page.getByTestId("run-continue").first()).toHaveText("continue from iteration 1");
  await page.getByTestId("run-continue").first().click();
  await expect(page.getByTestId("runs-message")).toContainText("from iteration 1");
  await ready(page);
  expect(await iteration(page)).toBe(1);
  await expect(page.getByTestId("chart-reward")).toHaveAttribute("data-points", "1");
  await page.getByTestId("train-step").click();
  await expect.poll(() => iteration(page), { timeout: 120_000 }).toBe(2);
  await expect(page.getByTestId("phase")).toHaveText("paused", { timeout: 30_000 });
  const resumed = await exportedMetrics(page, info.outputPath("resumed.json"));
  expect(resumed.map((m) => m.iteration)).toEqual([1, 2]);
  for (const key of ["meanReward", "policyLoss", "entropy"] as const)
    expect(resumed[1]?.[key], key).toBe(straight[1]?.[key]);
});

test("checkpoints save to the browser and load back; a download uploads back; a bad file is refused", async ({
  page,
}, info) => {
  await stepOnce(page);
  await page.getByTestId("checkpoint-save").click();
  await expect(page.getByTestId("runs-message")).toContainText("Saved checkpoint loop-seed0-iter1");
  await expect(page.getByTestId("checkpoint-list")).toHaveValue("loop-seed0-iter1");
  await page.getByTestId("checkpoint-load").click();
  await expect(page.getByTestId("runs-message")).toHaveText("Loaded checkpoint loop-seed0-iter1");
  const download = page.waitForEvent("download");
  await page.getByTestId("checkpoint-download").click();
  const file = info.outputPath("model.ckpt");
  await (await download).saveAs(file);
  // It says how the policy acts (the grammar, the page's default), so `npm run eval` decodes it so.
  const { manifest } = unpackCheckpoint(new Uint8Array(readFileSync(file)));
  expect((manifest as { meta: { decoding?: string } }).meta.decoding).toBe("grammar");
  const bad = info.outputPath("bad.ckpt");
  const bytes = readFileSync(file);
  writeFileSync(bad, bytes.subarray(0, Math.floor(bytes.length / 2)));
  await page.getByTestId("checkpoint-upload").setInputFiles(bad);
  await expect(page.getByTestId("runs-message")).toContainText("Refused bad.ckpt");
  await page.getByTestId("checkpoint-upload").setInputFiles(file);
  await expect(page.getByTestId("runs-message")).toHaveText("Loaded model.ckpt");
  // The model still trains after the refused file and the loads.
  await page.getByTestId("train-step").click();
  await expect.poll(() => iteration(page), { timeout: 120_000 }).toBe(2);
});
