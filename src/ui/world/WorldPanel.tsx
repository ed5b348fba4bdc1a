import { useCallback, useRef, useState } from "react";
import { ApiExplorer } from "./ApiExplorer";
import { PlayPanel } from "./PlayPanel";
import { TaskBrowser } from "./TaskBrowser";
import { usePlay } from "./usePlay";
import { useTasks } from "./useTasks";
import { WorldData } from "./WorldData";
import { WorldSummary } from "./WorldSummary";
import "./world.css";

type View = "apis" | "tasks" | "data";

const VIEWS: { id: View; label: string }[] = [
  { id: "apis", label: "Apps & APIs" },
  { id: "tasks", label: "Tasks" },
  { id: "data", label: "World data" },
];

/** The world explorer and human play (apps, API docs, data, tasks; play a task by hand). */
export function WorldPanel() {
  const [view, setView] = useState<View>("apis");
  const [draft, setDraft] = useState("");
  const inputRef = useRef<HTMLTextAreaElement>(null);
  const play = usePlay();
  const { tasks, loading } = useTasks();

  const insert = useCallback((call: string) => {
    setDraft(call);
    requestAnimationFrame(() => {
      const el = inputRef.current;
      if (!el || el.disabled) return;
      el.focus();
      const quote = call.indexOf('""');
      const at = quote >= 0 ? quote + 1 : call.length;
      el.setSelectionRange(at, at);
    });
  }, []);

  const startTask = useCallback(
    (taskId: string) => {
      play.start(taskId);
      setDraft("");
    },
    [play.start],
  );

  return (
    <div className="wp" data-testid="world-panel">
      <div className="wp-explore">
        <WorldSummary />
        <section className="wp-card">
          <nav className="wp-views" aria-label="World explorer">
            {VIEWS.map((v) => (
              <button
                key={v.id}
                type="button"
                data-testid={`world-view-${v.id}`}
                aria-pressed={view === v.id}
                onClick={() => setView(v.id)}
              >
                {v.label}
              </button>
            ))}
          </nav>
          <div hidden={view !== "apis"}>
            <ApiExplorer onInsert={insert} />
          </div>
          <div hidden={view !== "tasks"}>
            <TaskBrowser tasks={tasks} loading={loading} current={play.taskId} onPlay={startTask} />
          </div>
          <div hidden={view !== "data"}>
            <WorldData episode={play.episode} version={play.turns.length} />
          </div>
        </section>
      </div>
      <div className="wp-play-col">
        <PlayPanel
          play={play}
          tasks={tasks}
          loading={loading}
          draft={draft}
          setDraft={setDraft}
          inputRef={inputRef}
          onInsert={insert}
        />
      </div>
    </div>
  );
}
