import { expect, type Page, test } from "@playwright/test";
import { createExpert } from "../src/agent/expert";
import { runEpisode } from "../src/agent/run";
import { createEpisode, findTask, listTasks } from "../src/env";

/** The expert's actions for a task, computed in Node with the same episode the page uses. */
function expertActions(taskId: string): string[] {
  const task = findTask(taskId);
  if (!task) throw new Error(`no task ${taskId}`);
  const run = runEpisode(createEpisode(taskId, { mode: "eval" }), createExpert(task));
  expect(run.evaluation.success, `the expert solves ${taskId}`).toBe(true);
  return run.actions;
}

async function openTask(page: Page, taskId: string) {
  await page.goto("/?tab=world");
  const select = page.getByTestId("task-select");
  // The tasks are built split by split after the tab opens.
  await expect(select.locator(`option[value="${taskId}"]`)).toBeAttached({ timeout: 30_000 });
  await select.selectOption(taskId);
  const task = listTasks("all").find((t) => t.id === taskId);
  await expect(page.getByTestId("play-prompt")).toContainText(task?.instruction ?? "");
}

async function act(page: Page, action: string) {
  const input = page.getByTestId("play-input");
  await input.fill(action);
  await input.press("Enter");
}

test("a human plays a task to success with the expert's actions", async ({ page }) => {
  const taskId = listTasks("dev")[0]?.id ?? "";
  const actions = expertActions(taskId);
  await openTask(page, taskId);
  for (const [i, action] of actions.entries()) {
    // Alternate Enter and the Send button: both submit.
    if (i % 2 === 0) await act(page, action);
    else {
      await page.getByTestId("play-input").fill(action);
      await page.getByTestId("play-submit").click();
    }
    await expect(page.getByTestId("turn")).toHaveCount(i + 1);
    await expect(page.getByTestId("turn-action").nth(i)).toHaveText(action);
  }
  const results = page.getByTestId("test-results");
  await expect(results).toBeVisible();
  await expect(results).toHaveAttribute("data-success", "true");
  const tests = page.getByTestId("test-result");
  expect(await tests.count()).toBeGreaterThan(0);
  await expect(page.locator('[data-testid="test-result"][data-passed="false"]')).toHaveCount(0);
  await expect(page.getByTestId("play-reward")).toHaveText("1.00");
  await expect(page.getByTestId("play-input")).toBeDisabled();

  // The episode's database, live: the payment is there, highlighted.
  await page.getByTestId("world-view-data").click();
  await page.getByTestId("data-source-episode").check();
  await expect(page.getByTestId("episode-changes")).toContainText("transactions#");
  await page.getByTestId("table-transactions").click();
  await expect(page.locator('[data-testid="data-row"].wp-changed')).toHaveCount(1);

  // Restart: a fresh episode of the same task.
  await page.getByTestId("play-restart").click();
  await expect(page.getByTestId("turn")).toHaveCount(0);
  await expect(page.getByTestId("test-results")).toHaveCount(0);
  await expect(page.getByTestId("play-input")).toBeEnabled();
  await expect(page.getByTestId("episode-changes")).toContainText("No changes");
});

test("completing a task right away fails its tests", async ({ page }) => {
  const taskId = listTasks("train")[0]?.id ?? "";
  await openTask(page, taskId);
  await act(page, "supervisor.complete_task()");
  const results = page.getByTestId("test-results");
  await expect(results).toBeVisible();
  await expect(results).toHaveAttribute("data-success", "false");
  expect(
    await page.locator('[data-testid="test-result"][data-passed="false"]').count(),
  ).toBeGreaterThan(0);
});

