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
  useTrain.getState().newRun(settings);
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
