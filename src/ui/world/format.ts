/** Pure helpers of the world tab: call templates, table grouping, cell text. No React, no DOM. */

import type { Db, Json } from "../../env";
import { allParams } from "../../env/api";
import type { ApiSpec, ParamType } from "../../env/types";

function placeholder(type: ParamType): string {
  switch (type) {
    case "string":
      return '""';
    case "integer":
    case "number":
      return "0";
    case "boolean":
      return "false";
    case "string[]":
    case "integer[]":
      return "[]";
  }
}

/**
 * A call with every required parameter (and page_index for paged APIs) as a placeholder to fill in,
 * e.g. `phone.search_contacts(access_token="", query="", page_index=0)`.
 */
export function callTemplate(api: ApiSpec): string {
  const args = allParams(api)
    .filter((p) => p.required || p.name === "page_index")
    .map((p) => `${p.name}=${p.name === "page_index" ? "0" : placeholder(p.type)}`);
  return `${api.app}.${api.name}(${args.join(", ")})`;
}

/** Whether an API matches a search query (app, name, description or parameter names). */
export function apiMatches(api: ApiSpec, query: string): boolean {
  const q = query.trim().toLowerCase();
  if (!q) return true;
  const hay = [`${api.app}.${api.name}`, api.description, ...api.params.map((p) => p.name)]
    .join(" ")
    .toLowerCase();
  return q.split(/\s+/).every((word) => hay.includes(word));
}

/** Which app each table of the generated world belongs to ("world" for the shared tables). */
export const TABLE_APP: Record<string, string> = {
  people: "world",
  accounts: "world",
  cards: "supervisor",
  contacts: "phone",
  texts: "phone",
  emails: "mail",
  pay_accounts: "pay",
  transactions: "pay",
  payment_requests: "pay",
  songs: "music",
  liked_songs: "music",
  playlists: "music",
  notes: "notes",
  todos: "todo",
  files: "files",
  events: "calendar",
  products: "shop",
  carts: "shop",
  cart_items: "shop",
  orders: "shop",
  split_groups: "splitbill",
  expenses: "splitbill",
};

export interface TableGroup {
  app: string;
  tables: { name: string; rows: number }[];
}

/** The database's tables grouped by app, in the order given (unknown tables go to "other"). */
export function groupTables(db: Db, appOrder: readonly string[]): TableGroup[] {
  const order = ["world", ...appOrder, "other"];
  const groups = new Map<string, TableGroup>();
  for (const [name, rows] of Object.entries(db)) {
    const app = TABLE_APP[name] ?? "other";
    let group = groups.get(app);
    if (!group) {
      group = { app, tables: [] };
      groups.set(app, group);
    }
    group.tables.push({ name, rows: rows.length });
  }
  const rank = (app: string) => {
    const i = order.indexOf(app);
    return i < 0 ? order.length : i;
  };
  return [...groups.values()].sort((a, b) => rank(a.app) - rank(b.app));
}

/** The columns of a table: the union of its rows' keys, in first-seen order. */
export function columnsOf(rows: readonly Record<string, Json>[]): string[] {
  const seen = new Set<string>();
  for (const row of rows) for (const key of Object.keys(row)) seen.add(key);
  return [...seen];
}

/** One cell as short text: strings as they are, everything else as JSON. */
export function cellText(value: Json | undefined): string {
  if (value === undefined) return "";
  if (typeof value === "string") return value;
  return JSON.stringify(value);
}
