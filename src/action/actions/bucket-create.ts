/**
 * `bucket-create/`: opens a bucket (a service extension) for the queries of a release, so a job
 * matrix can prove into it (the root action's `bucket-id`) and `bucket-close` can close it, wait
 * and gate on every query. Output: `bucket-id`, and the record as `bucket`.
 */
import { defineAction } from '../steps/define-action.ts'
import { BUCKET_CREATE_INPUTS, requireService } from '../steps/inputs.ts'
import { loggerFor } from '../steps/io.ts'
import { loadClientModule } from '../steps/lazy.ts'
import { ProvingStep } from '../steps/query-step.ts'

export const run = defineAction({
  inputs: BUCKET_CREATE_INPUTS,
  crossCheck: requireService,
  step: (io, signal) => new ProvingStep(io, { action: 'Create bucket', signal }),
  async work({ io, signal, inputs, step }) {
    const services = await loadClientModule()
    const client = services.provingClient({
      baseUrl: inputs['base-url']!,
      apiKey: inputs['api-key'],
      logger: loggerFor(io),
      allowInsecureHttp: inputs['allow-insecure-http'] === true,
    })
    const bucket = await client.createBucket({
      aggregatorVersion: inputs['aggregator-version'],
      externalId: inputs['external-id'],
      nodeWidth: inputs['node-width'],
      aggregatorParams: inputs['aggregator-params'],
      mockProof: inputs['mock-proof'] ? true : undefined,
      signal,
    })
    step.outputs.set({ 'bucket-id': bucket.id, bucket: JSON.stringify(bucket) })
    io.info(`Opened bucket ${bucket.id}${bucket.status ? ` (${bucket.status})` : ''}.`)
    step.extraRows.push(
      ['Bucket', { code: bucket.id }],
      ['Status', typeof bucket.status === 'string' ? bucket.status : undefined],
      ['Aggregator version', inputs['aggregator-version']],
      ['Mock proof', bucket.mockProof ? 'YES: the aggregated proof is mocked' : 'no'],
      ['External id', bucket.externalId ?? undefined],
    )
    await step.report({
      outcome: 'done',
      headline: `Bucket ${bucket.id} is open: prove into it with the root action's \`bucket-id\`, then close it with \`bucket-close\`.`,
    })
  },
})
