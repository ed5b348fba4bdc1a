import type { Person } from "./types";

/** Observations longer than this many characters are cut, with a note. */
export const OBSERVATION_LIMIT = 1200;
export const REMINDER_PREFIX = "Task: ";

/** The first observation: who the agent acts for, the date, the task and how to act. */
export function formatPrompt(user: Person, today: string, instruction: string): string {
  return [
    `You act for ${user.first_name} ${user.last_name} (email ${user.email}, phone ${user.phone}). Today is ${today}.`,
    `${REMINDER_PREFIX}${instruction}`,
    "Each turn write exactly one API call: app.api(name=value, ...), strings in double quotes. Results come back as JSON.",
    "Find APIs with api_docs.show_api_descriptions(app_name=...) and read one with api_docs.show_api_doc(app_name=..., api_name=...) before calling it.",
    "Log in with app.login(username=..., password=...): passwords from supervisor.show_account_passwords(); pass the access_token to that app's calls.",
    "Lists come in pages: page_index=0, 1, ... until [].",
    'Finish with supervisor.complete_task(), with answer="..." when the task asks a question.',
  ].join("\n");
}

/** Cuts an observation body to the limit, saying how much was cut. */
export function truncate(body: string, limit = OBSERVATION_LIMIT): string {
  if (body.length <= limit) return body;
  return `${body.slice(0, limit)}...[truncated ${body.length - limit} chars; use page_index or a narrower call]`;
}

/** An observation: the result (or error) and the re-appended task reminder, as in the paper. */
export function formatObservation(body: string, instruction: string, reminder: boolean): string {
  return reminder ? `${body}\n${REMINDER_PREFIX}${instruction}` : body;
}

/** The result part of an observation (without the reminder). */
export function observationBody(observation: string): string {
  const i = observation.lastIndexOf(`\n${REMINDER_PREFIX}`);
  return i >= 0 ? observation.slice(0, i) : observation;
}

export const ERROR_PREFIX = "Error: ";
