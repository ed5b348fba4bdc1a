import type { Change } from "../db";
import type { Row } from "../types";
import type { ExpectedChange } from "./types";

/** A row added to `table` that satisfies `pred`. */
export function added(
  name: string,
  tableName: string,
  pred: (row: Row) => boolean,
): ExpectedChange {
  return {
    name,
    match: (c) => c.table === tableName && c.kind === "added" && !!c.after && pred(c.after),
  };
}

/** The row `id` of `table` removed. */
export function removed(name: string, tableName: string, id: number): ExpectedChange {
  return { name, match: (c) => c.table === tableName && c.kind === "removed" && c.id === id };
}

/**
 * The row `id` of `table` updated so that `pred(after, before)` holds, changing only `fields`
 * (when given).
 */
export function updated(
  name: string,
  tableName: string,
  id: number,
  pred: (after: Row, before: Row) => boolean,
  fields?: string[],
): ExpectedChange {
  return {
    name,
    match: (c) =>
      c.table === tableName &&
      c.kind === "updated" &&
      c.id === id &&
      !!c.after &&
      !!c.before &&
      pred(c.after, c.before) &&
      (!fields || (c.fields ?? []).every((f) => fields.includes(f))),
  };
}

/** Allows updates of the given rows' listed fields (side effects such as balances or stock). */
export function allowUpdates(
  tableName: string,
  ids: number[],
  fields: string[],
): (c: Change) => boolean {
  return (c) =>
    c.table === tableName &&
    c.kind === "updated" &&
    ids.includes(c.id) &&
    (c.fields ?? []).every((f) => fields.includes(f));
}

/** Any of several allow rules. */
export function allowAny(...rules: ((c: Change) => boolean)[]): (c: Change) => boolean {
  return (c) => rules.some((r) => r(c));
}

/** Amounts equal to the cent. */
export function sameAmount(a: unknown, b: number): boolean {
  return typeof a === "number" && Math.abs(a - b) < 0.005;
}
