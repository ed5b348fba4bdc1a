import { useMemo, useState } from "react";
import { SPLITS, type TaskInfo } from "../../env";

/** The tasks, filtered by split, difficulty and text; "play" starts one in the play area. */
export function TaskBrowser({
  tasks,
  loading,
  current,
  onPlay,
}: {
  tasks: TaskInfo[];
  loading: boolean;
  current: string;
  onPlay: (taskId: string) => void;
}) {
  const [split, setSplit] = useState("all");
  const [difficulty, setDifficulty] = useState("all");
  const [text, setText] = useState("");
  const shown = useMemo(() => {
    const q = text.trim().toLowerCase();
    return tasks.filter(
      (t) =>
        (split === "all" || t.split === split) &&
        (difficulty === "all" || String(t.difficulty) === difficulty) &&
        (!q || `${t.id} ${t.instruction} ${t.apps.join(" ")}`.toLowerCase().includes(q)),
    );
  }, [tasks, split, difficulty, text]);
  return (
    <div className="wp-tasks" data-testid="task-browser">
      <div className="wp-row wp-controls">
        <label>
          Split{" "}
          <select
            data-testid="task-filter-split"
            value={split}
            onChange={(e) => setSplit(e.target.value)}
          >
            <option value="all">all</option>
            {SPLITS.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          Difficulty{" "}
          <select
            data-testid="task-filter-difficulty"
            value={difficulty}
            onChange={(e) => setDifficulty(e.target.value)}
          >
            <option value="all">all</option>
            <option value="1">1</option>
            <option value="2">2</option>
            <option value="3">3</option>
          </select>
        </label>
        <input
          type="search"
          className="wp-search wp-grow"
          data-testid="task-filter-text"
          placeholder="Filter: template, app, words"
          value={text}
          onChange={(e) => setText(e.target.value)}
        />
        <span className="wp-muted" data-testid="task-count">
          {shown.length} task{shown.length === 1 ? "" : "s"}
          {loading ? " (building…)" : ""}
        </span>
      </div>
      <div className="wp-table-scroll wp-tasks-scroll">
        <table className="wp-table wp-task-table" data-testid="task-table">
          <thead>
            <tr>
              {/* first, so it is in view however wide the instruction column grows */}
              <th />
              <th>id</th>
              <th title="difficulty">d</th>
              <th>apps</th>
              <th>instruction</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((t) => (
              <tr
                key={t.id}
                data-testid="task-row"
                data-task={t.id}
                className={t.id === current ? "wp-current" : undefined}
              >
                <td>
                  <button
                    type="button"
                    className="wp-link"
                    data-testid="task-play"
                    onClick={() => onPlay(t.id)}
                  >
                    play
                  </button>
                </td>
                <td title={t.id}>
                  <code>{t.id}</code>
                </td>
                <td>{t.difficulty}</td>
                <td>{t.apps.join(", ")}</td>
                <td className="wp-wrap">{t.instruction}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}
