import { APPS } from "../env";
import { allParams } from "../env/api";
import type { ApiSpec, ParamSpec } from "../env/types";
import type { TokenConstraint } from "../model/decode";
import { CAP, EOA, isByteToken, TEXT0, type Tokenizer, U16 } from "../model/tokenizer";

/**
 * The action grammar as a constraint on decoding: which tokens may come next so that the action
 * stays a prefix of a well-formed call to an API that exists,
 *   app.api(name=value, name=value)
 * with the world's app and API names, each API's own argument names (each at most once, the
 * required ones before the closing parenthesis), values of the parameter's type (a JSON string,
 * number, true/false, null for an optional one, a flat list), the canonical ", " between arguments,
 * and <eoa> right after the closing parenthesis. Values themselves are free: which password, which
 * email, which amount is the policy's choice (and its mistakes stay possible: a wrong password is
 * a well-formed call). A grammar-constrained policy samples from its distribution restricted to
 * these tokens and renormalized; scoring applies the same restriction, so log-probs agree.
 */

type Mode =
  | "app"
  | "api"
  | "argStart"
  | "argNext"
  | "arg"
  | "value"
  | "string"
  | "escape"
  | "number"
  | "literal"
  | "afterValue"
  | "space"
  | "listStart"
  | "listItem"
  | "listAfter"
  | "listSpace"
  | "end";

const APIS = new Map<string, Map<string, ApiSpec>>(
  APPS.map((a) => [a.name, new Map(a.apis.map((api) => [api.name, api]))]),
);
const APP_NAMES = [...APIS.keys()];

/** Prefixes of a JSON integer and of a JSON number (what may still become one). */
const INTEGER_PREFIX = /^-?(0|[1-9][0-9]*)?$/;
const NUMBER_PREFIX =
  /^-?$|^-?(0|[1-9][0-9]*)(\.[0-9]*)?$|^-?(0|[1-9][0-9]*)(\.[0-9]+)?[eE][+-]?[0-9]*$/;

/** A character-level cursor over a call's text: `feed` says whether a character may come next. */
export class CallCursor {
  mode: Mode = "app";
  buf = "";
  app = "";
  params: ParamSpec[] = [];
  used: string[] = [];
  param: ParamSpec | null = null;
  inList = false;

  clone(): CallCursor {
    const c = new CallCursor();
    c.mode = this.mode;
    c.buf = this.buf;
    c.app = this.app;
    c.params = this.params;
    c.used = this.used.slice();
    c.param = this.param;
    c.inList = this.inList;
    return c;
  }

  /** A key for the state (two cursors with one key allow the same continuations). */
  key(): string {
    // Inside a string, what may follow depends only on what may come after it (punctuation
    // pieces such as `")` and `", ` end a string and go on).
    if (this.mode === "string" || this.mode === "escape")
      return `${this.mode}|${this.inList}|${this.canClose()}|${this.unused().length > 0}`;
    return `${this.mode}|${this.buf}|${this.app}|${this.used.join(",")}|${this.param?.name ?? ""}|${this.inList}|${this.params.map((p) => p.name).join(",")}`;
  }

  private unused(): ParamSpec[] {
    return this.params.filter((p) => !this.used.includes(p.name));
  }

  private canClose(): boolean {
    return this.params.every((p) => !p.required || this.used.includes(p.name));
  }

  private endValue(ch: string): boolean {
    if (this.inList) {
      if (ch === ",") return this.go("listSpace");
      if (ch === "]") {
        this.inList = false;
        return this.go("afterValue");
      }
      return false;
    }
    return this.feedAfterValue(ch);
  }

  private go(mode: Mode, buf = ""): true {
    this.mode = mode;
    this.buf = buf;
    return true;
  }

  private feedAfterValue(ch: string): boolean {
    if (ch === ",") return this.unused().length > 0 && this.go("space");
    if (ch === ")") return this.canClose() && this.go("end");
    return false;
  }

