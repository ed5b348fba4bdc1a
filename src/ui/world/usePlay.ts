import { useCallback, useState } from "react";
import { createEpisode, type Episode, type Evaluation, type TurnRecord } from "../../env";

export interface PlayState {
  taskId: string;
  episode: Episode | null;
  /** A copy of the episode's turns (the episode is mutable; React needs new arrays). */
  turns: TurnRecord[];
  /** Set once the episode is over (complete_task, out of turns, or "Finish & evaluate"). */
  evaluation: Evaluation | null;
}

export interface Play extends PlayState {
  /** Starts a fresh episode of a task (eval mode, 50 turns); "" clears the play area. */
  start(taskId: string): void;
  /** Sends one action; evaluates when the episode ends. Returns false when no action was taken. */
  submit(action: string): boolean;
  /** Evaluates now and ends the play (an unfinished episode fails its completion test). */
  finish(): void;
}

const EMPTY: PlayState = { taskId: "", episode: null, turns: [], evaluation: null };

/** Human play: the same Episode interface the agent uses, driven from the page. */
export function usePlay(): Play {
  const [state, setState] = useState<PlayState>(EMPTY);

  const start = useCallback((taskId: string) => {
    if (!taskId) {
      setState(EMPTY);
      return;
    }
    const episode = createEpisode(taskId, { mode: "eval" });
    setState({ taskId, episode, turns: [], evaluation: null });
  }, []);

  const submit = useCallback(
    (action: string) => {
      const { episode, evaluation } = state;
      if (!episode || evaluation || episode.done || !action.trim()) return false;
      const { done } = episode.step(action);
      setState({
        ...state,
        turns: episode.turns.slice(),
        evaluation: done ? episode.evaluate() : null,
      });
      return true;
    },
    [state],
  );

  const finish = useCallback(() => {
    const { episode, evaluation } = state;
    if (!episode || evaluation) return;
    setState({ ...state, evaluation: episode.evaluate() });
  }, [state]);

  return { ...state, start, submit, finish };
}
