import { AppRegistry } from "../api";
import type { AppSpec } from "../types";
import { makeApiDocs } from "./api_docs";
import type { AppModule } from "./common";
import { pay } from "./pay";
import { phone } from "./phone";
import { supervisor } from "./supervisor";

/** Every app, in the order api_docs lists them. */
export const APP_MODULES: AppModule[] = [];
const apiDocs = makeApiDocs(() => APP_MODULES.map((m) => m.spec));
APP_MODULES.push(supervisor, apiDocs, phone, pay);

export const APPS: AppSpec[] = APP_MODULES.map((m) => m.spec);
export const registry = new AppRegistry(APPS);
