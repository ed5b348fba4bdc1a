import { useState } from "react";
import { ALGORITHMS } from "../../rl/algorithms";
import { defaultTurnBudget, parseSetting, type Settings } from "../../worker/protocol";
import { applySettings, startNewRun, training } from "./session";
import { useTrain } from "./store";

const NUMBER_FIELDS: {
  key: keyof Settings;
  label: string;
  testid: string;
  live?: boolean;
  step?: string;
}[] = [
  { key: "k", label: "K (rollouts per task)", testid: "k-input" },
  { key: "tasks", label: "tasks / iteration", testid: "tasks-input" },
  { key: "pool", label: "task pool (0 = all)", testid: "pool-input" },
  { key: "lr", label: "learning rate", testid: "lr-input", live: true, step: "any" },
  { key: "eps", label: "clip ε", testid: "eps-input", step: "any" },
  { key: "epochs", label: "epochs", testid: "epochs-input" },
  { key: "temperature", label: "temperature", testid: "temperature-input", step: "any" },
  { key: "seed", label: "seed", testid: "seed-input" },
  { key: "turns", label: "turn budget", testid: "turns-input" },
  { key: "evalEvery", label: "eval every", testid: "eval-every-input" },
];

/** Settings, play / pause / step / reset. Settings live in the URL. */
export function Controls() {
  const settings = useTrain((s) => s.settings);
  const phase = useTrain((s) => s.phase);
  const live = useTrain((s) => s.live);
  const done = useTrain((s) => s.done);
  const started = useTrain((s) => s.started);
  const minibatch = useTrain((s) => s.minibatch);
  const [drafts, setDrafts] = useState<Record<string, string>>({});
  const [error, setError] = useState<string | null>(null);
  const [dirty, setDirty] = useState(false);

  const change = <K extends keyof Settings>(key: K, text: string, live = false) => {
    setDrafts((d) => ({ ...d, [key]: text }));
    const r = parseSetting(key, text);
    if (!r.ok) {
      setError(r.error);
      return;
    }
    setError(null);
    const next = { ...useTrain.getState().settings, [key]: r.value };
    applySettings(next);
    if (live || key === "speed") {
      void training().update(next);
      // In force for the run from now on: a continued run (after a reload) goes on with it.
      useTrain.setState((st) => ({
        run: { ...st.run, settings: { ...st.run.settings, [key]: r.value } },
      }));
    } else setDirty(true);
  };

  const reset = async () => {
    const s = useTrain.getState().settings;
    setDirty(false);
    await startNewRun(s);
  };

  const busy = phase === "loading";
  return (
    <section className="controls" data-testid="controls">
      <div className="buttons">
        <button
          type="button"
          data-testid="train-start"
          disabled={busy || phase === "running"}
          onClick={() => void training().play()}
        >
          ▶ Play
        </button>
        <button
          type="button"
          data-testid="train-pause"
          disabled={phase !== "running"}
          onClick={() => void training().pause()}
        >
          ❚❚ Pause
        </button>
        <button
          type="button"
          data-testid="train-step"
          disabled={busy}
          onClick={() => void training().step()}
        >
          ▶❘ Step
        </button>
        <button type="button" data-testid="train-reset" onClick={() => void reset()}>
          ↺ Reset
        </button>
        <span className="iteration">
          iteration <strong data-testid="iteration">{done}</strong>
          {started > done ? (
            <span className="muted">
              {" "}
              (running {started}
              {minibatch
                ? `: minibatch ${minibatch.index + 1}/${minibatch.count}, epoch ${minibatch.epoch + 1}`
                : live?.iteration === started
                  ? `: rollouts ${live.finished}/${live.total}`
                  : ": rollouts"}
              )
            </span>
          ) : null}
        </span>
        <span className={`phase phase-${phase}`} data-testid="phase">
          {phase}
        </span>
      </div>
      <div className="fields">
        <label>
          algorithm
          <select
            data-testid="algo-select"
            value={settings.algo}
            onChange={(e) => change("algo", e.target.value)}
          >
            {Object.values(ALGORITHMS).map((a) => (
              <option key={a.name} value={a.name} title={a.summary}>
                {a.label}
              </option>
            ))}
          </select>
        </label>
        {NUMBER_FIELDS.map((f) => (
          <label key={f.key}>
            {f.key === "turns" ? `${f.label} (0 = ${defaultTurnBudget(settings.preset)})` : f.label}
            <input
              data-testid={f.testid}
              type="number"
              step={f.step ?? "1"}
              value={drafts[f.key] ?? String(settings[f.key])}
              onChange={(e) => change(f.key, e.target.value, f.live)}
              onBlur={() => {
                // The field shows the setting in force again, so a refusal of its draft is gone too.
                setDrafts((d) => ({ ...d, [f.key]: String(useTrain.getState().settings[f.key]) }));
                setError(null);
              }}
            />
          </label>
        ))}
        <label>
          speed
          <select
            data-testid="speed-select"
            value={settings.speed}
            onChange={(e) => change("speed", e.target.value, true)}
          >
            <option value="fast">fast</option>
            <option value="normal">normal</option>
            <option value="slow">slow</option>
          </select>
        </label>
        <label>
          policy
          <select
            data-testid="preset-select"
            value={settings.preset}
            onChange={(e) => change("preset", e.target.value)}
          >
            <option value="base">shipped base policy</option>
            <option value="tiny">tiny untrained (quick)</option>
          </select>
        </label>
        <label title="Sample only tokens that keep an action a well-formed call to an existing API">
          actions
          <select
            data-testid="grammar-select"
            value={settings.grammar}
            onChange={(e) => change("grammar", e.target.value)}
          >
            <option value="off">free text</option>
            <option value="on">grammar-constrained</option>
          </select>
        </label>
      </div>
      {error ? (
        <p className="error" data-testid="settings-error">
          {error}
        </p>
      ) : null}
      {dirty ? (
        <p className="muted">
          Changed settings apply on ↺ Reset (learning rate and speed apply at once).
        </p>
      ) : null}
    </section>
  );
}
