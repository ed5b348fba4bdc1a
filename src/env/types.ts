/** Plain JSON values: everything in the world's database and every API result is one. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** A database row; every table's rows carry a numeric id unique within the table. */
export type Row = { id: number } & JsonObject;

/** The world's whole state: table name -> rows. Episodes copy it; evaluation diffs two of them. */
export type Db = Record<string, Row[]>;

export type ParamType = "string" | "integer" | "number" | "boolean" | "string[]" | "integer[]";

export interface ParamSpec {
  name: string;
  type: ParamType;
  required: boolean;
  description: string;
  /** Shown in the doc for optional parameters. */
  default?: Json;
}

/** What a handler sees: the database, the caller's identity (for authed APIs) and the clock. */
export interface CallContext {
  db: Db;
  /** Email (or phone number for the phone app) of the logged-in account; "" when the API needs no login. */
  user: string;
  /** ISO date-time of "now" in the world; advances one minute per call. */
  now: string;
  /** Issues an access token for an app and account (used by login APIs). */
  issueToken(app: string, username: string): string;
  /** Marks the episode as finished (supervisor.complete_task). */
  complete(answer: Json): void;
}

export interface ApiSpec {
  app: string;
  name: string;
  description: string;
  params: ParamSpec[];
  /** One line: what a successful call returns. */
  returns: string;
  /** The error conditions, in words. */
  errors: string[];
  /** True when the API needs access_token (added automatically to params). */
  auth: boolean;
  /** True when the API returns a list paginated with page_index (added automatically). */
  paged: boolean;
  /** True when the API may change the database; a failing call is rolled back. */
  mutates: boolean;
  handler: (ctx: CallContext, args: JsonObject) => Json;
}

export interface AppSpec {
  name: string;
  description: string;
  apis: ApiSpec[];
}

/** An expected failure of an API call: becomes an error observation, never an exception. */
export class ApiError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ApiError";
  }
}

export interface Person {
  id: number;
  first_name: string;
  last_name: string;
  email: string;
  phone: string;
  birthday: string;
  city: string;
  /** Relationship to the user ("self" for the user). */
  relationship: string;
}
