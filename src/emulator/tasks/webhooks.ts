import { request } from 'undici'
import type { Logger } from '../../core/runtime.ts'
import { isLoopback } from '../../core/checks.ts'
import { redact, SecretRedactor, showUrl } from '../../core/redact.ts'
import { urlSecrets } from '../../chain/rpc.ts'
import type { WebhookAttempt, WebhookDelivery } from './store.ts'

/**
 * Delivery of a webhook: one JSON POST per terminal state, sent again on a
 * non-2xx answer or no answer, at most 3 attempts in all. Each attempt is bounded (connect,
 * headers and body timeouts) and the connection is not kept, so a slow or dead receiver costs
 * the emulator at most a few seconds per attempt and holds no sockets afterwards.
 */

export const WEBHOOK_MAX_ATTEMPTS = 3
export const WEBHOOK_ATTEMPT_TIMEOUT_MS = 5_000
/** Waits before the 2nd and 3rd attempts. */
export const WEBHOOK_BACKOFF_MS = [250, 500] as const
const MAX_RESPONSE_BYTES = 64 * 1024

/**
 * Whether the emulator may call `url`: only this machine unless `allowedHosts` widens it (a
 * host name, or `*` for any). A webhook URL is the caller's input; without this the emulator
 * would POST wherever a request told it to (an internal port scanner on a laptop).
 */
export function webhookHostAllowed(url: string, allowedHosts: readonly string[]): boolean {
  let host: string
  try {
    host = new URL(url).hostname.toLowerCase()
  } catch {
    return false
  }
  if (isLoopback(host)) return true
  return allowedHosts.some((allowed) => allowed === '*' || allowed.toLowerCase() === host)
}

export async function deliverWebhook(
  delivery: WebhookDelivery,
  payload: Record<string, string>,
  options: { logger: Logger; onAttempt: () => void; allowedHosts?: readonly string[] },
): Promise<void> {
  const body = JSON.stringify(payload)
  delivery.payload = payload
  if (!webhookHostAllowed(delivery.url, options.allowedHosts ?? [])) {
    // Nothing is sent: the delivery fails at once, and says why.
    delivery.attempts.push({
      at: new Date().toISOString(),
      status: null,
      error: `host not allowed (${showUrl(delivery.url)}); start the emulator with --webhook-host to allow it`,
    } as WebhookAttempt)
    delivery.state = 'failed'
    options.onAttempt()
    options.logger.warn(
      `emulator: webhook to ${showUrl(delivery.url)} not sent: only this machine is allowed unless --webhook-host names the host.`,
    )
    return
  }
  delivery.state = 'sending'
  for (let attempt = delivery.attempts.length + 1; attempt <= WEBHOOK_MAX_ATTEMPTS; attempt++) {
    if (attempt > 1) await sleep(WEBHOOK_BACKOFF_MS[attempt - 2] ?? 500)
    const result = await attemptOnce(delivery.url, body)
    delivery.attempts.push(result)
    const ok = result.status !== null && result.status >= 200 && result.status < 300
    if (ok) delivery.state = 'delivered'
    else if (attempt === WEBHOOK_MAX_ATTEMPTS) delivery.state = 'failed'
    options.onAttempt()
    if (ok) return
    options.logger.debug(
      `emulator: webhook ${showUrl(delivery.url)} attempt ${attempt} of ${WEBHOOK_MAX_ATTEMPTS}: ${result.status ?? scrubUrl(String(result.error), delivery.url)}`,
    )
  }
}

async function attemptOnce(url: string, body: string): Promise<WebhookAttempt> {
  const at = new Date().toISOString()
  try {
    const response = await request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'proving-kit-emulator/webhook' },
      body,
      reset: true,
      headersTimeout: WEBHOOK_ATTEMPT_TIMEOUT_MS,
      bodyTimeout: WEBHOOK_ATTEMPT_TIMEOUT_MS,
      signal: AbortSignal.timeout(3 * WEBHOOK_ATTEMPT_TIMEOUT_MS),
    })
    // The answer's body is not used, but it is read (to a cap) so the connection ends cleanly.
    let size = 0
    for await (const chunk of response.body) {
      size += (chunk as Buffer).length
      if (size > MAX_RESPONSE_BYTES) {
        response.body.destroy()
        break
      }
    }
    return { at, status: response.statusCode, error: null }
  } catch (error) {
    const code = (error as { code?: unknown }).code
    // A message may quote the URL, whose path or query can hold the receiver's secret (a Slack
    // or Zapier hook): it is kept and logged with the URL redacted, as everywhere else.
    return {
      at,
      status: null,
      error: typeof code === 'string' ? code : scrubUrl(String((error as Error)?.message ?? error), url),
    }
  }
}

/** `text` with the webhook's URL (and its parts that can carry a key) masked, and credentials in any other URL. */
function scrubUrl(text: string, url: string): string {
  return redact(text, new SecretRedactor(urlSecrets(url)))
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref())
}
