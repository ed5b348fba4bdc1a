import { describeThreads } from "../../model/wasmThreads";
import { CPU_DEMO, type Settings } from "../../worker/protocol";
import { applySettings, startNewRun } from "./session";
import { useTrain } from "./store";

/** Which backend trains, on which adapter or wasm threads; a selector to force another. */
export function BackendBadge() {
  const backend = useTrain((s) => s.backend);
  const settings = useTrain((s) => s.settings);
  const webgpu = backend?.info.attempts.find((a) => a.name === "webgpu");
  const restart = async (next: Settings) => {
    applySettings(next);
    await startNewRun(next);
  };
  const force = (value: string) => restart({ ...settings, backend: value as Settings["backend"] });
  const noGpu =
    backend !== null &&
    backend.info.name !== "webgpu" &&
    backend.info.name !== "webgl" &&
    backend.preset === "base";
  const threads = backend?.info.name === "wasm" ? backend.info.threads : undefined;
  const inDemo = (Object.keys(CPU_DEMO) as (keyof Settings)[]).every(
    (k) => settings[k] === CPU_DEMO[k],
  );
  return (
    <div className="backend">
      <span
        className="badge"
        data-testid="backend"
        data-backend={backend?.info.name ?? ""}
        data-threads={threads?.count ?? ""}
      >
        {backend
          ? `${backend.info.name}${backend.info.adapter ? ` · ${backend.info.adapter}` : ""}${
              threads ? ` · ${describeThreads(threads)}` : ""
            }`
          : "starting…"}
      </span>
      {backend ? (
        <span className="muted">
          {backend.params.toLocaleString()} parameters (
          {backend.preset === "base" ? "shipped base policy" : "tiny"})
        </span>
      ) : null}
      <select
        data-testid="backend-select"
        value={settings.backend}
        onChange={(e) => void force(e.target.value)}
      >
        <option value="auto">auto (webgpu → webgl → wasm → cpu)</option>
        <option value="webgpu">webgpu</option>
        <option value="webgl">webgl</option>
        <option value="wasm">wasm</option>
        <option value="cpu">cpu</option>
      </select>
      {backend?.info.softwareGpu ? (
        <span className="warn" data-testid="webgpu-software">
          WebGPU here runs on a software adapter ({backend.info.softwareGpu}), no GPU: training on{" "}
          {backend.info.name}, which is faster on this CPU. Choose webgpu above to use it anyway.
        </span>
      ) : webgpu && !webgpu.ok && backend?.info.name !== "webgpu" ? (
        <span className="warn" data-testid="webgpu-missing">
          No WebGPU here ({webgpu.error}); training on {backend?.info.name} instead.
        </span>
      ) : null}
      {noGpu && !inDemo ? (
        <span className="muted">
          On a CPU an iteration of {settings.tasks} × {settings.k} rollouts takes many minutes.{" "}
          <button
            type="button"
            data-testid="cpu-demo"
            onClick={() => void restart({ ...settings, ...CPU_DEMO })}
          >
            Train on two tasks instead
          </button>{" "}
          (two the base solves some of the time, 8 rollouts an iteration: watch their rows in the
          tasks grid turn green; on one CPU core, ten iterations took about an hour and raised
          paying a contact from 44% to 75% success).
        </span>
      ) : null}
    </div>
  );
}