test("a malformed action is an error observation and the episode goes on", async ({ page }) => {
  const taskId = listTasks("test_challenge")[0]?.id ?? "";
  await openTask(page, taskId);
  await act(page, "this is not a call(");
  await expect(page.getByTestId("turn")).toHaveCount(1);
  await expect(page.getByTestId("turn").first()).toHaveAttribute("data-ok", "false");
  await expect(page.getByTestId("turn-observation").first()).toContainText("Error: ");
  await expect(page.getByTestId("test-results")).toHaveCount(0);
  await expect(page.getByTestId("play-input")).toBeEnabled();

  await act(page, "supervisor.show_account_passwords()");
  await expect(page.getByTestId("turn")).toHaveCount(2);
  await expect(page.getByTestId("turn").nth(1)).toHaveAttribute("data-ok", "true");
  await expect(page.getByTestId("turn-observation").nth(1)).toContainText("password");

  // Finish & evaluate before completing: judged now, and the completion test fails.
  await page.getByTestId("play-finish").click();
  await expect(page.getByTestId("test-results")).toHaveAttribute("data-success", "false");
});

test("the explorer shows API docs, tasks and the world's data", async ({ page }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.goto("/?tab=world");

  // Apps and APIs: click an app, search, insert a call into the play input.
  await page.getByTestId("app-pay").click();
  await expect(page.getByTestId("app-description")).toContainText("pay");
  await expect(page.locator('[data-api="pay.send_money"]')).toContainText("receiver_email");
  await page.getByTestId("api-search").fill("playlist");
  await expect(page.getByTestId("api-search-count")).toContainText("match");
  await expect(page.locator('[data-api="music.create_playlist"]')).toBeVisible();
  await expect(page.locator('[data-api="pay.send_money"]')).toHaveCount(0);

  // Tasks: filter by split and difficulty.
  await page.getByTestId("world-view-tasks").click();
  await page.getByTestId("task-filter-split").selectOption("dev");
  await page.getByTestId("task-filter-difficulty").selectOption("3");
  const devHard = listTasks("dev").filter((t) => t.difficulty === 3);
  await expect(page.getByTestId("task-row")).toHaveCount(devHard.length, { timeout: 30_000 });
  await expect(page.getByTestId("task-row").first()).toContainText(devHard[0]?.instruction ?? "");

  // Play from the list, then insert a call template from the API docs.
  await page.getByTestId("task-play").first().click();
  await expect(page.getByTestId("task-select")).toHaveValue(devHard[0]?.id ?? "");
  await page.getByTestId("world-view-apis").click();
  await page.getByTestId("api-search").fill("");
  await page.getByTestId("app-phone").click();
  await page.locator('[data-api="phone.login"]').getByTestId("api-insert").click();
  await expect(page.getByTestId("play-input")).toHaveValue(
    /^phone\.login\(username="", password=""\)$/,
  );
  await act(page, "supervisor.show_profile()");
  await act(page, 'api_docs.show_api_descriptions(app_name="phone")');

  // The world's data: seed 1 by default, a table with "show more".
  await page.getByTestId("world-view-data").click();
  await page.getByTestId("table-accounts").click();
  await expect(page.getByTestId("data-row")).toHaveCount(50);
  await page.getByTestId("data-show-more").click();
  await expect(page.getByTestId("data-row")).toHaveCount(100);
  await page.getByTestId("table-contacts").click();
  await expect(page.getByTestId("data-table")).toHaveAttribute("data-table", "contacts");

  await expect(page.getByTestId("world-fingerprint")).toBeVisible();
  // A seed that is not a whole number is said so (seed 1 stays shown); another seed, its world.
  const firstRow = await page.getByTestId("data-row").first().textContent();
  await page.getByTestId("world-seed").fill("-1");
  await expect(page.getByTestId("world-seed-error")).toContainText("showing seed 1");
  await expect(page.getByTestId("data-row").first()).toHaveText(firstRow ?? "");
  await page.getByTestId("world-seed").fill("2");
  await expect(page.getByTestId("world-seed-error")).toHaveCount(0);
  await expect(page.getByTestId("data-row").first()).not.toHaveText(firstRow ?? "");
  await page.screenshot({ path: "test-results/world-tab.png" });
});
