/**
 * What the main step leaves for its post step through GITHUB_STATE (the runner hands it back as
 * `STATE_<name>`). Its own module so the post bundle stays small.
 */
export const STATE = {
  queryId: 'query-id',
  action: 'action',
  baseUrl: 'base-url',
  timeoutMinutes: 'timeout-minutes',
  emulated: 'emulated',
  /** The result kind the query was asked for, for the `wait` step that resumes it (`expected-result`). */
  expectedResult: 'expected-result',
  /** What a step other than a query's started on its service ("task 4c03e33c-..."), and how to follow it. */
  subject: 'subject',
  followUp: 'follow-up',
  /** The id of the check run `check-run: true` created, for the post step to conclude if need be. */
  checkRun: 'check-run-id',
  /** Set once the step has written its summary; the post step then has nothing to add. */
  reported: 'reported',
  /** The root action's journal carry (steps/journal-cache.ts): where its entries are, its cache key. */
  journalCarry: 'journal-carry',
  /** Set once the main step saved its journal to the Actions cache (or had nothing to save); else the post step saves it. */
  journalSaved: 'journal-saved',
} as const
