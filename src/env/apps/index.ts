import { AppRegistry } from "../api";
import type { AppSpec } from "../types";
import { makeApiDocs } from "./api_docs";
import { calendar } from "./calendar";
import type { AppModule } from "./common";
import { files } from "./files";
import { mail } from "./mail";
import { music } from "./music";
import { notes } from "./notes";
import { pay } from "./pay";
import { phone } from "./phone";
import { shop } from "./shop";
import { splitbill } from "./splitbill";
import { supervisor } from "./supervisor";
import { todo } from "./todo";

/** Every app, in the order api_docs lists them. */
export const APP_MODULES: AppModule[] = [];
const apiDocs = makeApiDocs(() => APP_MODULES.map((m) => m.spec));
APP_MODULES.push(
  supervisor,
  apiDocs,
  phone,
  mail,
  pay,
  music,
  notes,
  todo,
  files,
  calendar,
  shop,
  splitbill,
);

export const APPS: AppSpec[] = APP_MODULES.map((m) => m.spec);
export const registry = new AppRegistry(APPS);
