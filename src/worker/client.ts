/** The page's handle on the training worker (comlink). The only place the UI meets the trainer. */
import * as Comlink from "comlink";
import type { EventListener, TrainingApi } from "./protocol";

export type TrainingClient = Comlink.Remote<TrainingApi>;

export function startTrainingWorker(onEvents: EventListener): {
  api: TrainingClient;
  terminate: () => void;
} {
  const worker = new Worker(new URL("./training.worker.ts", import.meta.url), { type: "module" });
  const api = Comlink.wrap<TrainingApi>(worker);
  void api.subscribe(Comlink.proxy(onEvents));
  return { api, terminate: () => worker.terminate() };
}
