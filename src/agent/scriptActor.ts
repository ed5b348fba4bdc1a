import {
  type Act,
  type Actor,
  ERROR_PREFIX,
  formatAction,
  type Json,
  type JsonObject,
  observationBody,
  parseAction,
  ScriptError,
} from "../env";
import { Rng } from "../env/rng";
import type { ContextTracker } from "./transcript";

/**
 * Rates of the demonstrator's flaws, the behaviours the paper saw RL remove. All zero = the expert.
 */
export interface Flaws {
  /** Call an API without reading its doc first. */
  skipDoc: number;
  /** When the doc was skipped: call with a wrong argument name (then read the doc and retry). */
  wrongArgName: number;
  /** Stop paging after the first page. */
  firstPageOnly: number;
  /** Assume a value (e.g. an email guessed from a name) instead of looking it up. */
  assume: number;
  /** After a failed call, give up (complete the task unfinished) instead of recovering. */
  giveUp: number;
  /**
   * Before a call, slip: first send a broken version of it (a character dropped from a copied
   * password or access token, an argument the API does not have, text after the closing
   * parenthesis), which fails and changes nothing, then send the right call. Slips are not to be
   * imitated (`ScriptActor.slips`): they show a cloned policy how to recover from its own
   * mistakes, a noise injection in the spirit of DART (Laskey et al., 2017).
   */
  slip: number;
  /**
   * Before a call that sends a password or an access token, first send it with another record's
   * value (another account's password, another app's token: what a policy that copies from the
   * wrong record sends), which fails, then the right call. Not imitated, like a slip; unlike a
   * dropped character, the wrong value shares nothing with the right one, so the recovery has to
   * copy from the record, not from the failed call.
   */
  swap: number;
}

export const NO_FLAWS: Flaws = {
  skipDoc: 0,
  wrongArgName: 0,
  firstPageOnly: 0,
  assume: 0,
  giveUp: 0,
  slip: 0,
  swap: 0,
};

/** Thrown in a script when the actor gives up; the policy then completes the task unfinished. */
export class GiveUp extends Error {}

/** Plausible wrong names for arguments (what a model that skipped the doc might write). */
const WRONG_NAMES: Record<string, string> = {
  amount: "value",
  query: "search",
  title: "name",
  message: "text",
  content: "text",
  body: "text",
  recipients: "to",
  date: "day",
  note: "memo",
  tags: "tag",
  path: "file",
  directory: "dir",
  quantity: "count",
  relationship: "relation",
};

/**
 * A broken version of a call that the world refuses without changing anything: a character
 * dropped from a password or access token (a wrong credential), an argument the API does not take,
 * or text after the closing parenthesis (a parse error).
 */
export function slipAction(app: string, api: string, args: JsonObject, rng: Rng): string {
  const secrets = Object.keys(args).filter(
    (k) => (k === "password" || k === "access_token") && typeof args[k] === "string",
  );
  const kinds = ["extra", "trailing", ...(secrets.length ? ["drop", "drop"] : [])];
  const kind = rng.pick(kinds);
  if (kind === "drop") {
    const key = rng.pick(secrets);
    const value = args[key] as string;
    const at = rng.int(0, value.length - 1);
    return formatAction(app, api, { ...args, [key]: value.slice(0, at) + value.slice(at + 1) });
  }
  if (kind === "extra") {
    // Names no API takes, so the call is refused whatever the API.
    const name = rng.pick(["limit", "page", "user_email", "name", "sender"]);
    return formatAction(app, api, {
      ...args,
      [name]: name === "limit" || name === "page" ? 0 : "",
    });
  }
  return `${formatAction(app, api, args)}${rng.pick(["=0)", ")", ", page_index=0)", '")'])}`;
}

export function wrongName(name: string): string {
  if (WRONG_NAMES[name]) return WRONG_NAMES[name] as string;
  const parts = name.split("_");
  return parts.length > 1 ? (parts[parts.length - 1] as string) : `${name}_value`;
}

type Parsed = { ok: true; value: Json } | { ok: false; error: string };

/** Reads an observation: an error, JSON, or plain text. */
export function readObservation(observation: string): Parsed {
  const body = observationBody(observation);
  if (body.startsWith(ERROR_PREFIX)) return { ok: false, error: body.slice(ERROR_PREFIX.length) };
  const first = body[0];
  if (first === "{" || first === "[" || first === '"') {
    try {
      return { ok: true, value: JSON.parse(body) as Json };
    } catch {
      return { ok: false, error: `unreadable observation: ${body.slice(0, 80)}` };
    }
  }
  return { ok: true, value: body };
}

/** Account name -> password, from supervisor.show_account_passwords()'s list. */
function passwordMap(list: readonly Json[]): Map<string, string> {
  return new Map(
    list.map((x) => [
      (x as JsonObject).account_name as string,
      (x as JsonObject).password as string,
    ]),
  );
}

