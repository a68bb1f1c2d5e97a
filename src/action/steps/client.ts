/**
 * The proving service as the action uses it (loaded lazily, see ./lazy.ts).
 */
import { ProvingClient } from '../../clients/proving.ts'
import { InvalidInputError } from '../../core/errors.ts'
import { closeDefaultDispatcher } from '../../core/http.ts'
import { downloadArtifact } from '../../pipeline/artifacts.ts'
import type { Logger } from '../../core/runtime.ts'

export function provingClient(options: {
  baseUrl: string
  apiKey: string | undefined
  logger: Logger
  allowInsecureHttp?: boolean | undefined
}): ProvingClient {
  try {
    return new ProvingClient(options)
  } catch (error) {
    throw new InvalidInputError(`\`base-url\` ${(error as Error).message.split('\n')[0]}`, {
      input: 'base-url',
      cause: error,
    })
  }
}

/**
 * Downloads one artifact of a query (metadata URLs need no authentication) through the shared
 * artifact download (`pipeline/artifacts.ts`): capped in size, redirects followed only within the
 * link's own origin, the proxy settings honoured, and nothing half-written left behind. Plain
 * http to another machine only with `allow-insecure-http` (what is downloaded may be attached to
 * a release and hashed into its SHA256SUMS).
 */
export async function downloadFile(
  url: string,
  destination: string,
  signal?: AbortSignal,
  options: { allowInsecureHttp?: boolean; maxBytes?: number; logger?: Logger } = {},
): Promise<void> {
  await downloadArtifact(url, destination, {
    ...options,
    allowInsecureHttp: options.allowInsecureHttp ?? false,
    signal,
    overwrite: true,
  })
}

export async function closeConnections(): Promise<void> {
  await closeDefaultDispatcher()
}
