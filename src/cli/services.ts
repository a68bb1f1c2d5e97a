import { ProvingClient, type QueryProgress, type QueryResult, type UploadProgress } from '../clients/proving.ts'
import { formatBytes } from '../pipeline/prepared-pie.ts'
import { showValue } from '../pipeline/gate.ts'
import { bytes32Text } from '../pie/shared/index.ts'
import { InvalidInputError } from '../core/errors.ts'
import { formatDuration } from '../core/poll.ts'
import { serviceLine } from '../core/service-text.ts'
import { missingAddressError } from './profiles.ts'
import {
  type CommandContext,
  parseDuration,
  type SERVICE_OPTIONS,
  type StringOption,
  allowInsecureHttp,
} from './context.ts'

/** Builds the proving client from --base-url / --api-key (or their environment variables). */
export function provingClientFrom(
  context: CommandContext<typeof SERVICE_OPTIONS>,
  options: { needsKey: boolean; baseUrl?: string; apiKey?: string },
): ProvingClient {
  const baseUrl = options.baseUrl ?? context.values['base-url']?.trim()
  if (!baseUrl) {
    throw missingAddressError('baseUrl', 'or use --emulator where offered')
  }
  const apiKey = options.apiKey ?? context.values['api-key']?.trim()
  if (options.needsKey && !apiKey) {
    throw new InvalidInputError('No API key: set PROVING_API_KEY (or pass --api-key <key>).', { input: '--api-key' })
  }
  if (apiKey) context.redactor.add(apiKey)
  const readPaths = context.values['read-paths'] ?? 'auto'
  if (readPaths !== 'auto' && readPaths !== 'docs' && readPaths !== 'production') {
    throw new InvalidInputError(`--read-paths must be auto, docs or production; got ${JSON.stringify(readPaths)}.`, {
      input: '--read-paths',
    })
  }
  try {
    return new ProvingClient({
      baseUrl,
      apiKey,
      logger: context.logger,
      readPaths,
      allowInsecureHttp: allowInsecureHttp(context),
    })
  } catch (error) {
    throw new InvalidInputError(`--base-url ${(error as Error).message.split('\n')[0]}`, {
      input: '--base-url',
      cause: error,
    })
  }
}

/** --timeout of the commands that wait (a duration: 90s, 30m, 2h). */
export function timeoutFrom(context: CommandContext<{ timeout: StringOption }>, fallbackMs = 120 * 60_000): number {
  const text = context.values.timeout
  return text === undefined ? fallbackMs : parseDuration(text, 'timeout')
}

/** One line per change of status or step: what a person watching a CI log wants. */
export function progressReporter(context: CommandContext) {
  return (progress: QueryProgress) => {
    const step = progress.step ? `  step ${progress.step}` : ''
    context.progress(
      `[${formatDuration(progress.elapsedMs).padStart(6)}] ${progress.queryId}  ${progress.status}${step}`,
    )
  }
}

/** Any record of a query, full or partial (the public record lacks some fields): what it has, one row each. */
export function describeQuery(result: {
  provingQuery: Partial<QueryResult['provingQuery']>
  metadataUrls: readonly string[]
}): string {
  const query = result.provingQuery
  const rows: [string, string | null | undefined][] = [
    ['query', query.id],
    ['status', query.status],
    ['step', query.step],
    ['result', query.result],
    [
      'bucket',
      query.bucketId
        ? `${query.bucketId}${query.bucketJobIndex === null || query.bucketJobIndex === undefined ? '' : ` #${query.bucketJobIndex}`}`
        : null,
    ],
    ['external id', query.externalId],
    ['program hash', hashText(query.programHash)],
    ['SHARP fact', hashText(query.sharpFactHash, 'bytes32')],
    ['Integrity fact', hashText(query.integrityFactHash)],
    ['fact mocked', query.isFactMocked == null ? null : String(query.isFactMocked)],
    ['layout', query.layout],
    ['error', query.errorReason],
    ['created', query.createdAt],
    ['completed', query.completedAt],
  ]
  // Each value is the service's: one line, so a reason cannot forge a row ("status  DONE") below it.
  const lines = rows
    .filter(([, value]) => value !== null && value !== undefined && value !== '')
    .map(([label, value]) => `${label.padEnd(15)}${serviceLine(value!)}`)
  for (const url of result.metadataUrls) lines.push(`${'artifact'.padEnd(15)}${serviceLine(url)}`)
  return lines.join('\n')
}

