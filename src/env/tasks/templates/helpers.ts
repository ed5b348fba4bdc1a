import { table } from "../../db";
import { Rng } from "../../rng";
import type { Db, JsonObject, Person, Row } from "../../types";
import type { World } from "../../world";
import { type Act, type Actor, ScriptError } from "../actor";

/** Shared pieces of templates: picking people, and lookups that solution scripts reuse. */

export function fullName(p: Person): string {
  return `${p.first_name} ${p.last_name}`;
}

/** People with one of the relationships; falls back to anyone when none has it. */
export function peopleWith(world: World, relationships: string[]): Person[] {
  const found = world.people.filter((p) => relationships.includes(p.relationship));
  return found.length > 0 ? found : world.people;
}

/**
 * The item for variant `variant` from one shuffle shared by the scenario's variants (seeded by the
 * world and a label), so the 3 variants get distinct items whenever there are enough.
 */
export function variantPick<T>(
  world: World,
  items: readonly T[],
  variant: number,
  label: string,
): T {
  const shuffled = Rng.derive(world.seed, label).shuffle(items);
  return shuffled[variant % shuffled.length] as T;
}

/** @deprecated per-variant streams can repeat a person across variants; use variantPick. */
export function pickPerson(rng: Rng, candidates: Person[], variant: number): Person {
  const shuffled = rng.shuffle(candidates);
  return shuffled[variant % shuffled.length] as Person;
}

/** The obvious but often wrong guess of someone's email from their name (confabulation). */
export function guessEmail(name: string): string {
  return `${name.toLowerCase().replace(/\s+/g, ".")}@mail.com`;
}

export function rows(db: Db, name: string): Row[] {
  return table(db, name);
}

/** Looks a person's contact up in phone by full name (logging in to phone as needed). */
export function* findContact(a: Actor, name: string): Act<JsonObject> {
  const token = yield* a.login("phone");
  const found = yield* a.pages("phone", "search_contacts", { access_token: token, query: name });
  const hit = found.find(
    (c) => `${c.first_name} ${c.last_name}`.toLowerCase() === name.toLowerCase(),
  );
  if (!hit) throw new ScriptError(`no contact named ${name}`);
  return hit;
}

/** A person's email: looked up in phone contacts, or (by a flawed actor) guessed from the name. */
export function* contactEmail(a: Actor, name: string): Act<string> {
  return yield* a.recall(guessEmail(name), function* () {
    const c = yield* findContact(a, name);
    return c.email as string;
  });
}

/** The contacts with a relationship, all pages. */
export function* contactsWith(a: Actor, relationship: string): Act<JsonObject[]> {
  const token = yield* a.login("phone");
  return yield* a.pages("phone", "search_contacts", { access_token: token, relationship });
}

export function money(n: number): number {
  return Math.round(n * 100) / 100;
}
