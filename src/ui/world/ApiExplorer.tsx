import { useMemo, useState } from "react";
import { APPS, formatApiDoc } from "../../env";
import { apiMatches, callTemplate } from "./format";

/** The apps and their APIs with their documentation; a search box filters APIs across apps. */
export function ApiExplorer({ onInsert }: { onInsert: (call: string) => void }) {
  const [appName, setAppName] = useState(APPS[0]?.name ?? "");
  const [query, setQuery] = useState("");
  const app = APPS.find((a) => a.name === appName) ?? APPS[0];
  const searching = query.trim() !== "";
  const apis = useMemo(
    () =>
      searching
        ? APPS.flatMap((a) => a.apis).filter((api) => apiMatches(api, query))
        : (app?.apis ?? []),
    [searching, query, app],
  );
  return (
    <div className="wp-apis" data-testid="api-explorer">
      <input
        type="search"
        className="wp-search"
        data-testid="api-search"
        placeholder="Search all APIs: e.g. send money, playlist, page_index"
        value={query}
        onChange={(e) => setQuery(e.target.value)}
      />
      <div className="wp-apis-cols">
        <ul className="wp-app-list" data-testid="app-list">
          {APPS.map((a) => (
            <li key={a.name}>
              <button
                type="button"
                className="wp-app-btn"
                data-testid={`app-${a.name}`}
                aria-pressed={!searching && a.name === app?.name}
                onClick={() => {
                  setAppName(a.name);
                  setQuery("");
                }}
              >
                <span>{a.name}</span>
                <span className="wp-count">{a.apis.length}</span>
              </button>
            </li>
          ))}
        </ul>
        <div className="wp-api-list" data-testid="api-list">
          {searching ? (
            <p className="wp-muted" data-testid="api-search-count">
              {apis.length} API{apis.length === 1 ? "" : "s"} match “{query.trim()}”
            </p>
          ) : (
            <p className="wp-app-desc" data-testid="app-description">
              <strong>{app?.name}</strong> — {app?.description}
            </p>
          )}
          {apis.map((api) => (
            <article
              key={`${api.app}.${api.name}`}
              className="wp-api"
              data-testid="api-doc"
              data-api={`${api.app}.${api.name}`}
            >
              <header>
                <code className="wp-api-name">
                  {api.app}.{api.name}
                </code>
                {api.auth && <span className="wp-badge">login</span>}
                {api.paged && <span className="wp-badge">paged</span>}
                {api.mutates && <span className="wp-badge wp-badge-write">writes</span>}
                <button
                  type="button"
                  className="wp-link wp-push"
                  data-testid="api-insert"
                  title="Put a call template into the play input"
                  onClick={() => onInsert(callTemplate(api))}
                >
                  insert call ↵
                </button>
              </header>
              <pre className="wp-doc">{formatApiDoc(api)}</pre>
            </article>
          ))}
          {apis.length === 0 && <p className="wp-muted">No API matches.</p>}
        </div>
      </div>
    </div>
  );
}
