import { type Script, ScriptError, type Task, templateOf } from "../env";
import type { Policy } from "./policy";
import { GiveUp, type ScriptActor } from "./scriptActor";

const GIVE_UP_ACTION = "supervisor.complete_task()";

/**
 * A policy that runs a task's solution script through a ScriptActor. When the script gives up or
 * cannot go on, it completes the task unfinished.
 */
export class ScriptPolicy implements Policy {
  private script: Script | null = null;
  private finished = false;
  /** Why the script stopped early, if it did. */
  failure: string | null = null;

  constructor(
    readonly name: string,
    private readonly task: Task,
    private readonly actor: ScriptActor,
  ) {}

  /** The turns (0-based) whose actions were slips (see Flaws.slip), not to be imitated. */
  get slips(): readonly number[] {
    return this.actor.slips;
  }

  act(observation: string): string {
    if (this.finished) return GIVE_UP_ACTION;
    try {
      let next: IteratorResult<string, void>;
      if (!this.script) {
        this.actor.observePrompt(observation);
        this.script = templateOf(this.task).solve(this.actor, this.task.params);
        next = this.script.next("");
      } else next = this.script.next(observation);
      if (!next.done) return next.value;
      this.finished = true;
      return GIVE_UP_ACTION;
    } catch (e) {
      this.finished = true;
      if (!(e instanceof GiveUp) && !(e instanceof ScriptError)) throw e;
      this.failure = `${e instanceof GiveUp ? "gave up" : "script error"}: ${e.message}`;
      return GIVE_UP_ACTION;
    }
  }
}
