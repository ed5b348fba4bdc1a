import type { Json, JsonObject } from "./types";

/**
 * The action language: exactly one API call per turn,
 *   app.api(name=value, name=value)
 * with values that are JSON literals: "strings" (JSON escapes), numbers, true, false, null and
 * [lists] of those. Arguments are always named. Nothing is evaluated: the text is scanned by hand.
 * Values seen in observations are copied literally (a small model copies by attention).
 */
export interface ParsedCall {
  app: string;
  api: string;
  args: JsonObject;
}

export type ParseResult = { ok: true; call: ParsedCall } | { ok: false; error: string };

export const MAX_ACTION_CHARS = 2000;
const IDENT = /[A-Za-z_][A-Za-z0-9_]*/y;
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;

class Scanner {
  pos = 0;
  constructor(readonly text: string) {}

  skipSpace(): void {
    while (this.pos < this.text.length && /\s/.test(this.text[this.pos] as string)) this.pos++;
  }

  peek(): string {
    return this.text[this.pos] ?? "";
  }

  match(re: RegExp): string | null {
    re.lastIndex = this.pos;
    const m = re.exec(this.text);
    if (!m) return null;
    this.pos += m[0].length;
    return m[0];
  }

  expect(ch: string, what: string): void {
    this.skipSpace();
    if (this.peek() !== ch) throw new SyntaxError(`expected ${what} at position ${this.pos}`);
    this.pos++;
  }

  value(depth = 0): Json {
    this.skipSpace();
    const ch = this.peek();
    if (ch === '"') return this.string();
    if (ch === "[") {
      if (depth > 0) throw new SyntaxError(`nested lists are not supported (position ${this.pos})`);
      this.pos++;
      const items: Json[] = [];
      this.skipSpace();
      if (this.peek() === "]") {
        this.pos++;
        return items;
      }
      for (;;) {
        items.push(this.value(depth + 1));
        this.skipSpace();
        const c = this.peek();
        this.pos++;
        if (c === "]") return items;
        if (c !== ",")
          throw new SyntaxError(`expected ',' or ']' in a list at position ${this.pos - 1}`);
      }
    }
    const num = this.match(NUMBER);
    if (num !== null) {
      const next = this.peek();
      if (/[A-Za-z0-9_.]/.test(next))
        throw new SyntaxError(`malformed number at position ${this.pos}`);
      return Number(num);
    }
    const word = this.match(IDENT);
    if (word === "true") return true;
    if (word === "false") return false;
    if (word === "null") return null;
    if (word !== null)
      throw new SyntaxError(`bare word '${word}' is not a value; quote strings like "${word}"`);
    if (ch === "'") throw new SyntaxError("strings use double quotes, not single quotes");
    throw new SyntaxError(
      ch ? `unexpected '${ch}' at position ${this.pos}` : "unexpected end of action",
    );
  }

  string(): string {
    const start = this.pos;
    this.pos++;
    while (this.pos < this.text.length) {
      const c = this.text[this.pos];
      if (c === "\\") this.pos += 2;
      else if (c === '"') {
        this.pos++;
        const literal = this.text.slice(start, this.pos);
        try {
          // JSON.parse of one string literal decodes escapes; it runs no code.
          return JSON.parse(literal) as string;
        } catch {
          throw new SyntaxError(`invalid string literal at position ${start}`);
        }
      } else if (c === "\n") throw new SyntaxError(`unterminated string at position ${start}`);
      else this.pos++;
    }
    throw new SyntaxError(`unterminated string at position ${start}`);
  }
}

/** Parses one action. Never throws: a malformed action gives { ok: false, error }. */
export function parseAction(text: string): ParseResult {
  if (typeof text !== "string") return { ok: false, error: "the action must be text" };
  if (text.length > MAX_ACTION_CHARS)
    return { ok: false, error: `the action is longer than ${MAX_ACTION_CHARS} characters` };
  const s = new Scanner(text);
  try {
    s.skipSpace();
    if (s.pos >= text.length)
      throw new SyntaxError("empty action; write one API call like app.api(name=value)");
    const app = s.match(IDENT);
    if (!app)
      throw new SyntaxError("an action starts with an app name, like supervisor.show_profile()");
    if (s.peek() !== ".") throw new SyntaxError(`expected '.' after app name '${app}'`);
    s.pos++;
    const api = s.match(IDENT);
    if (!api) throw new SyntaxError(`expected an API name after '${app}.'`);
    s.expect("(", "'(' after the API name");
    const args: JsonObject = {};
    s.skipSpace();
    if (s.peek() === ")") s.pos++;
    else {
      for (;;) {
        s.skipSpace();
        const before = s.pos;
        const name = s.match(IDENT);
        s.skipSpace();
        if (!name || s.peek() !== "=") {
          s.pos = before;
          throw new SyntaxError(`arguments must be named, like name=value (position ${before})`);
        }
        s.pos++;
        if (Object.hasOwn(args, name)) throw new SyntaxError(`argument '${name}' given twice`);
        // defineProperty, not assignment: a name like __proto__ stays a plain key.
        Object.defineProperty(args, name, {
          value: s.value(),
          enumerable: true,
          writable: true,
          configurable: true,
        });
        s.skipSpace();
        const c = s.peek();
        s.pos++;
        if (c === ")") break;
        if (c !== ",") throw new SyntaxError(`expected ',' or ')' at position ${s.pos - 1}`);
        s.skipSpace();
        if (s.peek() === ")") {
          s.pos++;
          break;
        }
      }
    }
    s.skipSpace();
    if (s.pos < text.length)
      throw new SyntaxError("one API call per turn: remove the text after ')'");
    return { ok: true, call: { app, api, args } };
  } catch (e) {
    return { ok: false, error: `Parse error: ${(e as Error).message}.` };
  }
}

/** Writes a call in the action language (the inverse of parseAction for valid calls). */
export function formatAction(app: string, api: string, args: JsonObject = {}): string {
  const parts = Object.entries(args).map(([k, v]) => `${k}=${JSON.stringify(v)}`);
  return `${app}.${api}(${parts.join(", ")})`;
}
