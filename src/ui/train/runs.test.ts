import { describe, expect, it } from "vitest";
import { DEFAULT_SETTINGS } from "../../worker/protocol";
import { parseRunFile, RUN_FORMAT } from "./runs";

const metrics = {
  iteration: 1,
  meanReward: 0.4,
  successRate: 0.25,
  filteredShare: 0.5,
  policyLoss: -0.01,
  clipFraction: 0.02,
  approxKl: 0.001,
  entropy: 0.8,
  steps: 2,
  sampleTokensPerSecond: 50,
  trainTokensPerSecond: 200,
  advantage: { mean: 0, std: 0.1, min: -0.2, max: 0.2, histogram: [1, 2], edges: [-1, 0, 1] },
  behaviour: {
    docLookupsPerRollout: 2,
    assumptionsPerRollout: 1,
    giveUpRate: 0.5,
    turnsPerEpisode: 12,
  },
};
const run = {
  format: RUN_FORMAT,
  id: "run-1",
  name: "loop seed 0",
  createdAt: "2026-12-05T18:00:00.000Z",
  settings: DEFAULT_SETTINGS,
  metrics: [metrics],
  evals: [],
  samples: [],
};

describe("run files", () => {
  it("an exported run reads back as it was", () => {
    const r = parseRunFile(JSON.stringify(run));
    expect(r.ok && r.run).toEqual(run);
  });

  it("a run the page could not show is refused, saying why", () => {
    const cases: [string, unknown, RegExp][] = [
      ["not JSON", "{", /not JSON/],
      ["another format", { ...run, format: "x" }, /not a run file/],
      [
        "a setting of the wrong type",
        { ...run, settings: { ...DEFAULT_SETTINGS, k: "4" } },
        /k is not a number/,
      ],
      [
        "a setting out of range",
        { ...run, settings: { ...DEFAULT_SETTINGS, k: 1 } },
        /settings: k/,
      ],
      [
        "metrics without what the charts read",
        { ...run, metrics: [{ iteration: 1, meanReward: 0.5 }] },
        /metrics\[0\].*successRate/,
      ],
      [
        "metrics without behaviour",
        { ...run, metrics: [{ ...metrics, behaviour: undefined }] },
        /metrics\[0\].*no object/,
      ],
      [
        "metrics without the advantage histogram",
        { ...run, metrics: [{ ...metrics, advantage: { mean: 0 } }] },
        /metrics\[0\] has no advantage histogram/,
      ],
      [
        "a non-finite metric (JSON's null)",
        { ...run, metrics: [{ ...metrics, entropy: null }] },
        /entropy is not a number/,
      ],
    ];
    for (const [what, value, error] of cases) {
      const r = parseRunFile(typeof value === "string" ? value : JSON.stringify(value));
      expect(r.ok, what).toBe(false);
      if (!r.ok) expect(r.error, what).toMatch(error);
    }
  });
});
