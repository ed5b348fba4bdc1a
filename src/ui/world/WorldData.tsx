import { useMemo, useState } from "react";
import { APPS, type Db, type Episode, generateWorld, type Row } from "../../env";
import { describeChange, diffDb } from "../../env/db";
import { cellText, columnsOf, groupTables } from "./format";

const PAGE = 50;

/** One table's rows, compact and scrollable, the first 50 then 50 more per click. */
function DataTable({
  name,
  rows,
  marked,
}: {
  name: string;
  rows: Row[];
  /** Ids of rows the played episode added or changed, highlighted. */
  marked: ReadonlySet<number>;
}) {
  const [limit, setLimit] = useState(PAGE);
  const shown = rows.slice(0, limit);
  const columns = useMemo(() => columnsOf(rows), [rows]);
  return (
    <div className="wp-table-block">
      <div className="wp-table-scroll">
        <table className="wp-table" data-testid="data-table" data-table={name}>
          <thead>
            <tr>
              {columns.map((c) => (
                <th key={c}>{c}</th>
              ))}
            </tr>
          </thead>
          <tbody>
            {shown.map((row) => (
              <tr
                key={row.id}
                data-testid="data-row"
                className={marked.has(row.id) ? "wp-changed" : undefined}
              >
                {columns.map((c) => {
                  const text = cellText(row[c]);
                  return (
                    <td key={c} title={text.length > 30 ? text : undefined}>
                      {text}
                    </td>
                  );
                })}
              </tr>
            ))}
          </tbody>
        </table>
        {rows.length === 0 && <p className="wp-muted wp-pad">This table is empty.</p>}
      </div>
      <div className="wp-table-foot">
        <span className="wp-muted" data-testid="data-shown">
          {Math.min(limit, rows.length)} of {rows.length} rows
        </span>
        {limit < rows.length && (
          <button type="button" data-testid="data-show-more" onClick={() => setLimit(limit + PAGE)}>
            Show {Math.min(PAGE, rows.length - limit)} more
          </button>
        )}
      </div>
    </div>
  );
}

/**
 * The seeded world's database, table by table, grouped by app; or the database of the episode
 * being played, live, to see what the actions changed.
 */
export function WorldData({ episode, version }: { episode: Episode | null; version: number }) {
  const [seedText, setSeedText] = useState("1");
  const [source, setSource] = useState<"seed" | "episode">("seed");
  const [table, setTable] = useState("people");
  // A whole number of at least 0; anything else keeps seed 1 and says so beside the field.
  const seed = /^\s*\d+\s*$/.test(seedText) ? Number(seedText) : Number.NaN;
  const seedOk = Number.isSafeInteger(seed);
  const validSeed = seedOk ? seed : 1;
  const world = useMemo(() => generateWorld(validSeed), [validSeed]);
  const fromEpisode = source === "episode" && episode !== null;
  // The episode's database changes as it is played: `version` (its turn count) refreshes it.
  // biome-ignore lint/correctness/useExhaustiveDependencies: version marks a new turn
  const db: Db = useMemo(
    () => (fromEpisode && episode ? episode.db : world.db),
    [fromEpisode, episode, world, version],
  );
  const groups = useMemo(
    () =>
      groupTables(
        db,
        APPS.map((a) => a.name),
      ),
    [db],
  );
  const changes = useMemo(
    () => (fromEpisode && episode ? diffDb(episode.initialDb, db) : []),
    [fromEpisode, episode, db],
  );
  const marked = useMemo(
    () => new Set(changes.filter((c) => c.table === table && c.after).map((c) => c.id)),
    [changes, table],
  );
  const changedTables = new Set(changes.map((c) => c.table));
  const rows = db[table] ?? [];
  const totalRows = Object.values(db).reduce((n, t) => n + t.length, 0);
  const user = fromEpisode && episode ? episode.task.world.user : world.user;
  const today = fromEpisode && episode ? episode.task.world.today : world.today;
  return (
    <div className="wp-data" data-testid="world-data">
      <div className="wp-row wp-controls">
        <label>
          <input
            type="radio"
            name="wp-data-source"
            checked={!fromEpisode}
            onChange={() => setSource("seed")}
          />{" "}
          World of seed{" "}
          <input
            type="number"
            min={0}
            className="wp-seed"
            data-testid="world-seed"
            value={seedText}
            onChange={(e) => {
              setSeedText(e.target.value);
              setSource("seed");
            }}
          />
          {seedOk ? null : (
            <span className="wp-error" data-testid="world-seed-error">
              {" "}
              a seed is a whole number of at least 0: showing seed 1
            </span>
          )}
        </label>
        <label className={episode ? "" : "wp-disabled"}>
          <input
            type="radio"
            name="wp-data-source"
            data-testid="data-source-episode"
            disabled={!episode}
            checked={fromEpisode}
            onChange={() => setSource("episode")}
          />{" "}
          The played episode's database (live)
        </label>
      </div>
      <p className="wp-muted" data-testid="world-data-meta">
        {fromEpisode && episode ? `Task ${episode.task.id}` : `Seed ${validSeed}`}: user{" "}
        {user.first_name} {user.last_name} ({user.email}, {user.phone}), today {today};{" "}
        {Object.keys(db).length} tables, {totalRows} rows.
      </p>
      {fromEpisode && (
        <div className="wp-changes" data-testid="episode-changes">
          <span className="wp-muted">
            {changes.length === 0
              ? "No changes to the database yet."
              : `${changes.length} change${changes.length === 1 ? "" : "s"} to the database so far:`}
          </span>
          {changes.length > 0 && (
            <ul>
              {changes.map((c) => (
                <li key={`${c.table}#${c.id}`} className={`wp-change-${c.kind}`}>
                  {describeChange(c)}
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
      <div className="wp-table-groups" data-testid="table-list">
        {groups.map((g) => (
          <div key={g.app} className="wp-table-group">
            <span className="wp-group-app">{g.app}</span>
            {g.tables.map((t) => (
              <button
                key={t.name}
                type="button"
                className={`wp-chip${changedTables.has(t.name) ? " wp-chip-changed" : ""}`}
                data-testid={`table-${t.name}`}
                aria-pressed={t.name === table}
                onClick={() => setTable(t.name)}
              >
                {t.name} <span className="wp-count">{t.rows}</span>
              </button>
            ))}
          </div>
        ))}
      </div>
      <DataTable
        key={`${table}:${fromEpisode ? "ep" : validSeed}`}
        name={table}
        rows={rows}
        marked={marked}
      />
    </div>
  );
}
