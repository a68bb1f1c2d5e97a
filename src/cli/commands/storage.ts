import { readFile } from 'node:fs/promises'
import { StorageProofClient } from '../../clients/storage-proof.ts'
import { InvalidInputError, RemoteFailureError } from '../../core/errors.ts'
import { parseJsonBytes } from '../../core/json-limits.ts'
import { formatDuration } from '../../core/poll.ts'
import {
  type CommandContext,
  defineCommand,
  type OptionSpecs,
  SERVICE_OPTIONS,
  allowInsecureHttp,
  waitOptions,
} from '../context.ts'
import { EXIT } from '../exit-codes.ts'
import { missingAddressError } from '../profiles.ts'
import { timeoutFrom } from '../services.ts'

const STORAGE_OPTIONS = {
  'storage-proof-url': {
    type: 'string',
    valueName: '<url>',
    env: 'PROVING_STORAGE_PROOF_URL',
    description: 'Address of the storage-proof service.',
  },
  'api-key': SERVICE_OPTIONS['api-key'],
  ...waitOptions('Wait for the batch query to finish (exit 0 DONE, 1 FAILED).'),
} as const satisfies OptionSpecs

export const storageQuery = defineCommand({
  path: ['storage', 'query'],
  args: '<query.json>',
  summary: 'Submit a storage-proof batch query (a JSON file, or - for stdin).',
  details: [
    'The file holds the body of POST /batch-query: { destinationChainId, fee, data }, where data is',
    'keyed by chain id, then "block:<n>", then accounts with their props (e.g. BALANCE) and slots.',
    'It is checked before sending.',
  ],
  positionals: { min: 1, max: 1 },
  options: {
    ...STORAGE_OPTIONS,
    quiet: {
      type: 'boolean',
      short: 'q',
      description: 'Without --wait: print only the internal id (for ID=$(proving storage query ...)).',
    },
  },
  async run(context) {
    // Checked here too, so a malformed file fails before the address and key are even looked at.
    const { checkBatchQueryBody } = await import('../../schemas/storage-proof.ts')
    const body = checkBatchQueryBody(await readQueryFile(context, context.positionals[0]!))
    const timeoutMs = timeoutFrom(context)
    const client = storageClientFrom(context)
    const { internalId } = await client.submitBatchQuery(body, { signal: context.signal })
    if (!context.values.wait) {
      if (context.values.quiet && !context.json) {
        context.io.stdout(`${internalId}\n`)
        return EXIT.ok
      }
      context.print(
        `Submitted: batch query ${internalId}\nFollow it with: proving storage status ${internalId} --wait`,
        { internalId },
      )
      return EXIT.ok
    }
    context.progress(`Submitted: batch query ${internalId}`)
    return waitAndReport(context, client, internalId, timeoutMs)
  },
})

export const storageStatus = defineCommand({
  path: ['storage', 'status'],
  args: '<internal-id>',
  summary: 'Show the status of a storage-proof batch query (RECEIVED, IN_PROGRESS, DONE, FAILED).',
  positionals: { min: 1, max: 1 },
  options: STORAGE_OPTIONS,
  async run(context) {
    const internalId = context.positionals[0]!
    const timeoutMs = timeoutFrom(context)
    const client = storageClientFrom(context)
    if (context.values.wait) return waitAndReport(context, client, internalId, timeoutMs)
    const { queryStatus } = await client.getBatchQueryStatus(internalId, { signal: context.signal })
    context.print(`batch query ${internalId}: ${queryStatus}`, { internalId, queryStatus })
    return EXIT.ok
  },
})

async function waitAndReport(
  context: CommandContext<typeof STORAGE_OPTIONS>,
  client: StorageProofClient,
  internalId: string,
  timeoutMs: number,
): Promise<number> {
  const result = await client.waitForBatchQuery(internalId, {
    timeoutMs,
    signal: context.signal,
    onProgress: (progress) =>
      context.progress(
        `[${formatDuration(progress.elapsedMs).padStart(6)}] ${progress.internalId}  ${progress.queryStatus}`,
      ),
  })
  context.print(`batch query ${result.internalId}: ${result.queryStatus}`, result)
  if (result.queryStatus === 'DONE') return EXIT.ok
  if (context.json)
    context.fail(
      new RemoteFailureError(`Batch query ${result.internalId} ended ${result.queryStatus}.`, { record: result }),
    )
  return EXIT.remoteFailure
}

function storageClientFrom(context: CommandContext<typeof STORAGE_OPTIONS>): StorageProofClient {
  const baseUrl = context.values['storage-proof-url']?.trim()
  if (!baseUrl) {
    throw missingAddressError('storageProofUrl')
  }
  const apiKey = context.values['api-key']?.trim()
  if (!apiKey)
    throw new InvalidInputError('No API key: set PROVING_API_KEY (or pass --api-key <key>).', { input: '--api-key' })
  context.redactor.add(apiKey)
  try {
    return new StorageProofClient({
      baseUrl,
      apiKey,
      logger: context.logger,
      redactor: context.redactor,
      allowInsecureHttp: allowInsecureHttp(context),
    })
  } catch (error) {
    throw new InvalidInputError(`--storage-proof-url ${(error as Error).message.split('\n')[0]}`, {
      input: '--storage-proof-url',
      cause: error,
    })
  }
}

const MAX_QUERY_FILE_BYTES = 4 * 1024 * 1024

/** The batch query's JSON: UTF-8, at most 4 MiB and 32 levels deep (src/core/json-limits.ts). */
async function readQueryFile(context: CommandContext, path: string): Promise<unknown> {
  const input = '<query.json>'
  let bytes: Uint8Array
  if (path === '-') {
    if (!context.io.stdin)
      throw new InvalidInputError('No stdin to read the batch query from; give a file path.', { input })
    bytes = await readCapped(context.io.stdin)
  } else {
    try {
      bytes = await readFile(path)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      throw new InvalidInputError(
        code === 'ENOENT'
          ? `${input}: no file at ${path}; check the path of the batch query.`
          : code === 'EISDIR'
            ? `${input}: ${path} is a folder; give the path of the batch query's JSON file.`
            : `${input}: cannot read ${path} (${code ?? 'error'}); check the path and its permissions.`,
        { input, cause: error },
      )
    }
  }
  return parseJsonBytes(bytes, { input, what: path === '-' ? 'stdin' : path, maxBytes: MAX_QUERY_FILE_BYTES })
}

/** Reads at most one byte past the cap: enough to tell the file is too large. */
async function readCapped(stream: NodeJS.ReadableStream): Promise<Uint8Array> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of stream) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer)
    size += buffer.length
    chunks.push(buffer)
    if (size > MAX_QUERY_FILE_BYTES) break
  }
  return Buffer.concat(chunks)
}