  private startValue(ch: string, type: string, required: boolean): boolean {
    const scalar = type.endsWith("[]") ? type.slice(0, -2) : type;
    if (!this.inList && type.endsWith("[]") && ch === "[") return this.go("listStart");
    if (!this.inList && !required && ch === "n") return this.go("literal", "n");
    if (scalar === "string") return ch === '"' && this.go("string");
    if (scalar === "integer" || scalar === "number")
      return (ch === "-" || (ch >= "0" && ch <= "9")) && this.go("number", ch);
    if (scalar === "boolean") return (ch === "t" || ch === "f") && this.go("literal", ch);
    return false;
  }

  feed(ch: string): boolean {
    switch (this.mode) {
      case "app": {
        if (ch === "." && APIS.has(this.buf)) {
          this.app = this.buf;
          return this.go("api");
        }
        const next = this.buf + ch;
        return APP_NAMES.some((n) => n.startsWith(next)) && this.go("app", next);
      }
      case "api": {
        const apis = APIS.get(this.app) as Map<string, ApiSpec>;
        const api = apis.get(this.buf);
        if (ch === "(" && api) {
          this.params = allParams(api);
          return this.go("argStart");
        }
        const next = this.buf + ch;
        return [...apis.keys()].some((n) => n.startsWith(next)) && this.go("api", next);
      }
      case "argStart":
      case "argNext": {
        if (ch === ")" && this.mode === "argStart") return this.canClose() && this.go("end");
        return this.unused().some((p) => p.name.startsWith(ch)) && this.go("arg", ch);
      }
      case "arg": {
        const param = this.unused().find((p) => p.name === this.buf);
        if (ch === "=" && param) {
          this.param = param;
          this.used.push(param.name);
          return this.go("value");
        }
        const next = this.buf + ch;
        return this.unused().some((p) => p.name.startsWith(next)) && this.go("arg", next);
      }
      case "value": {
        const p = this.param as ParamSpec;
        return this.startValue(ch, p.type, p.required);
      }
      case "string":
        if (ch === "\\") return this.go("escape");
        if (ch === '"') return this.inList ? this.go("listAfter") : this.go("afterValue");
        return ch >= " ";
      case "escape":
        return '"\\/bfnrtu'.includes(ch) && this.go("string");
      case "number": {
        // A character joins the number only if the number stays a prefix of a valid one.
        const integer = this.param?.type.startsWith("integer");
        if (/[0-9.eE+-]/.test(ch) && (integer ? INTEGER_PREFIX : NUMBER_PREFIX).test(this.buf + ch))
          return this.go("number", this.buf + ch);
        const ok = (
          integer ? /^-?(0|[1-9][0-9]*)$/ : /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/
        ).test(this.buf);
        return ok && this.endValue(ch);
      }
      case "literal": {
        const next = this.buf + ch;
        const target = ["true", "false", "null"].find((t) => t.startsWith(this.buf));
        if (target?.startsWith(next)) return this.go("literal", next);
        return target === this.buf && this.feedAfterValue(ch);
      }
      case "afterValue":
        return this.feedAfterValue(ch);
      case "space":
        return ch === " " && this.go("argNext");
      case "listStart":
        if (ch === "]") {
          this.inList = false;
          return this.go("afterValue");
        }
        this.inList = true;
        return this.startValue(ch, (this.param as ParamSpec).type, true);
      case "listItem":
        return this.startValue(ch, (this.param as ParamSpec).type, true);
      case "listAfter":
        return this.endValue(ch);
      case "listSpace":
        return ch === " " && this.go("listItem");
      case "end":
        return false;
    }
  }
}

/** The action grammar over a tokenizer's vocabulary: one `TokenConstraint` per action to sample. */
export class ActionGrammar {
  private readonly texts: string[];
  private readonly masks = new Map<string, Uint8Array>();

  constructor(private readonly tok: Tokenizer) {
    this.texts = Array.from({ length: tok.size }, (_, id) => tok.tokenText(id));
  }

