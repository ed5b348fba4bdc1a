/** The one training worker of the page, started on first use. */
import { startTrainingWorker, type TrainingClient } from "../../worker/client";
import { type Settings, settingsToQuery } from "../../worker/protocol";
import { useTrain } from "./store";

let client: TrainingClient | null = null;

export function training(): TrainingClient {
  client ??= startTrainingWorker((events, run) => {
    // A run the page has moved on from (a reset while it was stopping) is not shown.
    const state = useTrain.getState();
    if (run === null || run === state.run.id) state.apply(events);
  }).api;
  return client;
}

/** Starts a new run of these settings: the page's views cleared, the worker reset to them. */
export async function startNewRun(settings: Settings): Promise<void> {
  const previous = useTrain.getState().done;
  useTrain.getState().newRun(settings);
  // A reset, a backend change or the CPU demo all start over: say where the old run went.
  if (previous > 0)
    useTrain.setState({
      warnings: [
        `A new run started; the previous one (${previous} iteration${previous > 1 ? "s" : ""}) is kept under Runs, where it can be continued or overlaid.`,
      ],
    });
  await training().reset(settings, useTrain.getState().run.id);
}

/** Makes these the page's settings: in the store and in the URL. */
export function applySettings(settings: Settings): void {
  useTrain.getState().setSettings(settings);
  writeUrl(settings);
}

/** Writes the settings into the URL (so a link restores them), keeping other parameters. */
export function writeUrl(settings: Settings): void {
  const query = settingsToQuery(settings, location.search);
  history.replaceState(null, "", `${location.pathname}${query}${location.hash}`);
}
