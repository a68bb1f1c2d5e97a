/**
 * The heavy parts of the action load only on the paths that use them, so a step with a bad
 * input fails in the time it takes to start Node and @actions/core: ncc turns every dynamic
 * import into a chunk file of the one bundle (`dist/<id>.index.js`) that is read on first use.
 *
 * - ./client.ts: the proving service client (undici, the response schemas);
 * - ../../pipeline/prepared-pie.ts and ../../pie/index.ts: the PIE toolkit;
 * - ../../emulator/index.ts: only with `emulator: true`;
 * - ./artifacts.ts (@actions/artifact): only with `upload-artifacts: true`;
 * - ../github/publish.ts (@actions/github, Octokit): only with `release-tag`, `pr-comment`,
 *   `check-run` or `attest` (from ../actions/main.ts);
 * - ../../chain/index.ts (viem): only with `verify-onchain` (from ./onchain.ts);
 * - ../actions/decommit.ts (the task client): only with `decommit-destination-chain-id`.
 */
/** The proving service client module (undici, the response schemas), loaded on first use. */
type ClientModule = typeof import('./client.ts')

let client: Promise<ClientModule> | undefined

export function loadClientModule(): Promise<ClientModule> {
  client ??= import('./client.ts')
  return client
}

/** Closes the client's keep-alive sockets, if it was loaded at all. */
export async function closeClient(): Promise<void> {
  if (!client) return
  const loaded = await client
  await loaded.closeConnections()
}
