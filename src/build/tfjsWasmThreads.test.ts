import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { patchThreadedGlue } from "./tfjsWasmThreads";

const require = createRequire(import.meta.url);
const glue = join(
  dirname(require.resolve("@tensorflow/tfjs-backend-wasm/package.json")),
  "wasm-out",
  "tfjs-backend-wasm-threaded-simd.js",
);

describe("patchThreadedGlue", () => {
  it("guards the installed tfjs threaded glue's _scriptDir read with ENVIRONMENT_IS_PTHREAD", () => {
    const code = readFileSync(glue, "utf8");
    const patched = patchThreadedGlue(code);
    expect(patched).toContain("if(!ENVIRONMENT_IS_PTHREAD&&typeof _scriptDir");
    expect(patched).not.toContain('if(typeof _scriptDir !== "undefined" && _scriptDir)');
  });

  it("fails loudly where the glue no longer has the guard", () => {
    expect(() => patchThreadedGlue("var x = 1;")).toThrow(/threaded glue changed/);
  });
});
