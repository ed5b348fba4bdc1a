import { fileURLToPath } from "node:url";
import react from "@vitejs/plugin-react";
import { defineConfig } from "vitest/config";
import { tfjsWasmThreads } from "./src/build/tfjsWasmThreads.js";

export default defineConfig({
  // tfjsWasmThreads: the wasm backend's threads survive minification (src/build/tfjsWasmThreads.ts),
  // in the pages and in the training worker's bundle (built with worker.plugins).
  plugins: [react(), tfjsWasmThreads()],
  worker: { plugins: () => [tfjsWasmThreads()] },
  // Cross-origin isolation (crossOriginIsolated, SharedArrayBuffer): the tfjs wasm backend's
  // threads need it. Everything the pages load is same-origin (checkpoints, workers, wasm).
  server: {
    port: 5173,
    headers: {
      "Cross-Origin-Opener-Policy": "same-origin",
      "Cross-Origin-Embedder-Policy": "require-corp",
    },
  },
  preview: {
    port: 4173,
    strictPort: true,
    headers: {
      "Cross-Origin-Opener-Policy": "same-origin",
      "Cross-Origin-Embedder-Policy": "require-corp",
    },
  },
  build: {
    rolldownOptions: {
      // The app, and the backend bench page (npm run bench drives it in headless Chromium).
      input: {
        main: fileURLToPath(new URL("index.html", import.meta.url)),
        bench: fileURLToPath(new URL("bench.html", import.meta.url)),
        kernels: fileURLToPath(new URL("kernels.html", import.meta.url)),
      },
    },
  },
  test: {
    environment: "node",
    include: ["src/**/*.test.ts"],
    testTimeout: 60_000,
    passWithNoTests: true,
  },
});
