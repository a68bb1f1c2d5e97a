import { InvalidInputError } from '../../core/errors.ts'
import { checkInteger, checkServiceId, requireId } from '../../core/checks.ts'
import type { BucketDetailsResponse, BucketRecord } from '../../schemas/proving.ts'
import { apiKeyFor, type ProvingService, provingSchemas } from './service.ts'

/** The bucket {@link ProvingClient.createBucket} opens. */
export type CreateBucketOptions = {
  /** The aggregator version that proves the bucket's queries together (for example `v1`). */
  aggregatorVersion: string
  /** Your own identifier of the bucket, kept on its record. */
  externalId?: string | undefined
  /** The width of the aggregation tree's nodes (a positive integer; sent as a string, as production takes it). */
  nodeWidth?: number | undefined
  /**
   * The aggregator's parameters: a JSON object with the aggregator's (snake_case) keys, for
   * example `{ use_kzg_da: true, full_output: false }`. A string must hold such an object.
   */
  aggregatorParams?: Record<string, unknown> | string | undefined
  /** Asks for a mocked aggregate proof (for tests). */
  mockProof?: boolean | undefined
  /** Cancels the request (the promise rejects with AbortedError). */
  signal?: AbortSignal | undefined
}

/** POST /buckets/close?bucketId=: finalizes the bucket's queries; idempotent. */
export async function closeBucket(
  service: ProvingService,
  bucketId: string,
  options: { signal?: AbortSignal } = {},
): Promise<BucketRecord> {
  const id = requireId(bucketId, 'bucketId')
  const { data } = await service.http.request({
    method: 'POST',
    path: '/buckets/close',
    query: { bucketId: id },
    headers: { 'api-key': apiKeyFor(service, 'Closing a bucket') },
    schema: (await provingSchemas()).bucketResponse,
    operation: `close bucket ${id}`,
    signal: options.signal,
  })
  return data.provingBucket
}

/** POST /buckets (extension): opens a bucket. */
export async function createBucket(service: ProvingService, options: CreateBucketOptions): Promise<BucketRecord> {
  if (!options.aggregatorVersion?.trim()) {
    throw new InvalidInputError(
      'aggregatorVersion is required to create a bucket; name the aggregator version to use.',
      {
        input: 'aggregatorVersion',
      },
    )
  }
  const { signal, nodeWidth, aggregatorParams, ...rest } = options
  const body: Record<string, unknown> = { ...rest }
  // production.md: nodeWidth travels as a string, aggregatorParams as a JSON object.
  if (nodeWidth !== undefined) body.nodeWidth = String(checkInteger(nodeWidth, 'nodeWidth', 1, 2_147_483_647))
  if (aggregatorParams !== undefined) body.aggregatorParams = aggregatorParamsObject(aggregatorParams)
  const { data } = await service.http.request({
    method: 'POST',
    path: '/buckets',
    headers: { 'api-key': apiKeyFor(service, 'Creating a bucket') },
    json: body,
    schema: (await provingSchemas()).bucketResponse,
    operation: 'create bucket',
    signal,
  })
  checkServiceId(
    data.provingBucket.id,
    'The bucket id the proving service returned',
    'The service may have opened the bucket anyway; it was not used.',
  )
  return data.provingBucket
}

/** GET /buckets/{id} (extension): the bucket and its queries. */
export async function getBucket(
  service: ProvingService,
  bucketId: string,
  options: { signal?: AbortSignal } = {},
): Promise<BucketDetailsResponse> {
  const id = requireId(bucketId, 'bucketId')
  const { data } = await service.http.request({
    method: 'GET',
    path: `/buckets/${encodeURIComponent(id)}`,
    headers: service.apiKey ? { 'api-key': service.apiKey } : {},
    schema: (await provingSchemas()).bucketDetailsResponse,
    operation: `get bucket ${id}`,
    signal: options.signal,
  })
  return data
}

/** aggregatorParams as production takes it: a JSON object (a string must hold one). */
function aggregatorParamsObject(value: Record<string, unknown> | string): Record<string, unknown> {
  let parsed: unknown = value
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value)
    } catch {
      parsed = undefined
    }
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new InvalidInputError(
      'aggregatorParams must be a JSON object of the aggregator\'s parameters, for example {"use_kzg_da": true}.',
      { input: 'aggregatorParams' },
    )
  }
  return parsed as Record<string, unknown>
}
