import { expect, test } from "@playwright/test";
import { APPS, worldFingerprint } from "../src/env";

test("the browser generates the same world as Node, byte for byte", async ({ page }) => {
  await page.goto("/?tab=world");
  await expect(page.getByTestId("world-fingerprint")).toHaveText(worldFingerprint(1));
  await expect(page.getByTestId("world-apps")).toContainText(`${APPS.length} apps`);
  await expect(page.getByTestId("split-train")).toContainText(/train: \d+ tasks/);
});

test("the world tab opens from its button", async ({ page }) => {
  await page.goto("/");
  await page.getByTestId("tab-world").click();
  await expect(page.getByTestId("world-fingerprint")).toHaveText(worldFingerprint(1));
});
