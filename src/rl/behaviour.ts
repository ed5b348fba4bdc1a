import { ERROR_PREFIX, type Json, observationBody, parseAction, registry } from "../env";

/**
 * Behaviour statistics of rollouts, counted as in the paper's analysis (section 5.5):
 * doc lookups per rollout, calls that use an argument value seen nowhere before (assumption or
 * confabulation), give-up rate after a failed call, turns per episode, errors per turn; and
 * malformed actions per turn (not a call to an API that exists with its arguments: what the
 * action grammar rules out).
 */
export interface EpisodeText {
  /** The first observation (instruction included). */
  prompt: string;
  actions: readonly string[];
  observations: readonly string[];
}

export interface BehaviourCounts {
  rollouts: number;
  turns: number;
  docLookups: number;
  /** Calls with at least one argument value that appeared in no earlier observation nor the prompt. */
  assumptions: number;
  errors: number;
  /** Actions that do not parse, or name an app, API or argument that does not exist, a value of the wrong type, or miss a required argument. */
  malformed: number;
  /** Distinct endpoints that failed at least once. */
  failedEndpoints: number;
  /** ... of which a later call to the same endpoint succeeded. */
  recoveredEndpoints: number;
}

export interface BehaviourStats {
  docLookupsPerRollout: number;
  assumptionsPerRollout: number;
  /** (failed endpoints - later recovered) / failed endpoints. */
  giveUpRate: number;
  turnsPerEpisode: number;
  errorsPerTurn: number;
  malformedPerTurn: number;
}

/** Argument values (strings and numbers, lists flattened) as the text they would be copied from. */
function argumentTexts(value: Json): string[] {
  if (Array.isArray(value)) return value.flatMap(argumentTexts);
  if (typeof value === "string") return value.length > 0 ? [value] : [];
  if (typeof value === "number") return [String(value)];
  return [];
}

/** Counts one episode's behaviour. */
export function countBehaviour(ep: EpisodeText): BehaviourCounts {
  const c: BehaviourCounts = {
    rollouts: 1,
    turns: ep.actions.length,
    docLookups: 0,
    assumptions: 0,
    errors: 0,
    malformed: 0,
    failedEndpoints: 0,
    recoveredEndpoints: 0,
  };
  let seen = ep.prompt;
  const failed = new Set<string>();
  const recovered = new Set<string>();
  ep.actions.forEach((action, i) => {
    const obs = ep.observations[i] ?? "";
    const isError = observationBody(obs).startsWith(ERROR_PREFIX);
    if (isError) c.errors++;
    const parsed = parseAction(action);
    if (!parsed.ok || !registry.checkCall(parsed.call).ok) c.malformed++;
    if (parsed.ok) {
      const { app, api, args } = parsed.call;
      const endpoint = `${app}.${api}`;
      if (app === "api_docs") c.docLookups++;
      const values = Object.values(args).flatMap(argumentTexts);
      if (values.some((v) => !seen.includes(v))) c.assumptions++;
      if (isError) failed.add(endpoint);
      else if (failed.has(endpoint)) recovered.add(endpoint);
    }
    seen += `\n${obs}`;
  });
  c.failedEndpoints = failed.size;
  c.recoveredEndpoints = recovered.size;
  return c;
}

export function addCounts(a: BehaviourCounts, b: BehaviourCounts): BehaviourCounts {
  return {
    rollouts: a.rollouts + b.rollouts,
    turns: a.turns + b.turns,
    docLookups: a.docLookups + b.docLookups,
    assumptions: a.assumptions + b.assumptions,
    errors: a.errors + b.errors,
    malformed: a.malformed + b.malformed,
    failedEndpoints: a.failedEndpoints + b.failedEndpoints,
    recoveredEndpoints: a.recoveredEndpoints + b.recoveredEndpoints,
  };
}

export const NO_BEHAVIOUR: BehaviourCounts = {
  rollouts: 0,
  turns: 0,
  docLookups: 0,
  assumptions: 0,
  errors: 0,
  malformed: 0,
  failedEndpoints: 0,
  recoveredEndpoints: 0,
};

/** Rates over a set of episodes. */
export function behaviourStats(episodes: readonly EpisodeText[]): BehaviourStats {
  const c = episodes.map(countBehaviour).reduce(addCounts, NO_BEHAVIOUR);
  const per = (x: number, n: number) => (n > 0 ? x / n : 0);
  return {
    docLookupsPerRollout: per(c.docLookups, c.rollouts),
    assumptionsPerRollout: per(c.assumptions, c.rollouts),
    giveUpRate: per(c.failedEndpoints - c.recoveredEndpoints, c.failedEndpoints),
    turnsPerEpisode: per(c.turns, c.rollouts),
    errorsPerTurn: per(c.errors, c.turns),
    malformedPerTurn: per(c.malformed, c.turns),
  };
}
