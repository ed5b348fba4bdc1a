import type { Db, Json, Row } from "./types";

/** A deep copy of a database (rows are plain JSON). */
export function cloneDb(db: Db): Db {
  return structuredClone(db);
}

export function table(db: Db, name: string): Row[] {
  let rows = db[name];
  if (!rows) {
    rows = [];
    db[name] = rows;
  }
  return rows;
}

export function nextId(db: Db, name: string): number {
  let max = 0;
  for (const row of table(db, name)) if (row.id > max) max = row.id;
  return max + 1;
}

export function insert<T extends Omit<Row, "id">>(db: Db, name: string, row: T): Row {
  const full = { id: nextId(db, name), ...row } as Row;
  table(db, name).push(full);
  return full;
}

export function findRow(db: Db, name: string, pred: (row: Row) => boolean): Row | undefined {
  return table(db, name).find(pred);
}

export function removeRow(db: Db, name: string, id: number): void {
  const rows = table(db, name);
  const i = rows.findIndex((r) => r.id === id);
  if (i >= 0) rows.splice(i, 1);
}

/** Canonical JSON (sorted keys) so equal values compare equal as strings. */
export function canonical(value: Json | undefined): string {
  if (value === undefined) return "undefined";
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(",")}}`;
}

export interface Change {
  table: string;
  id: number;
  kind: "added" | "removed" | "updated";
  before?: Row;
  after?: Row;
  /** For updates: the fields whose values differ. */
  fields?: string[];
}

/** Every row-level difference between two databases, in a stable order (table, then id). */
export function diffDb(before: Db, after: Db): Change[] {
  const changes: Change[] = [];
  const names = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  for (const name of names) {
    const a = new Map((before[name] ?? []).map((r) => [r.id, r]));
    const b = new Map((after[name] ?? []).map((r) => [r.id, r]));
    const ids = [...new Set([...a.keys(), ...b.keys()])].sort((x, y) => x - y);
    for (const id of ids) {
      const ra = a.get(id);
      const rb = b.get(id);
      if (ra && !rb) changes.push({ table: name, id, kind: "removed", before: ra });
      else if (!ra && rb) changes.push({ table: name, id, kind: "added", after: rb });
      else if (ra && rb) {
        const fields = [...new Set([...Object.keys(ra), ...Object.keys(rb)])].filter(
          (k) => canonical(ra[k]) !== canonical(rb[k]),
        );
        if (fields.length > 0)
          changes.push({ table: name, id, kind: "updated", before: ra, after: rb, fields });
      }
    }
  }
  return changes;
}

export function describeChange(c: Change): string {
  const row = c.after ?? c.before;
  const label = row ? compactRow(row) : "";
  if (c.kind === "updated") return `${c.table}#${c.id} updated (${c.fields?.join(", ")}): ${label}`;
  return `${c.table}#${c.id} ${c.kind}: ${label}`;
}

function compactRow(row: Row): string {
  const text = JSON.stringify(row);
  return text.length > 160 ? `${text.slice(0, 157)}...` : text;
}
