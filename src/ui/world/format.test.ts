import { describe, expect, it } from "vitest";
import { APPS, generateWorld, parseAction } from "../../env";
import { apiMatches, callTemplate, cellText, columnsOf, groupTables, TABLE_APP } from "./format";
import { HINTS } from "./hints";

describe("world tab helpers", () => {
  it("every API's call template parses and names every required parameter", () => {
    for (const api of APPS.flatMap((a) => a.apis)) {
      const template = callTemplate(api);
      const parsed = parseAction(template);
      expect(parsed.ok, template).toBe(true);
      if (!parsed.ok) continue;
      expect(parsed.call.app).toBe(api.app);
      expect(parsed.call.api).toBe(api.name);
      for (const p of api.params.filter((q) => q.required))
        expect(Object.keys(parsed.call.args)).toContain(p.name);
      if (api.auth) expect(Object.keys(parsed.call.args)).toContain("access_token");
    }
  });

  it("the hints are well-formed calls", () => {
    for (const hint of HINTS) expect(parseAction(hint).ok, hint).toBe(true);
  });

  it("search matches app, name and description words", () => {
    const all = APPS.flatMap((a) => a.apis);
    const send = all.filter((api) => apiMatches(api, "send money"));
    expect(send.map((a) => `${a.app}.${a.name}`)).toContain("pay.send_money");
    expect(all.filter((api) => apiMatches(api, "")).length).toBe(all.length);
    expect(all.filter((api) => apiMatches(api, "zzzz-nothing")).length).toBe(0);
  });

  it("groups every table of a generated world under an app", () => {
    const world = generateWorld(1);
    for (const name of Object.keys(world.db)) expect(TABLE_APP[name], name).toBeDefined();
    const groups = groupTables(
      world.db,
      APPS.map((a) => a.name),
    );
    expect(groups[0]?.app).toBe("world");
    expect(groups.flatMap((g) => g.tables).length).toBe(Object.keys(world.db).length);
    expect(groups.some((g) => g.app === "other")).toBe(false);
  });

  it("formats cells and columns", () => {
    expect(cellText("a")).toBe("a");
    expect(cellText(["x", 1])).toBe('["x",1]');
    expect(cellText(undefined)).toBe("");
    expect(
      columnsOf([
        { id: 1, a: 1 },
        { id: 2, b: 2 },
      ]),
    ).toEqual(["id", "a", "b"]);
  });
});
