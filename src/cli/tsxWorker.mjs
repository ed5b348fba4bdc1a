// Entry of a worker thread started from TypeScript run by tsx (npm run <cli>): Node 20 does not
// give workers the parent's tsx loader, so this registers it and then loads the module named in
// workerData.module (which does the work). Bundles (scripts/gpu/pack.sh) start their workers
// from the bundle itself and never use this file.
import { workerData } from "node:worker_threads";
import { register } from "tsx/esm/api";

register();
await import(workerData.module);
