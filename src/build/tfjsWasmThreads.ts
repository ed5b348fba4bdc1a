/**
 * A Vite build plugin that keeps the tfjs wasm backend's threaded build working once minified.
 *
 * tfjs-backend-wasm 4.22 starts its pthread workers from a Blob of its threaded glue's factory,
 * stringified (`WasmBackendModuleThreadedSimd.toString()`). That function reads `_scriptDir`, a
 * variable of its enclosing closure, guarded by `typeof _scriptDir !== "undefined"` for the worker,
 * where the closure is gone. A minifier that knows the variable is declared drops the guard and
 * renames it (`e!==void 0&&e`), so every pthread worker throws "e is not defined" and the backend
 * never finishes starting (the tfjs README's "JS Minification" note). The patch skips that
 * statement in pthread workers (where it was a no-op anyway) without touching `_scriptDir` there.
 */
import type { Plugin } from "vite";

/** The threaded glue module (CommonJS, imported by tfjs-backend-wasm's dist/backend_wasm.js). */
const THREADED_GLUE = /tfjs-backend-wasm[\\/]wasm-out[\\/]tfjs-backend-wasm-threaded-simd\.js$/;

const GUARD = 'if(typeof _scriptDir !== "undefined" && _scriptDir){scriptDirectory=_scriptDir}';
const SAFE_GUARD =
  'if(!ENVIRONMENT_IS_PTHREAD&&typeof _scriptDir!=="undefined"&&_scriptDir){scriptDirectory=_scriptDir}';

/** The threaded glue with its `_scriptDir` read skipped in pthread workers; throws if not found. */
export function patchThreadedGlue(code: string): string {
  const at = code.indexOf(GUARD);
  if (at < 0 || code.indexOf(GUARD, at + 1) >= 0)
    throw new Error(
      "tfjs-backend-wasm's threaded glue changed: the _scriptDir guard to patch (src/build/tfjsWasmThreads.ts) is not there once",
    );
  return code.slice(0, at) + SAFE_GUARD + code.slice(at + GUARD.length);
}

export function tfjsWasmThreads(): Plugin {
  return {
    name: "loop:tfjs-wasm-threads",
    apply: "build",
    transform(code, id) {
      if (!THREADED_GLUE.test(id.split("?")[0] ?? "")) return null;
      return { code: patchThreadedGlue(code), map: null };
    },
  };
}
