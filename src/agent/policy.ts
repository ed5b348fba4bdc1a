/** Anything that acts in an episode: given the latest observation (the prompt first), the next action. */
export interface Policy {
  readonly name: string;
  act(observation: string): string;
}
