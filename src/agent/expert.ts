import type { Task } from "../env";
import { NO_FLAWS, ScriptActor } from "./scriptActor";
import { ScriptPolicy } from "./scripted";

/**
 * The expert: runs the task's solution script faithfully, reading docs before first use, logging
 * in, paging to the end, and copying values from observations. It proves each task is solvable.
 */
export function createExpert(task: Task): ScriptPolicy {
  return new ScriptPolicy("expert", task, new ScriptActor(NO_FLAWS));
}