/** The password and access_token of `from` among the keys `into` has (a renamed one stays out). */
function secretsOf(from: JsonObject, into: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const key of ["password", "access_token"])
    if (key in into && from[key] !== undefined) out[key] = from[key] as Json;
  return out;
}

/** Apps and APIs the prompt already explains: no doc lookup needed. */
function documentedInPrompt(app: string, api: string): boolean {
  return app === "supervisor" || app === "api_docs" || api === "login";
}

/**
 * Acts for solution scripts by writing action texts and reading observations only. With NO_FLAWS it
 * is the expert; with flaw rates and a seed, the demonstrator.
 */
export class ScriptActor implements Actor {
  private readonly docsRead = new Set<string>();
  /** Each app's access token and the password list, with the turn whose observation showed them. */
  private readonly tokens = new Map<string, { token: string; turn: number }>();
  private passwords: { byApp: Map<string, string>; turn: number } | null = null;
  private email = "";
  private phone = "";
  today = "";
  /** Actions sent so far (the index of the next turn). */
  private turn = 0;
  /** The turns (0-based) whose actions were slips, not to be imitated. */
  readonly slips: number[] = [];

  /**
   * With a tracker of the policy's context (the context rule), the actor forgets a password list
   * or an access token once the turn that showed it has left that context, and looks it up again
   * (show_account_passwords, login) before it uses it: every password and token it sends is then
   * one the policy could copy. Without one it remembers everything (a script's own memory).
   */
  constructor(
    private readonly flaws: Flaws = NO_FLAWS,
    private readonly rng: Rng = new Rng(0),
    private readonly context: ContextTracker | null = null,
  ) {}

  /** Whether the observation of `turn` is in the context of the next action. */
  private visible(turn: number): boolean {
    return !this.context || turn >= this.context.start();
  }

