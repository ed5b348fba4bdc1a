import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatAction, parseAction } from "./parser";
import type { JsonObject } from "./types";

describe("parseAction", () => {
  it("parses named literal arguments", () => {
    const r = parseAction(
      'pay.send_money(access_token="pa1", receiver_email="a@b.c", amount=12.5, note="x \\"y\\"", ok=true, n=null, ids=[1, 2])',
    );
    expect(r).toEqual({
      ok: true,
      call: {
        app: "pay",
        api: "send_money",
        args: {
          access_token: "pa1",
          receiver_email: "a@b.c",
          amount: 12.5,
          note: 'x "y"',
          ok: true,
          n: null,
          ids: [1, 2],
        },
      },
    });
    expect(parseAction("  supervisor.show_profile( )  ")).toEqual({
      ok: true,
      call: { app: "supervisor", api: "show_profile", args: {} },
    });
  });

  it.each([
    ["", /empty action/],
    ["pay.send_money", /expected '\('/],
    ["pay.send_money(1)", /must be named/],
    ["pay.send_money(amount=abc)", /quote strings/],
    ["pay.send_money(note='x')", /double quotes/],
    ['pay.send_money(note="x)', /unterminated/],
    ["pay.send_money(a=1, a=2)", /given twice/],
    ["pay.a() pay.b()", /one API call per turn/],
    ["pay.a(x=1.)", /malformed number|expected/],
    ["pay.a(x=[[1]])", /nested lists/],
    ["print(1)", /expected '\.'/],
  ])("refuses %j with a clear message", (text, message) => {
    const r = parseAction(text);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatch(message);
  });

  it("keeps __proto__ as a plain argument name", () => {
    const r = parseAction('a.b(__proto__="x")');
    expect(r.ok).toBe(true);
    if (r.ok) {
      expect(Object.keys(r.call.args)).toEqual(["__proto__"]);
      expect(Object.getPrototypeOf(r.call.args)).toBe(Object.prototype);
    }
  });

  it("never throws on arbitrary text", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (text) => {
        const r = parseAction(text);
        expect(typeof r.ok).toBe("boolean");
      }),
      { numRuns: 2000 },
    );
  });

  it("never throws on near-valid actions (adversarial mutations)", () => {
    const pieces = fc.constantFrom(
      "pay",
      ".",
      "send_money",
      "(",
      ")",
      "=",
      ",",
      '"',
      "\\",
      "[",
      "]",
      "1",
      "-",
      "e",
      " ",
      "x",
      "true",
      "null",
      "\n",
      "'",
      "__proto__",
    );
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 30 }), (parts) => {
        const r = parseAction(parts.join(""));
        expect(typeof r.ok).toBe("boolean");
      }),
      { numRuns: 3000 },
    );
  });

  it("round-trips formatAction for any literal arguments", () => {
    const ident = fc.stringMatching(/^[a-z_][a-z0-9_]{0,8}$/);
    const literal = fc.oneof(
      fc.string(),
      fc.integer(),
      fc.double({ noNaN: true, noDefaultInfinity: true }).filter((x) => !Object.is(x, -0)),
      fc.boolean(),
      fc.constant(null),
      fc.array(fc.oneof(fc.string(), fc.integer()), { maxLength: 3 }),
    );
    fc.assert(
      fc.property(ident, ident, fc.dictionary(ident, literal, { maxKeys: 4 }), (app, api, args) => {
        const text = formatAction(app, api, args as JsonObject);
        const r = parseAction(text);
        expect(r).toEqual({ ok: true, call: { app, api, args } });
      }),
      { numRuns: 1000 },
    );
  });
});
