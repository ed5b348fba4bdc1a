import type { Settings } from "../../worker/protocol";
import { training, writeUrl } from "./session";
import { useTrain } from "./store";

/** Which backend trains, on which adapter; a selector to force another. */
export function BackendBadge() {
  const backend = useTrain((s) => s.backend);
  const settings = useTrain((s) => s.settings);
  const webgpu = backend?.info.attempts.find((a) => a.name === "webgpu");
  const force = async (value: string) => {
    const next = { ...settings, backend: value as Settings["backend"] };
    useTrain.getState().setSettings(next);
    writeUrl(next);
    useTrain.getState().newRun(next);
    await training().reset(next, useTrain.getState().run.id);
  };
  return (
    <div className="backend">
      <span className="badge" data-testid="backend" data-backend={backend?.info.name ?? ""}>
        {backend
          ? `${backend.info.name}${backend.info.adapter ? ` · ${backend.info.adapter}` : ""}`
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
    </div>
  );
}
