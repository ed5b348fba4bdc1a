import { defineConfig } from "@playwright/test";
import { CHROMIUM_LAUNCH } from "./src/cli/chromium";

const PORT = 4173;

export default defineConfig({
  testDir: "e2e",
  outputDir: "test-results",
  timeout: 60_000,
  fullyParallel: false,
  workers: 1,
  forbidOnly: !!process.env.CI,
  retries: 0,
  reporter: [["list"], ["html", { open: "never" }]],
  use: {
    baseURL: `http://localhost:${PORT}`,
    // Debian chromium, new headless mode, WebGPU on SwiftShader (shared with npm run bench).
    headless: CHROMIUM_LAUNCH.headless,
    channel: CHROMIUM_LAUNCH.channel,
    launchOptions: {
      executablePath: CHROMIUM_LAUNCH.executablePath,
      args: CHROMIUM_LAUNCH.args,
    },
    trace: "retain-on-failure",
    screenshot: "only-on-failure",
  },
  webServer: {
    command: `npx vite preview --port ${PORT} --strictPort`,
    url: `http://localhost:${PORT}`,
    reuseExistingServer: !process.env.CI,
    timeout: 60_000,
  },
});
