import { type RefObject, useEffect, useRef } from "react";
import { ERROR_PREFIX, type Evaluation, SPLITS, type TaskInfo } from "../../env";
import { HINTS } from "./hints";
import type { Play } from "./usePlay";

/** An observation, with the task reminder the episode re-appends shown dimmed. */
function Observation({ text, instruction }: { text: string; instruction: string }) {
  const reminder = `\nTask: ${instruction}`;
  const body = text.endsWith(reminder) ? text.slice(0, -reminder.length) : text;
  const error = body.startsWith(ERROR_PREFIX);
  return (
    <pre className={`wp-obs${error ? " wp-obs-error" : ""}`} data-testid="turn-observation">
      {body}
      {body !== text && <span className="wp-reminder">{reminder}</span>}
    </pre>
  );
}

function TestResults({ evaluation }: { evaluation: Evaluation }) {
  const passed = evaluation.tests.filter((t) => t.passed).length;
  return (
    <div
      className={`wp-results ${evaluation.success ? "wp-ok" : "wp-fail"}`}
      data-testid="test-results"
      data-success={String(evaluation.success)}
    >
      <div className="wp-verdict" data-testid="play-verdict">
        <strong>{evaluation.success ? "✓ Success" : "✗ Failed"}</strong>
        <span>
          reward <span data-testid="play-reward">{evaluation.reward.toFixed(2)}</span> · {passed}/
          {evaluation.tests.length} tests passed
          {evaluation.reward === 0 && passed > 0
            ? " (no reward without supervisor.complete_task)"
            : ""}
        </span>
      </div>
      <ul>
        {evaluation.tests.map((t) => (
          <li
            key={t.name}
            data-testid="test-result"
            data-passed={String(t.passed)}
            className={t.passed ? "wp-pass" : "wp-nopass"}
          >
            <span className="wp-mark">{t.passed ? "✓" : "✗"}</span>
            <span className="wp-test-name">{t.name}</span>
            {t.message && <span className="wp-test-msg">{t.message}</span>}
          </li>
        ))}
      </ul>
    </div>
  );
}

/** Human play: pick a task, type one API call per turn, read the observations, get judged. */
export function PlayPanel({
  play,
  tasks,
  loading,
  draft,
  setDraft,
  inputRef,
  onInsert,
}: {
  play: Play;
  tasks: TaskInfo[];
  loading: boolean;
  draft: string;
  setDraft: (text: string) => void;
  inputRef: RefObject<HTMLTextAreaElement | null>;
  /** Puts a call into the input, caret inside its first "". */
  onInsert: (call: string) => void;
}) {
  const { episode, turns, evaluation } = play;
  const scrollRef = useRef<HTMLDivElement>(null);
  const over = evaluation !== null;
  const canAct = episode !== null && !over;

  // Keep the newest turn in view.
  // biome-ignore lint/correctness/useExhaustiveDependencies: scroll when turns or results change
  useEffect(() => {
    const el = scrollRef.current;
    if (el) el.scrollTop = el.scrollHeight;
  }, [turns.length, over, episode]);

  const send = () => {
    if (play.submit(draft)) setDraft("");
    inputRef.current?.focus();
  };

  return (
    <section className="wp-card wp-play" data-testid="play">
      <header className="wp-card-head">
        <h2>Play a task</h2>
        <span className="wp-muted">the agent's episode: one API call per turn</span>
      </header>
      <div className="wp-row">
        <select
          className="wp-grow wp-task-select"
          data-testid="task-select"
          value={play.taskId}
          onChange={(e) => {
            play.start(e.target.value);
            setDraft("");
          }}
        >
          <option value="">{loading ? "Pick a task (building tasks…)" : "Pick a task…"}</option>
          {SPLITS.map((split) => (
            <optgroup key={split} label={split}>
              {tasks
                .filter((t) => t.split === split)
                .map((t) => (
                  <option key={t.id} value={t.id}>
                    {t.id} (d{t.difficulty})
                  </option>
                ))}
            </optgroup>
          ))}
        </select>
        <button
          type="button"
          data-testid="play-restart"
          disabled={!episode}
          onClick={() => {
            play.start(play.taskId);
            setDraft("");
          }}
        >
          Restart
        </button>
      </div>
      {episode && (
        <p className="wp-status" data-testid="play-status">
          <span>
            {episode.task.split} · difficulty {episode.task.difficulty} · apps{" "}
            {episode.task.apps.join(", ")}
          </span>
          <span data-testid="play-turns">
            turn {turns.length} / {episode.maxTurns}
            {over ? (episode.completed ? " · completed" : " · ended") : ""}
          </span>
        </p>
      )}
      <div className="wp-transcript" ref={scrollRef} data-testid="transcript">
        {!episode && (
          <p className="wp-muted wp-pad">
            Pick a task above (or “play” in the task list) to start an episode. You get the same
            prompt and observations as the agent, 50 turns, and the task's unit tests at the end.
          </p>
        )}
        {episode && (
          <div className="wp-turn">
            <div className="wp-turn-head">prompt</div>
            <pre className="wp-obs" data-testid="play-prompt">
              {episode.prompt}
            </pre>
          </div>
        )}
        {episode &&
          turns.map((turn, i) => (
            <div
              // Turns are append-only: the index is their identity.
              // biome-ignore lint/suspicious/noArrayIndexKey: append-only list
              key={i}
              className={`wp-turn${turn.ok ? "" : " wp-turn-error"}`}
              data-testid="turn"
              data-ok={String(turn.ok)}
            >
              <div className="wp-turn-head">turn {i + 1}</div>
              <pre className="wp-action" data-testid="turn-action">
                {turn.action}
              </pre>
              <Observation text={turn.observation} instruction={episode.task.instruction} />
            </div>
          ))}
        {evaluation && <TestResults evaluation={evaluation} />}
      </div>
      <form
        className="wp-composer"
        onSubmit={(e) => {
          e.preventDefault();
          send();
        }}
      >
        <textarea
          ref={inputRef}
          className="wp-input"
          data-testid="play-input"
          rows={2}
          spellCheck={false}
          autoComplete="off"
          placeholder={
            canAct
              ? 'app.api(name="value", ...) — Enter sends, Shift+Enter new line, ↑ recalls'
              : over
                ? "The episode is over: Restart or pick another task."
                : "Pick a task to play."
          }
          disabled={!canAct}
          value={draft}
          onChange={(e) => setDraft(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) {
              e.preventDefault();
              send();
            } else if (e.key === "ArrowUp" && draft === "" && turns.length > 0) {
              e.preventDefault();
              setDraft(turns[turns.length - 1]?.action ?? "");
            }
          }}
        />
        <div className="wp-composer-buttons">
          <button
            type="submit"
            className="wp-primary"
            data-testid="play-submit"
            disabled={!canAct || !draft.trim()}
          >
            Send
          </button>
          <button
            type="button"
            data-testid="play-finish"
            disabled={!canAct}
            onClick={() => play.finish()}
            title="Stop here and run the task's unit tests"
          >
            Finish &amp; evaluate
          </button>
        </div>
      </form>
      <div className="wp-hints" data-testid="play-hints">
        <span className="wp-muted">Try:</span>
        {HINTS.map((h) => (
          <button
            key={h}
            type="button"
            className="wp-hint"
            data-testid="play-hint"
            disabled={!canAct}
            onClick={() => onInsert(h)}
          >
            {h}
          </button>
        ))}
      </div>
    </section>
  );
}
