import { WorldSummary } from "./WorldSummary";

/** The world explorer and human play (apps, API docs, data, tasks; play a task by hand). */
export function WorldPanel() {
  return <WorldSummary />;
}
