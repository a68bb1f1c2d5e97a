/**
 * `bucket-close/`: closes a bucket, which finalizes its queries and starts the aggregated
 * on-chain verification. Closing is idempotent: a bucket already closed is returned unchanged.
 */
import { BUCKET_CLOSE_INPUTS, parseInputs, requireService } from '../steps/inputs.ts'
import { loggerFor } from '../steps/io.ts'
import { loadClient } from '../steps/lazy.ts'
import { bucketOutputs } from '../steps/outputs.ts'
import { QueryStep } from '../steps/query-step.ts'
import type { ActionIO, RunOptions } from '../types.ts'

export async function run(io: ActionIO, options: RunOptions = {}): Promise<void> {
  const signal = options.signal ?? new AbortController().signal
  io.setSecret(io.getInput('api-key'))
  const step = new QueryStep(io, { action: 'Close bucket', kind: 'other', signal })
  try {
    const inputs = parseInputs(io, BUCKET_CLOSE_INPUTS, requireService)
    const services = await loadClient()
    const client = services.provingClient({ baseUrl: inputs['base-url']!, apiKey: inputs['api-key'], logger: loggerFor(io), allowInsecureHttp: inputs['allow-insecure-http'] === true })
    const bucket = await client.closeBucket(inputs['bucket-id'], { signal })
    step.outputs.set(bucketOutputs(bucket))
    const status = typeof bucket.status === 'string' ? bucket.status : undefined
    io.info(`Bucket ${bucket.id}${status ? ` is ${status}` : ' closed'} with ${bucket.leaves} ${bucket.leaves === 1 ? 'query' : 'queries'}.`)
    step.extraRows.push(
      ['Bucket', { code: bucket.id }],
      ['Status', status],
      ['Queries (leaves)', String(bucket.leaves)],
      ['Mock proof', bucket.mockProof ? 'YES: the aggregated proof is mocked' : 'no'],
      ['External id', bucket.externalId ?? undefined],
    )
    await step.report({
      outcome: 'done',
      headline: `Bucket ${bucket.id} is closed: its queries are being finalized and verified together.`,
    })
  } catch (error) {
    await step.fail(error)
  }
}
