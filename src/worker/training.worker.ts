/// <reference lib="webworker" />
/** The Web Worker entry: the training host, exposed to the page through comlink. */

import wasmPlain from "@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm?url";
import wasmSimd from "@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm?url";
import wasmThreadedSimd from "@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-threaded-simd.wasm?url";
import * as Comlink from "comlink";
import { threadsFromQuery } from "../model/wasmThreads";
import { TrainingHost } from "./host";

const base = new URL(import.meta.env.BASE_URL, self.location.origin).href;
// The page's ?threads= comes as the worker's name (client.ts): a worker cannot read the page's URL.
const wasmThreads = threadsFromQuery(self.name);

Comlink.expose(
  new TrainingHost({
    checkpointUrl: `${base}checkpoints/base`,
    wasmPaths: {
      "tfjs-backend-wasm.wasm": wasmPlain,
      "tfjs-backend-wasm-simd.wasm": wasmSimd,
      "tfjs-backend-wasm-threaded-simd.wasm": wasmThreadedSimd,
    },
    ...(wasmThreads ? { wasmThreads } : {}),
  }),
);
