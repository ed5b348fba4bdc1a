import { describe, expect, it } from "vitest";
import { behaviourStats } from "./behaviour";

const prompt = "You act for Vera Ford (email vera.ford@mail.com). Task: pay Rhea.";

describe("behaviour statistics", () => {
  it("counts doc lookups, assumptions, errors, malformed actions and give-ups per turn or rollout", () => {
    const stats = behaviourStats([
      {
        prompt,
        actions: [
          'api_docs.show_api_doc(app_name="pay", api_name="login")',
          'pay.login(username="vera.ford@mail.com", password="guess")', // an assumed value
          'pay.show_product(access_token="x")', // no such API: malformed
          'pay.login(username="vera.ford@mail.com", password="x", path="a")', // no such argument
          "pay.login(username=", // does not parse
          "supervisor.complete_task()",
        ],
        observations: [
          "pay.login(username: string, password: string)",
          "Error: Wrong username or password for pay.",
          "Error: Unknown API 'show_product' in app 'pay'.",
          "Error: pay.login has no argument 'path'.",
          "Error: Parse error: unterminated string at position 19.",
          "Task marked complete.",
        ],
      },
    ]);
    expect(stats.docLookupsPerRollout).toBe(1);
    expect(stats.turnsPerEpisode).toBe(6);
    expect(stats.errorsPerTurn).toBeCloseTo(4 / 6, 10);
    expect(stats.malformedPerTurn).toBeCloseTo(3 / 6, 10);
    // Values seen nowhere before: "login" (the doc lookup), "guess", and "x" twice.
    expect(stats.assumptionsPerRollout).toBe(4);
    // pay.login and pay.show_product failed and never recovered.
    expect(stats.giveUpRate).toBe(1);
  });
});
