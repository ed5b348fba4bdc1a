/** The page's handle on the training worker (comlink). The only place the UI meets the trainer. */
import * as Comlink from "comlink";
import { threadsFromQuery } from "../model/wasmThreads";
import type { EventListener, TrainingApi } from "./protocol";

export type TrainingClient = Comlink.Remote<TrainingApi>;

export function startTrainingWorker(onEvents: EventListener): {
  api: TrainingClient;
  terminate: () => void;
} {
  // The page's ?threads= (the wasm backend's threads) goes to the worker as its name, a query.
  const threads = typeof location === "undefined" ? undefined : threadsFromQuery(location.search);
  const worker = new Worker(new URL("./training.worker.ts", import.meta.url), {
    type: "module",
    name: threads ? `threads=${threads}` : "training",
  });
  const api = Comlink.wrap<TrainingApi>(worker);
  void api.subscribe(Comlink.proxy(onEvents));
  return { api, terminate: () => worker.terminate() };
}
