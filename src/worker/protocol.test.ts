import { describe, expect, it } from "vitest";
import { DEFAULT_SETTINGS, parseSetting, settingsFromQuery, settingsToQuery } from "./protocol";

describe("settings in the URL", () => {
  it("round-trips every setting", () => {
    const s = {
      ...DEFAULT_SETTINGS,
      algo: "grpo" as const,
      k: 6,
      lr: 0.001,
      seed: 7,
      grammar: "off" as const,
    };
    expect(settingsFromQuery(settingsToQuery(s))).toEqual({ settings: s, errors: [] });
  });

  it("reads numbers in decimal notation only, in range; anything else is refused with a reason", () => {
    expect(parseSetting("k", "6")).toEqual({ ok: true, value: 6 });
    expect(parseSetting("lr", "3e-4")).toEqual({ ok: true, value: 0.0003 });
    expect(parseSetting("lr", ".001")).toEqual({ ok: true, value: 0.001 });
    for (const [key, text, error] of [
      ["k", "0x10", /integer/],
      ["k", "0b11", /integer/],
      ["k", "", /integer/],
      ["k", "Infinity", /integer/],
      ["k", "2.5", /integer/],
      ["k", "-3", /between 2 and 16/],
      ["lr", "abc", /number/],
      ["algo", "nope", /one of loop/],
    ] as const) {
      const r = parseSetting(key, text);
      expect(r.ok, `${key}=${text}`).toBe(false);
      if (!r.ok) expect(r.error).toMatch(error);
    }
    const { settings, errors } = settingsFromQuery("?k=0x10&seed=5");
    expect(settings.k).toBe(DEFAULT_SETTINGS.k);
    expect(settings.seed).toBe(5);
    expect(errors).toHaveLength(1);
  });
});
