import { useCallback, useEffect, useState } from "react";
import type { CheckpointInfo } from "../../worker/protocol";
import { deleteRun, listRuns, parseRunFile, type RunRecord, saveRun } from "./runs";
import { startNewRun, training, writeUrl } from "./session";
import { useTrain } from "./store";

function download(name: string, data: BlobPart, type: string): void {
  const url = URL.createObjectURL(new Blob([data], { type }));
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** Runs kept in IndexedDB (overlay, export, import) and checkpoints (IndexedDB, download, upload). */
export function Runs() {
  const run = useTrain((s) => s.run);
  const overlay = useTrain((s) => s.overlay);
  const setOverlay = useTrain((s) => s.setOverlay);
  const done = useTrain((s) => s.done);
  const [runs, setRuns] = useState<RunRecord[]>([]);
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const [checkpoints, setCheckpoints] = useState<CheckpointInfo[]>([]);
  const [chosen, setChosen] = useState("");
  /** Runs that can be continued (they have a resume point), by id, with its iteration. */
  const [points, setPoints] = useState<Map<string, number>>(new Map());

  const refresh = useCallback(async () => {
    setRuns(await listRuns());
    const list = await training().listResumePoints();
    setPoints(new Map(list.map((p) => [p.runId, p.iteration])));
  }, []);
  const refreshCheckpoints = useCallback(async () => {
    const list = await training().listCheckpoints();
    setCheckpoints(list);
    setChosen((c) => c || (list[0]?.key ?? ""));
  }, []);

  // The current run is stored after every iteration.
  useEffect(() => {
    if (run.metrics.length === 0) return;
    void saveRun(run).then(refresh);
  }, [run, refresh]);
  useEffect(() => {
    void refresh();
    void refreshCheckpoints();
  }, [refresh, refreshCheckpoints]);

  const importRun = async (file: File) => {
    const parsed = parseRunFile(await file.text());
    if (!parsed.ok) {
      setMessage({ ok: false, text: `Refused ${file.name}: ${parsed.error}` });
      return;
    }
    // Told apart from the run it was exported from, and from other imports of the same file.
    const exists = runs.some((r) => r.id === parsed.run.id);
    const at = new Date().toTimeString().slice(0, 8);
    const stored = {
      ...parsed.run,
      id: exists ? `${parsed.run.id}-import-${Date.now()}` : parsed.run.id,
      name: `${parsed.run.name} (imported ${at})`,
    };
    await saveRun(stored);
    await refresh();
    setMessage({ ok: true, text: `Imported ${stored.name}` });
  };

  const continueRun = async (r: RunRecord, at: number) => {
    useTrain.getState().continueRun(r, at);
    writeUrl(r.settings);
    const info = await training().resume(r.id, r.settings);
    if (info.ok)
      setMessage({ ok: true, text: `Continued ${r.name} from iteration ${info.iteration}` });
    else {
      // Not continued: a fresh run of the same settings, and why.
      await startNewRun(r.settings);
      setMessage({ ok: false, text: `Could not continue ${r.name}: ${info.detail}` });
    }
  };

  const saveCkpt = async () => {
    const info = await training().saveCheckpoint(
      `${run.settings.algo}-seed${run.settings.seed}-iter${done}`,
    );
    setMessage({ ok: info.ok, text: info.ok ? `Saved checkpoint ${info.key}` : info.detail });
    await refreshCheckpoints();
  };
  const loadCkpt = async () => {
    if (!chosen) return;
    const info = await training().loadCheckpoint(chosen);
    setMessage({
      ok: info.ok,
      text: info.ok ? `Loaded checkpoint ${chosen}` : `Refused ${chosen}: ${info.detail}`,
    });
  };
  const uploadCkpt = async (file: File) => {
    const info = await training().importCheckpoint(new Uint8Array(await file.arrayBuffer()));
    setMessage({
      ok: info.ok,
      text: info.ok ? `Loaded ${file.name}` : `Refused ${file.name}: ${info.detail}`,
    });
  };

  return (
    <section className="runs" data-testid="runs">
      <h2>Runs</h2>
      <div className="buttons">
        <button
          type="button"
          data-testid="run-export"
          disabled={run.metrics.length === 0}
          title={run.metrics.length === 0 ? "after its first iteration" : undefined}
          onClick={() => download(`${run.id}.json`, JSON.stringify(run), "application/json")}
        >
          Export this run
        </button>
        <label className="file">
          Import a run
          <input
            type="file"
            accept=".json,application/json"
            data-testid="run-import"
            onChange={(e) => {
              const f = e.target.files?.[0];
              if (f) void importRun(f);
              e.target.value = "";
            }}
          />
        </label>
      </div>
      {message ? (
        <p className={message.ok ? "ok" : "error"} data-testid="runs-message">
          {message.text}
        </p>
      ) : null}
      <ul className="run-list" data-testid="run-list">
        {runs.map((r) => (
          <li key={r.id} data-testid="run-item">
            <span className={r.id === run.id ? "current" : ""}>{r.name}</span>{" "}
            <span className="muted">
              {r.metrics.length} it. · last reward {(r.metrics.at(-1)?.meanReward ?? 0).toFixed(2)}
            </span>{" "}
            {r.id !== run.id ? (
              <>
                {points.has(r.id) ? (
                  <button
                    type="button"
                    data-testid="run-continue"
                    title="Train this run further from its last finished iteration (its weights, optimizer and settings)"
                    onClick={() => void continueRun(r, points.get(r.id) ?? 0)}
                  >
                    continue from iteration {points.get(r.id)}
                  </button>
                ) : null}
                <button type="button" onClick={() => setOverlay(overlay?.id === r.id ? null : r)}>
                  {overlay?.id === r.id ? "hide overlay" : "overlay"}
                </button>
                <button
                  type="button"
                  onClick={() => download(`${r.id}.json`, JSON.stringify(r), "application/json")}
                >
                  export
                </button>
                <button
                  type="button"
                  onClick={() =>
                    void deleteRun(r.id).then(() => {
                      if (overlay?.id === r.id) setOverlay(null);
                      return refresh();
                    })
                  }
                >
                  delete
                </button>
              </>
            ) : (
              <span className="tag">current</span>
            )}
          </li>
        ))}
      </ul>
      <h3>Checkpoints</h3>
      <div className="buttons">
        <button type="button" data-testid="checkpoint-save" onClick={() => void saveCkpt()}>
          Save to browser
        </button>
        <select
          data-testid="checkpoint-list"
          aria-label="checkpoints saved in this browser"
          value={chosen}
          onChange={(e) => setChosen(e.target.value)}
        >
          {checkpoints.length === 0 ? <option value="">none saved yet</option> : null}
          {checkpoints.map((c) => (
            <option key={c.key} value={c.key} disabled={!c.ok}>
              {c.key} {c.ok ? "" : "(unreadable)"}
            </option>
          ))}
        </select>
        <button
          type="button"
          data-testid="checkpoint-load"
          disabled={!chosen}
          onClick={() => void loadCkpt()}
        >
          Load
        </button>
        <button
          type="button"
          data-testid="checkpoint-download"
          onClick={() =>
            void training()
              .exportCheckpoint()
              .then((bytes) =>
                download(
                  `${run.settings.algo}-seed${run.settings.seed}-iter${done}.ckpt`,
                  bytes.slice().buffer,
                  "application/octet-stream",
                ),
              )
          }
        >
          Download
        </button>
        <label className="file">
          Upload
          <input
            type="file"
            data-testid="checkpoint-upload"
            onChange={(e) => {
              const f = e.target.files?.[0];
              if (f) void uploadCkpt(f);
              e.target.value = "";
            }}
          />
        </label>
      </div>
    </section>
  );
}
