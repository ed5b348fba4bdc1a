/**
 * How to launch this machine's Chromium headless with WebGPU (SwiftShader): Debian chromium, new
 * headless mode. Shared by playwright.config.ts and the browser bench. No imports, so the Playwright
 * config can load it as is.
 */
export const CHROMIUM_LAUNCH = {
  headless: true,
  // New headless mode (the old headless shell has no WebGPU).
  channel: "chromium",
  // Debian chromium; Playwright never downloads browsers here.
  executablePath: "/usr/bin/chromium",
  args: [
    "--enable-unsafe-webgpu",
    "--enable-features=Vulkan",
    "--use-webgpu-adapter=swiftshader",
    "--no-sandbox",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
  ],
};
