import { findRow, removeRow, table } from "../db";
import type { Rng } from "../rng";
import {
  ApiError,
  type AppSpec,
  type CallContext,
  type Db,
  type Json,
  type JsonObject,
  type ParamSpec,
  type ParamType,
  type Person,
  type Row,
} from "../types";

/** What an app's seeding function gets: the database so far, the people and a seeded stream. */
export interface SeedContext {
  db: Db;
  user: Person;
  people: Person[];
  today: string;
  rng: Rng;
}

/** An app: its API specs plus how it fills its tables in a freshly generated world. */
export interface AppModule {
  spec: AppSpec;
  seed?: (ctx: SeedContext) => void;
}

type ApiDef = {
  name: string;
  description: string;
  params?: ParamSpec[];
  returns: string;
  errors?: string[];
  auth?: boolean;
  paged?: boolean;
  mutates?: boolean;
  handler: (ctx: CallContext, args: JsonObject) => Json;
};

/** Builds an app spec; APIs need a login unless they say auth: false. */
export function defineApp(name: string, description: string, apis: ApiDef[]): AppSpec {
  return {
    name,
    description,
    apis: apis.map((a) => ({
      app: name,
      name: a.name,
      description: a.description,
      params: a.params ?? [],
      returns: a.returns,
      errors: [...(a.auth === false ? [] : ["invalid access_token"]), ...(a.errors ?? [])],
      auth: a.auth ?? true,
      paged: a.paged ?? false,
      mutates: a.mutates ?? false,
      handler: a.handler,
    })),
  };
}

/** A required parameter. */
export function req(name: string, type: ParamType, description: string): ParamSpec {
  return { name, type, required: true, description };
}

/** An optional parameter with its default. */
export function opt(
  name: string,
  type: ParamType,
  description: string,
  def: Json = null,
): ParamSpec {
  return { name, type, required: false, description, default: def };
}

/**
 * The login API every app has: username (the account's email, or phone number for phone) and the
 * password from supervisor.show_account_passwords(); returns an access token.
 */
export function loginApi(app: string, usernameHint = "your email"): ApiDef {
  return {
    name: "login",
    description: `Log in to ${app} and get an access token for its other APIs.`,
    params: [req("username", "string", usernameHint), req("password", "string", "from supervisor")],
    returns: '{"access_token": string}',
    errors: ["wrong username or password"],
    auth: false,
    handler: (ctx, args) => {
      const account = findRow(
        ctx.db,
        "accounts",
        (r) => r.app === app && r.username === args.username && r.password === args.password,
      );
      if (!account) throw new ApiError(`Wrong username or password for ${app}.`);
      return { access_token: ctx.issueToken(app, args.username as string) };
    },
  };
}

/**
 * An API that deletes one of the user's rows by id, e.g. notes.delete_note(note_id): the same
 * parameter, errors, ownership check and rollback for every app.
 */
export function deleteOwnedApi(
  name: string,
  description: string,
  tableName: string,
  idParam: string,
  what: string,
  confirmation: (row: Row) => string,
): ApiDef {
  return {
    name,
    description,
    params: [req(idParam, "integer", "")],
    returns: "a confirmation",
    errors: [`${what} not found`],
    mutates: true,
    handler: (ctx, args) => {
      const row = getRow(ctx.db, tableName, args[idParam] as number, what, ctx.user);
      removeRow(ctx.db, tableName, row.id);
      return confirmation(row);
    },
  };
}

export function getRow(db: Db, name: string, id: number, what: string, owner?: string): Row {
  const row = findRow(db, name, (r) => r.id === id && (owner === undefined || r.owner === owner));
  if (!row) throw new ApiError(`No ${what} with id ${id}.`);
  return row;
}

/** Rows of a table owned by the logged-in user. */
export function owned(ctx: CallContext, name: string): Row[] {
  return table(ctx.db, name).filter((r) => r.owner === ctx.user);
}

/** Case-insensitive substring match over some fields; an empty query matches everything. */
export function matchesQuery(row: Row, query: Json, fields: string[]): boolean {
  if (typeof query !== "string" || query.trim() === "") return true;
  const q = query.toLowerCase();
  return fields.some((f) =>
    String(row[f] ?? "")
      .toLowerCase()
      .includes(q),
  );
}

/** Picks the listed fields of a row, in that order (compact observations). */
export function pick(row: Row, fields: string[]): JsonObject {
  const out: JsonObject = {};
  for (const f of fields) out[f] = (row[f] ?? null) as Json;
  return out;
}

export function positiveAmount(value: Json, what = "amount"): number {
  const n = value as number;
  if (!(n > 0)) throw new ApiError(`${what} must be greater than 0.`);
  if (Math.abs(n * 100 - Math.round(n * 100)) > 1e-6)
    throw new ApiError(`${what} has more than 2 decimals.`);
  return n;
}

export function nonEmpty(value: Json, what: string): string {
  const s = (value as string).trim();
  if (s === "") throw new ApiError(`${what} must not be empty.`);
  return s;
}

export function isoDate(value: Json, what: string): string {
  const s = value as string;
  if (!/^\d{4}-\d{2}-\d{2}$/.test(s) || Number.isNaN(Date.parse(s)))
    throw new ApiError(`${what} must be a date like 2026-05-14.`);
  return s;
}

/** Shifts an ISO date by whole days (UTC, deterministic). */
export function addDays(date: string, days: number): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

/** Someone with this relationship to the user, else anyone: one draw either way. */
export function personWith(people: Person[], rng: Rng, relationship: string): Person {
  const matching = people.filter((p) => p.relationship === relationship);
  return rng.pick(matching.length > 0 ? matching : people);
}

/** n distinct people with this relationship (fewer if there are not that many), in random order. */
export function peopleWith(people: Person[], rng: Rng, relationship: string, n: number): Person[] {
  return rng.sample(
    people.filter((p) => p.relationship === relationship),
    n,
  );
}

/**
 * A seed timestamp "YYYY-MM-DDTHH:MM": `daysAgo` days before today (a number, or a [lo, hi] range
 * drawn first), at an hour drawn from `hours` ([from, to], both included), then a minute.
 */
export function stampDaysAgo(
  today: string,
  rng: Rng,
  daysAgo: number | readonly [number, number],
  hours: readonly [number, number],
): string {
  const days = typeof daysAgo === "number" ? daysAgo : rng.int(daysAgo[0], daysAgo[1]);
  const date = addDays(today, -days);
  const hour = rng.int(hours[0], hours[1]);
  const minute = rng.int(0, 59);
  return `${date}T${String(hour).padStart(2, "0")}:${String(minute).padStart(2, "0")}`;
}

/** Newest first by a field, ties by id descending. */
export function newestFirst(rows: Row[], field: string): Row[] {
  return rows.slice().sort((a, b) => {
    const x = String(a[field] ?? "");
    const y = String(b[field] ?? "");
    return x < y ? 1 : x > y ? -1 : b.id - a.id;
  });
}
