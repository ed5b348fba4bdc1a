import { fileURLToPath } from "node:url";
import react from "@vitejs/plugin-react";
import { defineConfig } from "vitest/config";

export default defineConfig({
  plugins: [react()],
  server: { port: 5173 },
  preview: { port: 4173, strictPort: true },
  build: {
    rolldownOptions: {
      // The app, and the backend bench page (npm run bench drives it in headless Chromium).
      input: {
        main: fileURLToPath(new URL("index.html", import.meta.url)),
        bench: fileURLToPath(new URL("bench.html", import.meta.url)),
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
