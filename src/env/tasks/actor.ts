import type { Json, JsonObject } from "../types";

/** A step of a solution script: yields action texts, receives observations, returns T. */
export type Act<T> = Generator<string, T, string>;

/**
 * How solution scripts act. The expert implements it faithfully; the demonstrator (src/agent/) with
 * seeded flaws. Scripts written against it use only observations and the instruction's values.
 */
export interface Actor {
  /** Today's date (YYYY-MM-DD), as the prompt states it. */
  readonly today: string;
  /** Calls an API (reading its doc first, as the prompt asks) and returns the parsed result. */
  call(app: string, api: string, args?: JsonObject): Act<Json>;
  /** Logs in to an app with the password from supervisor; returns the access token. */
  login(app: string): Act<string>;
  /** Calls a paginated API page by page until an empty page; returns all items. */
  pages(app: string, api: string, args?: JsonObject): Act<JsonObject[]>;
  /**
   * A value the script looks up with `lookup`; a flawed actor may instead assume `guess`
   * (confabulation, e.g. an email guessed from a name).
   */
  recall<T extends Json>(guess: T, lookup: () => Act<T>): Act<T>;
  /** supervisor.complete_task, with the answer when the task asks a question. */
  finish(answer?: Json): Act<void>;
}

/** Thrown inside a script when an observation is not what the script needs. */
export class ScriptError extends Error {}
