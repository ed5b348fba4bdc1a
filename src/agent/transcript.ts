import { BOS, EOA, EOO, type Tokenizer } from "../model/tokenizer";

/**
 * The token form of an episode, shared by rollouts, SFT and the trainer:
 *   <bos> prompt <eoo> | action <eoa> observation <eoo> | action <eoa> observation <eoo> | ...
 * Actions are agent tokens (the exact ids sampled); everything else is environment tokens.
 */
export interface TurnTokens {
  /** Sampled action ids, ending with <eoa> unless the per-turn cap cut it. */
  action: number[];
  /** The observation's ids, ending with <eoo> (empty after the last turn). */
  observation: number[];
  /** false: context only, left out of the loss (a demonstrator's slip); default true. */
  imitate?: boolean;
}

export function promptTokens(tok: Tokenizer, prompt: string): number[] {
  return [BOS, ...tok.encode(prompt), EOO];
}

export function actionTokens(tok: Tokenizer, action: string): number[] {
  return [...tok.encode(action), EOA];
}

export function observationTokens(tok: Tokenizer, observation: string): number[] {
  return [...tok.encode(observation), EOO];
}

/**
 * The context rule, one rule for sampling and training: turn i acts on the prompt plus turns
 * [start_i, i). While that fits the budget, start_i = start_{i-1}; when it would not, the oldest
 * turns are dropped until the context fills at most half the budget (so that a long episode
 * has few distinct contexts). The prompt is always kept. Returns start_i for every turn.
 */
export function contextStarts(
  promptLength: number,
  turnLengths: readonly number[],
  budget: number,
): number[] {
  if (promptLength > budget)
    throw new Error(`the prompt (${promptLength} tokens) exceeds the context budget (${budget})`);
  const starts: number[] = [];
  let start = 0;
  let used = promptLength;
  for (let i = 0; i < turnLengths.length; i++) {
    if (i > 0) used += turnLengths[i - 1] as number;
    if (used > budget) {
      while (start < i && used > budget / 2) used -= turnLengths[start++] as number;
      if (used > budget) throw new Error(`turn ${i - 1} alone exceeds the context budget`);
    }
    starts.push(start);
  }
  return starts;
}

/**
 * Follows an episode as it is played and says, by the context rule, which turns the policy's next
 * action is sampled on: a script acting for the policy (the demonstrator) can then forget what
 * has left that context and look it up again, instead of showing a value the policy cannot see.
 */
export class ContextTracker {
  private promptLength = 0;
  private readonly lengths: number[] = [];

  constructor(
    private readonly tok: Tokenizer,
    private readonly budget: number,
  ) {}

  prompt(text: string): void {
    this.promptLength = promptTokens(this.tok, text).length;
    this.lengths.length = 0;
  }

  turn(action: string, observation: string): void {
    this.lengths.push(
      actionTokens(this.tok, action).length + observationTokens(this.tok, observation).length,
    );
  }

  /** The first turn the next action's context holds (turn i is in it iff i >= start()). */
  start(): number {
    return contextStarts(this.promptLength, [...this.lengths, 0], this.budget).at(-1) as number;
  }
}

/** The tokens the policy sees before acting in turn `i` (prompt + kept turns). */
export function contextFor(
  prompt: number[],
  turns: readonly TurnTokens[],
  start: number,
  i: number,
): number[] {
  const out = prompt.slice();
  for (let j = start; j < i; j++) {
    const t = turns[j] as TurnTokens;
    out.push(...t.action, ...t.observation);
  }
  return out;
}

/** One training sequence: tokens and a 0/1 mask marking the agent tokens to learn from. */
export interface Segment {
  tokens: number[];
  agentMask: number[];
  /** The turns whose actions this segment trains. */
  turns: number[];
  /** The turn each masked-in token belongs to, -1 elsewhere (same length as tokens). */
  turnOf: number[];
}

/**
 * Splits a transcript into the sequences that reproduce every action's sampling context exactly:
 * turns sharing a context start share one sequence; only their own actions are masked in.
 */
export function segments(
  prompt: number[],
  turns: readonly TurnTokens[],
  budget: number,
): Segment[] {
  const starts = contextStarts(
    prompt.length,
    turns.map((t) => t.action.length + t.observation.length),
    budget,
  );
  const out: Segment[] = [];
  let i = 0;
  while (i < turns.length) {
    const start = starts[i] as number;
    let end = i;
    while (end < turns.length && starts[end] === start) end++;
    const tokens = prompt.slice();
    const agentMask = new Array<number>(prompt.length).fill(0);
    const turnOf = new Array<number>(prompt.length).fill(-1);
    for (let j = start; j < end; j++) {
      const t = turns[j] as TurnTokens;
      const learn = j >= i && t.imitate !== false ? 1 : 0;
      tokens.push(...t.action);
      agentMask.push(...new Array<number>(t.action.length).fill(learn));
      turnOf.push(...new Array<number>(t.action.length).fill(learn ? j : -1));
      if (j < end - 1) {
        tokens.push(...t.observation);
        agentMask.push(...new Array<number>(t.observation.length).fill(0));
        turnOf.push(...new Array<number>(t.observation.length).fill(-1));
      }
    }
    out.push({
      tokens,
      agentMask,
      turns: Array.from({ length: end - i }, (_, k) => i + k),
      turnOf,
    });
    i = end;
  }
  return out;
}

/** Per-turn cap on sampled action tokens; the context budget leaves room for one action. */
export const MAX_ACTION_TOKENS = 128;

export function contextBudget(context: number): number {
  return context - MAX_ACTION_TOKENS;
}