  /** Reads the user's email, phone and today's date from the prompt (the first observation). */
  observePrompt(prompt: string): void {
    this.context?.prompt(prompt);
    this.email = /email ([^\s,)]+)/.exec(prompt)?.[1] ?? "";
    this.phone = /phone ([0-9-]+)/.exec(prompt)?.[1] ?? "";
    this.today = /Today is (\d{4}-\d{2}-\d{2})/.exec(prompt)?.[1] ?? "";
  }

  /**
   * Learns what earlier turns of the episode (played by someone else: see takeover.ts) already
   * found out: the password list, access tokens of successful logins, docs read. The script then
   * skips those steps instead of repeating them. Failed or unparsable calls teach nothing.
   */
  observeHistory(actions: readonly string[], observations: readonly string[]): void {
    actions.forEach((action, i) => {
      const parsed = parseAction(action);
      const r = readObservation(observations[i] ?? "");
      if (!parsed.ok || !r.ok) return;
      const { app, api, args } = parsed.call;
      if (app === "supervisor" && api === "show_account_passwords" && Array.isArray(r.value)) {
        this.passwords = { byApp: passwordMap(r.value), turn: i };
      } else if (api === "login" && typeof (r.value as JsonObject)?.access_token === "string") {
        this.tokens.set(app, { token: (r.value as JsonObject).access_token as string, turn: i });
      } else if (app === "api_docs" && api === "show_api_doc")
        this.docsRead.add(`${args.app_name}.${args.api_name}`);
    });
  }

  private *send(action: string, slip = false): Act<string> {
    if (slip) this.slips.push(this.turn);
    this.turn++;
    const observation = yield action;
    this.context?.turn(action, observation);
    return observation;
  }

  private flawed(kind: keyof Flaws): boolean {
    const p = this.flaws[kind];
    return p > 0 && this.rng.chance(p);
  }

  private *readDoc(app: string, api: string): Act<void> {
    const obs = yield* this.send(
      formatAction("api_docs", "show_api_doc", { app_name: app, api_name: api }),
    );
    const r = readObservation(obs);
    if (!r.ok) throw new ScriptError(r.error);
    this.docsRead.add(`${app}.${api}`);
  }

  *call(app: string, api: string, given: JsonObject = {}): Act<Json> {
    let skipped = false;
    if (!documentedInPrompt(app, api) && !this.docsRead.has(`${app}.${api}`)) {
      if (this.flawed("skipDoc")) skipped = true;
      else yield* this.readDoc(app, api);
    }
    let args = this.context ? yield* this.visibleSecrets(app, api, given) : given;
    let sent = args;
    const names = Object.keys(args).filter((k) => k !== "access_token" && k !== "page_index");
    if (skipped && names.length > 0 && this.flawed("wrongArgName")) {
      const victim = this.rng.pick(names);
      sent = {};
      for (const [k, v] of Object.entries(args)) sent[k === victim ? wrongName(k) : k] = v;
    }
    if (this.flawed("slip")) {
      const slipped = readObservation(yield* this.send(slipAction(app, api, sent, this.rng), true));
      if (slipped.ok) throw new ScriptError(`a slip on ${app}.${api} did not fail`);
    }
    const swap = this.flaws.swap > 0 ? this.otherSecrets(app, sent) : null;
    if (swap && this.flawed("swap")) {
      const wrong = { ...sent, [swap.key]: this.rng.pick(swap.values) };
      const r = readObservation(yield* this.send(formatAction(app, api, wrong), true));
      if (r.ok) throw new ScriptError(`a swapped secret on ${app}.${api} did not fail`);
    }
    if (this.context) {
      // The failed calls took turns: what showed the secret may have left the context since.
      const fresh = yield* this.visibleSecrets(app, api, args);
      sent = sent === args ? fresh : { ...sent, ...secretsOf(fresh, sent) };
      args = fresh;
    }
    let r = readObservation(yield* this.send(formatAction(app, api, sent)));
    if (!r.ok) {
      if (this.flawed("giveUp")) throw new GiveUp(r.error);
      if (sent === args) throw new ScriptError(`${app}.${api} failed: ${r.error}`);
      // Recover the way the prompt teaches: read the doc, then call again correctly.
      yield* this.readDoc(app, api);
      if (this.context) args = yield* this.visibleSecrets(app, api, args);
      r = readObservation(yield* this.send(formatAction(app, api, args)));
      if (!r.ok) throw new ScriptError(`${app}.${api} failed: ${r.error}`);
    }
    return r.value;
  }

  /**
   * The call's password or access token argument and the other records' values of it that the
   * policy's context shows (other accounts' passwords, other apps' tokens), or null if none.
   */
  private otherSecrets(
    app: string,
    args: JsonObject,
  ): { key: "password" | "access_token"; values: string[] } | null {
    const key = typeof args.password === "string" ? "password" : "access_token";
    const right = args[key];
    if (typeof right !== "string") return null;
    const others: string[] = [];
    if (key === "access_token") {
      for (const [other, t] of this.tokens)
        if (other !== app && this.visible(t.turn)) others.push(t.token);
    } else if (this.passwords && this.visible(this.passwords.turn))
      others.push(...this.passwords.byApp.values());
    const values = [...new Set(others)].filter((v) => v !== right);
    return values.length > 0 ? { key, values } : null;
  }

  /**
   * A call's arguments with a password or access token the policy's context shows: a script keeps
   * the token login gave it, and sends instead the app's latest, after a new login if that one
   * has left the context; a login's password is looked up again if the list has left it.
   */
  private *visibleSecrets(app: string, api: string, args: JsonObject): Act<JsonObject> {
    if (api === "login" && typeof args.password === "string") {
      if (this.passwords && this.visible(this.passwords.turn)) return args;
      return { ...args, password: yield* this.password(app) };
    }
    if (typeof args.access_token !== "string" || !this.tokens.has(app)) return args;
    return { ...args, access_token: yield* this.login(app) };
  }

  /** The app's password, from a password list the policy's context shows (fetched if not). */
  private *password(app: string): Act<string> {
    if (!this.passwords || !this.visible(this.passwords.turn)) {
      const list = yield* this.call("supervisor", "show_account_passwords");
      if (!Array.isArray(list)) throw new ScriptError("no password list");
      this.passwords = { byApp: passwordMap(list), turn: this.turn - 1 };
    }
    const password = this.passwords.byApp.get(app);
    if (!password) throw new ScriptError(`no password for ${app}`);
    return password;
  }

  *login(app: string): Act<string> {
    const known = this.tokens.get(app);
    if (known && this.visible(known.turn)) return known.token;
    const password = yield* this.password(app);
    const username = app === "phone" ? this.phone : this.email;
    const result = (yield* this.call(app, "login", { username, password })) as JsonObject;
    const token = result.access_token;
    if (typeof token !== "string") throw new ScriptError("login returned no token");
    this.tokens.set(app, { token, turn: this.turn - 1 });
    return token;
  }

  *pages(app: string, api: string, args: JsonObject = {}): Act<JsonObject[]> {
    const all: JsonObject[] = [];
    for (let page = 0; ; page++) {
      const items = yield* this.call(app, api, { ...args, page_index: page });
      if (!Array.isArray(items)) throw new ScriptError(`${app}.${api} did not return a list`);
      if (items.length === 0) return all;
      all.push(...(items as JsonObject[]));
      if (page === 0 && this.flawed("firstPageOnly")) return all;
    }
  }

  *recall<T extends Json>(guess: T, lookup: () => Act<T>): Act<T> {
    if (this.flawed("assume")) return guess;
    return yield* lookup();
  }

  *finish(answer?: Json): Act<void> {
    const args: JsonObject = {};
    if (answer !== undefined && answer !== null)
      args.answer = Array.isArray(answer) ? answer.join(", ") : String(answer);
    yield* this.send(formatAction("supervisor", "complete_task", args));
  }
}
