import { InvalidInputError } from '../../core/errors.ts'
import { type CommandSpec, parseInteger, SERVICE_OPTIONS, stringValue } from '../context.ts'
import { EXIT } from '../exit-codes.ts'
import { provingClientFrom } from '../services.ts'
import type { BucketRecord } from '../../schemas/proving.ts'

function describeBucket(bucket: BucketRecord): string {
  return [
    ['bucket', bucket.id],
    ['status', bucket.status ?? '(not reported)'],
    ['leaves', String(bucket.leaves)],
    ['node width', bucket.nodeWidth === null ? null : String(bucket.nodeWidth)],
    ['mock proof', String(bucket.mockProof)],
    ['external id', bucket.externalId],
    ['created', bucket.createdAt],
  ]
    .filter(([, value]) => value !== null && value !== undefined)
    .map(([label, value]) => `${label!.padEnd(13)}${value}`)
    .join('\n')
}

export const bucketCreate: CommandSpec = {
  path: ['bucket', 'create'],
  summary: 'Open a bucket that groups queries for aggregated on-chain verification (service extension).',
  positionals: { min: 0, max: 0 },
  options: {
    ...SERVICE_OPTIONS,
    'aggregator-version': { type: 'string', valueName: '<version>', description: 'Aggregator version (required).' },
    'external-id': { type: 'string', valueName: '<id>', description: 'Your own identifier for the bucket.' },
    'node-width': { type: 'string', valueName: '<n>', description: 'Width of the aggregation tree nodes.' },
    'aggregator-params': { type: 'string', valueName: '<text>', description: 'Aggregator parameters.' },
    'mock-proof': { type: 'boolean', description: 'Mock the aggregated proof (testing).' },
  },
  async run(context) {
    const aggregatorVersion = stringValue(context, 'aggregator-version')?.trim()
    if (!aggregatorVersion) {
      throw new InvalidInputError('--aggregator-version is required: name the aggregator version to use.', {
        input: '--aggregator-version',
      })
    }
    const nodeWidthText = stringValue(context, 'node-width')
    const client = provingClientFrom(context, { needsKey: true })
    const bucket = await client.createBucket({
      aggregatorVersion,
      externalId: stringValue(context, 'external-id'),
      nodeWidth: nodeWidthText === undefined ? undefined : parseInteger(nodeWidthText, 'node-width', 1, 2_147_483_647),
      aggregatorParams: stringValue(context, 'aggregator-params'),
      mockProof: context.values['mock-proof'] === true ? true : undefined,
      signal: context.signal,
    })
    context.print(describeBucket(bucket), { provingBucket: bucket })
    return EXIT.ok
  },
}

export const bucketClose: CommandSpec = {
  path: ['bucket', 'close'],
  args: '<bucket-id>',
  summary: 'Close a bucket: finalize its queries and start aggregated verification (idempotent).',
  positionals: { min: 1, max: 1 },
  options: { ...SERVICE_OPTIONS },
  async run(context) {
    const client = provingClientFrom(context, { needsKey: true })
    const bucket = await client.closeBucket(context.positionals[0]!, { signal: context.signal })
    context.print(describeBucket(bucket), { provingBucket: bucket })
    return EXIT.ok
  },
}

export const bucketGet: CommandSpec = {
  path: ['bucket', 'get'],
  args: '<bucket-id>',
  summary: 'Show a bucket and its queries (service extension).',
  positionals: { min: 1, max: 1 },
  options: { ...SERVICE_OPTIONS },
  async run(context) {
    const client = provingClientFrom(context, { needsKey: false })
    const details = await client.getBucket(context.positionals[0]!, { signal: context.signal })
    const lines = [describeBucket(details.bucket), `queries        ${details.queries.length}`]
    for (const query of details.queries) lines.push(`  #${query.bucketJobIndex ?? '?'} ${query.id}`)
    context.print(lines.join('\n'), details)
    return EXIT.ok
  },
}