/** A hash the service reported: a bytes32 fact in its 32-byte form (pie/shared/hex.ts), a felt as it is; malformed text quoted. */
function hashText(value: string | null | undefined, form: 'felt' | 'bytes32' = 'felt'): string | null | undefined {
  return typeof value === 'string' ? showValue(form === 'bytes32' ? bytes32Text(value) : value) : value
}

/**
 * One line per second at most while an upload runs (bytes, rate, ETA) and a last one when it is
 * done: a 70 MB upload to a slow server is not silence. stderr, with --json too. A small file's
 * size is exact ("2,107 bytes", not "2.1 KiB of 2.1 KiB"), and a rate is given only once a second
 * has passed (one over 0.1 s says nothing).
 */
export function uploadReporter(context: CommandContext, label: string, now: () => number = Date.now) {
  const started = now()
  // The first line after a second: a fast upload shows only its last line.
  let printed = started
  let finished = false
  return ({ sentBytes, totalBytes }: UploadProgress) => {
    const done = sentBytes >= totalBytes
    const at = now()
    if (finished || (!done && at - printed < 1000)) return
    printed = at
    finished = done
    const seconds = Math.max((at - started) / 1000, 0.001)
    const rate = sentBytes / seconds
    const percent = totalBytes > 0 ? Math.floor((sentBytes / totalBytes) * 100) : 100
    const tail = done
      ? `done in ${seconds.toFixed(1)} s`
      : `ETA ${formatDuration(((totalBytes - sentBytes) / Math.max(rate, 1)) * 1000)}`
    const amount =
      done && totalBytes < EXACT_BELOW
        ? sizeText(totalBytes)
        : `${sizeText(sentBytes)} of ${sizeText(totalBytes)} (${percent}%)`
    context.progress(`Uploading ${label}: ${amount}${seconds >= 1 ? `, ${formatBytes(rate)}/s` : ''}, ${tail}`)
  }
}

/** Below this many bytes a size is given exactly. */
const EXACT_BELOW = 10 * 1024

function sizeText(bytes: number): string {
  return bytes < EXACT_BELOW ? `${bytes.toLocaleString('en-US')} bytes` : formatBytes(bytes)
}

/**
 * Follows a wait with the usual one line per change, plus a heartbeat line when nothing has
 * changed for a while (every PROVING_HEARTBEAT_SECONDS, default 30; 0 turns it off), so a long
 * step in a CI log is visibly alive.
 */
export async function withHeartbeat<T>(
  context: CommandContext,
  wait: (onProgress: (progress: QueryProgress) => void) => Promise<T>,
): Promise<T> {
  const report = progressReporter(context)
  let last: QueryProgress | undefined
  let changedAt = Date.now()
  const seconds = Number(context.io.env.PROVING_HEARTBEAT_SECONDS ?? 30)
  const started = Date.now()
  const timer =
    Number.isFinite(seconds) && seconds > 0
      ? setInterval(() => {
          if (Date.now() - changedAt < seconds * 1000 - 50) return
          const what = last
            ? `${last.queryId}  still ${last.status}${last.step ? ` in step ${last.step}` : ''} (for ${formatDuration(Date.now() - changedAt)})`
            : 'still waiting for the first answer'
          context.progress(`[${formatDuration(Date.now() - started).padStart(6)}] ${what}`)
        }, seconds * 1000)
      : undefined
  timer?.unref()
  try {
    return await wait((progress) => {
      last = progress
      changedAt = Date.now()
      report(progress)
    })
  } finally {
    if (timer) clearInterval(timer)
  }
}