  /** A fresh constraint for one action (from its first token). */
  start(): TokenConstraint {
    return new ActionConstraint(this);
  }

  /** The tokens allowed after a cursor (memoized by the cursor's state). */
  maskFor(cursor: CallCursor, afterCap: boolean, bytesDue: number): Uint8Array {
    const key = `${cursor.key()}|${afterCap}|${bytesDue}`;
    let mask = this.masks.get(key);
    if (mask) return mask;
    mask = new Uint8Array(this.tok.size);
    const inString = cursor.mode === "string";
    for (let id = 0; id < this.tok.size; id++) {
      if (bytesDue > 0) {
        mask[id] = isByteToken(id) ? 1 : 0;
        continue;
      }
      // Inside a string: <cap> (a Titlecase word follows) and <u16> (any other character).
      if (id === EOA) mask[id] = cursor.mode === "end" && !afterCap ? 1 : 0;
      else if (id === CAP || id === U16) mask[id] = inString && !afterCap ? 1 : 0;
      else if (id < TEXT0) mask[id] = 0;
      else {
        const text = this.texts[id] as string;
        // After <cap> only a word that starts with a letter (it is capitalized when decoded).
        if (afterCap && !/^[a-z]/.test(text)) continue;
        mask[id] = text.length > 0 && this.advance(cursor.clone(), id, afterCap) ? 1 : 0;
      }
    }
    this.masks.set(key, mask);
    return mask;
  }

  /** Advances a cursor by one text token (capitalized after <cap>); false if it was not allowed. */
  advance(cursor: CallCursor, id: number, afterCap: boolean): boolean {
    if (id < TEXT0) return true;
    const text = this.texts[id] as string;
    for (const ch of afterCap ? text[0]?.toUpperCase() + text.slice(1) : text)
      if (!cursor.feed(ch)) return false;
    return true;
  }

  /** The decoded text of a <u16> byte pair (fed to the cursor once both bytes are in). */
  unit(hi: number, lo: number): string {
    return this.tok.decode([U16, hi, lo]);
  }
}

class ActionConstraint implements TokenConstraint {
  private readonly cursor = new CallCursor();
  private afterCap = false;
  private bytes: number[] = [];
  private bytesDue = 0;

  constructor(private readonly grammar: ActionGrammar) {}

  allowed(): Uint8Array {
    return this.grammar.maskFor(this.cursor, this.afterCap, this.bytesDue);
  }

  push(id: number): void {
    if (this.bytesDue > 0) {
      this.bytes.push(id);
      this.bytesDue--;
      if (this.bytesDue === 0) {
        for (const ch of this.grammar.unit(this.bytes[0] as number, this.bytes[1] as number))
          this.cursor.feed(ch);
        this.bytes = [];
      }
      return;
    }
    if (id === U16) {
      this.bytesDue = 2;
      return;
    }
    const cap = this.afterCap;
    this.afterCap = id === CAP;
    this.grammar.advance(this.cursor, id, cap);
  }
}

/**
 * The grammar's allowed tokens at every agent target of packed sequences, [B * T * V] (1 at other
 * positions): what a scoring pass needs to give a grammar-constrained policy's log-probs. An
 * action is a run of agent targets; a new one starts after <eoa> or after a non-agent position.
 */
export function grammarMask(
  grammar: ActionGrammar,
  targets: Int32Array,
  mask: Float32Array,
  B: number,
  T: number,
  V: number,
): Float32Array {
  const out = new Float32Array(B * T * V).fill(1);
  for (let b = 0; b < B; b++) {
    let constraint: TokenConstraint | null = null;
    for (let c = 0; c < T; c++) {
      const i = b * T + c;
      if (!mask[i]) {
        constraint = null;
        continue;
      }
      constraint ??= grammar.start();
      out.set(constraint.allowed(), i * V);
      const token = targets[i] as number;
      constraint.push(token);
      if (token === EOA) constraint = null;
    }
  }
  return out;
}
