import type { Dispatcher } from 'undici'
import { InvalidResponseError, ServiceError } from '../errors.ts'
import { inputNames } from '../checks.ts'
import { currentBound } from '../deadline.ts'
import { showUrl } from '../redact.ts'
import { realMillisecondsOf } from '../runtime.ts'
import { discard, formatBytes } from './bodies.ts'
import type { HttpTimeouts } from './config.ts'
import { type FailureContext, networkError } from './failures.ts'
import { redirectTarget, refusesPlainHttp } from './network-rule.ts'
import { type Transport, timeoutsWithin } from './transport.ts'

/** What a download goes through: the client's transport, timeouts and User-Agent, and whether plain http may leave this machine. */
export type DownloadSource = FailureContext & {
  readonly timeouts: HttpTimeouts
  readonly allowInsecureHttp: boolean
  readonly userAgent: string
  transport(): Promise<Transport>
}

export type DownloadOptions = {
  maxBytes: number
  write: (body: AsyncIterable<Uint8Array>) => Promise<void>
  signal?: AbortSignal | undefined
  what?: string | undefined
}

/**
 * Streams a file from `url` (absolute) into `write`, through the same dispatcher, header
 * checks and deadline as every request. At most `maxBytes` (an announced Content-Length over
 * it is refused before a byte is read; a body that runs over is cut and refused). Redirects
 * are followed only within the URL's own origin (at most 5): an artifact link that sends the
 * client elsewhere is refused, never followed. No retries: the caller decides.
 */
export async function download(
  from: DownloadSource,
  url: string,
  options: DownloadOptions,
): Promise<{ bytes: number }> {
  let current: URL
  try {
    current = new URL(url)
  } catch {
    throw new InvalidResponseError(`The ${from.serviceName} gave a download link that is not a URL: ${showUrl(url)}.`)
  }
  const what = options.what ?? `the download from ${showUrl(current)}`
  if (refusesPlainHttp(current, from.allowInsecureHttp)) {
    throw new InvalidResponseError(
      `Refused to download ${what} over plain http from another machine; allow it (${inputNames('allow-insecure-http', 'allowInsecureHttp')}).`,
    )
  }
  const deadline = currentBound()
  for (let hop = 0; ; hop++) {
    const remaining = deadline === undefined ? undefined : deadline - from.clock.now()
    let response: Dispatcher.ResponseData
    try {
      const { undiciRequest, dispatcher } = await from.transport()
      response = await undiciRequest(current, {
        method: 'GET',
        headers: { 'user-agent': from.userAgent },
        dispatcher,
        signal: options.signal,
        ...timeoutsWithin(from.timeouts.headersMs, from.timeouts.bodyMs, realMillisecondsOf(from.clock, remaining)),
      })
    } catch (error) {
      throw networkError(from, error, `download ${what}`, options.signal)
    }
    const status = response.statusCode
    if (status >= 300 && status < 400 && response.headers.location) {
      discard(response.body)
      const location = Array.isArray(response.headers.location)
        ? response.headers.location[0]!
        : response.headers.location
      const target = redirectTarget(current, location)
      if ('refused' in target) {
        throw new InvalidResponseError(
          `Refused to follow ${what} ${target.refused} (a ${status} redirect; downloads stay on the link's own origin).`,
        )
      }
      if (hop >= 5) throw new InvalidResponseError(`Gave up on ${what} after 5 redirects.`)
      current = target.next
      continue
    }
    if (status < 200 || status >= 300) {
      discard(response.body)
      throw new ServiceError(`Downloading ${what} failed with ${status}.`, {
        status,
        retryable: [408, 429, 500, 502, 503, 504].includes(status),
      })
    }
    const announced = Number(response.headers['content-length'])
    if (Number.isFinite(announced) && announced > options.maxBytes) {
      discard(response.body)
      throw new InvalidResponseError(
        `${capitalize(what)} announces ${announced} bytes, more than the ${formatBytes(options.maxBytes)} allowed; refused unread.`,
      )
    }
    let bytes = 0
    const limit = options.maxBytes
    const body = response.body
    async function* capped(): AsyncIterable<Uint8Array> {
      for await (const chunk of body) {
        bytes += (chunk as Buffer).length
        if (bytes > limit) {
          discard(body)
          throw new InvalidResponseError(
            `${capitalize(what)} is larger than the ${formatBytes(limit)} allowed; cut and refused.`,
          )
        }
        yield chunk as Buffer
      }
    }
    await options.write(capped())
    return { bytes }
  }
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1)
}
