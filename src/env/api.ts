import type { ParsedCall } from "./parser";
import {
  ApiError,
  type ApiSpec,
  type AppSpec,
  type CallContext,
  type Db,
  type Json,
  type JsonObject,
  type ParamSpec,
  type ParamType,
} from "./types";

/** Items per page for every paginated API: small, so that tasks must page through lists. */
export const PAGE_SIZE = 5;

const TOKEN_PARAM: ParamSpec = {
  name: "access_token",
  type: "string",
  required: true,
  description: "from this app's login",
};
const PAGE_PARAM: ParamSpec = {
  name: "page_index",
  type: "integer",
  required: false,
  description: `page of ${PAGE_SIZE} items, from 0; an empty list past the end`,
  default: 0,
};

/** All parameters an API accepts, including the ones added for login and paging. */
export function allParams(api: ApiSpec): ParamSpec[] {
  return [...(api.auth ? [TOKEN_PARAM] : []), ...api.params, ...(api.paged ? [PAGE_PARAM] : [])];
}

export function typeMatches(type: ParamType, value: Json): boolean {
  switch (type) {
    case "string":
      return typeof value === "string";
    case "integer":
      return typeof value === "number" && Number.isInteger(value);
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "boolean":
      return typeof value === "boolean";
    case "string[]":
      return Array.isArray(value) && value.every((v) => typeof v === "string");
    case "integer[]":
      return (
        Array.isArray(value) && value.every((v) => typeof v === "number" && Number.isInteger(v))
      );
  }
}

function typeName(value: Json): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "list";
  if (typeof value === "number" && !Number.isInteger(value)) return "decimal number";
  return typeof value;
}

/** One API's documentation, compact enough for a small model to read. */
export function formatApiDoc(api: ApiSpec): string {
  const sig = allParams(api)
    .map((p) =>
      p.required
        ? `${p.name}: ${p.type}`
        : `${p.name}: ${p.type} = ${JSON.stringify(p.default ?? null)}`,
    )
    .join(", ");
  const lines = [`${api.app}.${api.name}(${sig})`, api.description];
  // access_token and page_index are explained once, in the prompt.
  const described = api.params.filter((p) => p.description);
  if (described.length > 0)
    lines.push(`Params: ${described.map((p) => `${p.name}: ${p.description}`).join("; ")}.`);
  lines.push(`Returns: ${api.returns}${api.paged ? `, ${PAGE_SIZE} per page` : ""}`);
  if (api.errors.length > 0) lines.push(`Errors: ${api.errors.join("; ")}.`);
  return lines.join("\n");
}

export interface Session {
  app: string;
  username: string;
}

/** Mutable per-episode state the executor needs besides the database. */
export interface RuntimeState {
  db: Db;
  sessions: Map<string, Session>;
  clock: number;
  today: string;
  tokenCounter: number;
  tokenSalt: number;
  completed: boolean;
  answer: Json;
}

export type CallResult = { ok: true; result: Json } | { ok: false; error: string };

function nowString(today: string, clock: number): string {
  const minutes = 9 * 60 + clock;
  const hh = String(Math.floor(minutes / 60) % 24).padStart(2, "0");
  const mm = String(minutes % 60).padStart(2, "0");
  return `${today}T${hh}:${mm}`;
}

/** Short, deterministic access tokens: easy to copy, distinct per login. */
function makeToken(app: string, counter: number, salt: number): string {
  const n = (Math.imul(counter + 1, 2654435761) ^ salt) >>> 0;
  return `${app.slice(0, 2)}${n.toString(36).slice(-5).padStart(5, "0")}`;
}

export class AppRegistry {
  private readonly apps = new Map<string, AppSpec>();

  constructor(apps: AppSpec[]) {
    for (const app of apps) this.apps.set(app.name, app);
  }

  list(): AppSpec[] {
    return [...this.apps.values()];
  }

  app(name: string): AppSpec | undefined {
    return this.apps.get(name);
  }

  api(app: string, name: string): ApiSpec | undefined {
    return this.apps.get(app)?.apis.find((a) => a.name === name);
  }

  /**
   * Checks a parsed call against the APIs without running it: the app, the API, each argument's
   * name and type, the required ones (the optional ones missing get their defaults). A call that
   * fails here is malformed, whatever the state.
   */
  checkCall(
    call: ParsedCall,
  ): { ok: true; app: AppSpec; api: ApiSpec; args: JsonObject } | { ok: false; error: string } {
    const app = this.apps.get(call.app);
    if (!app)
      return err(
        `Unknown app '${call.app}'. Apps: ${this.list()
          .map((a) => a.name)
          .join(", ")}.`,
      );
    const api = app.apis.find((a) => a.name === call.api);
    if (!api)
      return err(
        `Unknown API '${call.api}' in app '${app.name}'. See api_docs.show_api_descriptions(app_name="${app.name}").`,
      );
    const params = allParams(api);
    const args: JsonObject = {};
    for (const [name, value] of Object.entries(call.args)) {
      const spec = params.find((p) => p.name === name);
      if (!spec)
        return err(
          `${app.name}.${api.name} has no argument '${name}'. Arguments: ${params.map((p) => p.name).join(", ") || "none"}.`,
        );
      if (value === null && !spec.required) continue;
      if (!typeMatches(spec.type, value))
        return err(`Argument '${name}' must be ${spec.type}, got ${typeName(value)}.`);
      Object.defineProperty(args, name, {
        value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    for (const p of params) {
      if (p.required && !Object.hasOwn(args, p.name))
        return err(`Missing required argument '${p.name}' for ${app.name}.${api.name}.`);
      if (!p.required && !Object.hasOwn(args, p.name) && p.default !== undefined)
        args[p.name] = p.default;
    }
    return { ok: true, app, api, args };
  }

  /**
   * Runs one parsed call against the state. Never throws: every failure is { ok: false, error }
   * and leaves the database exactly as it was.
   */
  call(state: RuntimeState, call: ParsedCall): CallResult {
    const checked = this.checkCall(call);
    if (!checked.ok) return err(checked.error);
    const { app, api, args } = checked;
    let user = "";
    if (api.auth) {
      const session = state.sessions.get(args.access_token as string);
      if (!session || session.app !== app.name)
        return err(`Invalid access_token for ${app.name}. Log in with ${app.name}.login first.`);
      user = session.username;
    }
    state.clock++;
    const ctx: CallContext = {
      db: state.db,
      user,
      now: nowString(state.today, state.clock),
      issueToken: (appName, username) => {
        const token = makeToken(appName, state.tokenCounter++, state.tokenSalt);
        state.sessions.set(token, { app: appName, username });
        return token;
      },
      complete: (answer) => {
        state.completed = true;
        state.answer = answer;
      },
    };
    const backup = api.mutates ? structuredClone(state.db) : null;
    try {
      let result = api.handler(ctx, args);
      if (api.paged) {
        if (!Array.isArray(result))
          throw new Error(`${app.name}.${api.name} did not return a list`);
        const page = args.page_index as number;
        if (page < 0) throw new ApiError("page_index must be 0 or more.");
        result = result.slice(page * PAGE_SIZE, (page + 1) * PAGE_SIZE);
      }
      return { ok: true, result };
    } catch (e) {
      if (backup) {
        for (const key of Object.keys(state.db)) delete state.db[key];
        Object.assign(state.db, backup);
      }
      if (e instanceof ApiError) return err(e.message);
      return err(`Internal error in ${app.name}.${api.name}: ${(e as Error).message}`);
    }
  }
}

function err(error: string): { ok: false; error: string } {
  return { ok: false, error };
}
