import { useEffect } from "react";
import { BackendBadge } from "./BackendBadge";
import { Charts } from "./Charts";
import { Controls } from "./Controls";
import { EpisodePlayer } from "./EpisodePlayer";
import { Explainer } from "./Explainer";
import { LiveRollouts } from "./LiveRollouts";
import { RolloutGroup } from "./RolloutGroup";
import { Runs } from "./Runs";
import { training, writeUrl } from "./session";
import { useTrain } from "./store";
import { TaskGrid } from "./TaskGrid";
import "./train.css";

let started = false;

/** The training view: controls, live charts, the rollout group, the episode player, runs. */
export function TrainPanel() {
  const warnings = useTrain((s) => s.warnings);
  const settingsErrors = useTrain((s) => s.settingsErrors);
  const phase = useTrain((s) => s.phase);
  const message = useTrain((s) => s.message);
  useEffect(() => {
    if (started) return;
    started = true;
    const { settings, run, settingsErrors } = useTrain.getState();
    // The URL says what is in force: a refused value is replaced by the setting used instead.
    if (settingsErrors.length) writeUrl(settings);
    void training().reset(settings, run.id);
  }, []);
  return (
    <div className="train">
      <BackendBadge />
      <Controls />
      {settingsErrors.length ? (
        <p className="error">Ignored from the URL: {settingsErrors.join("; ")}</p>
      ) : null}
      {phase === "error" ? (
        <p className="error" data-testid="train-error">
          {message}
        </p>
      ) : null}
      {warnings.length ? <p className="warn">{warnings.at(-1)}</p> : null}
      <div className="grid">
        <Charts />
        <Explainer />
      </div>
      <TaskGrid />
      <LiveRollouts />
      <div className="grid">
        <RolloutGroup />
        <EpisodePlayer />
      </div>
      <Runs />
    </div>
  );
}
