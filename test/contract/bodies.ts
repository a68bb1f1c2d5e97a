/**
 * Bodies shaped as production answers them, written from ../shared/spec/production.md in our own
 * words (never from our schemas or the emulator, which come from the same contract as the
 * client). Every read comes in four variants:
 *
 * - `full`: every field production.md names for the record, each with a value;
 * - `nulls`: every field production.md lists as nullable set to null (the client's email and
 *   image too: wallet sign-ups have neither);
 * - `minimal`: only what production always sends (production.md says nothing else is certain);
 * - `extras`: `full` plus fields nobody documented and enum values newer than this client
 *   (production.md: "enum values grow over time").
 */

export const VARIANTS = ['full', 'nulls', 'minimal', 'extras'] as const
export type Variant = (typeof VARIANTS)[number]

type Json = Record<string, unknown>

/** The facts a query reports once DONE (null before, and in the `nulls` variant). */
export type Facts = { programHash: string; integrityFactHash: string; sharpFactHash: string }

/** production.md, "Nullable in production", for the query record. */
export const NULLABLE_QUERY_FIELDS = [
  'externalId',
  'transactionId',
  'step',
  'programHash',
  'integrityFactHash',
  'sharpFactHash',
  'layout',
  'isFactMocked',
  'chain',
  'jobSize',
  'declaredJobSize',
  'result',
  'network',
  'hints',
  'errorReason',
  'bucketId',
  'bucketJobIndex',
  'customerName',
  'completedAt',
] as const

const CREATED = '2026-03-02T09:15:00.000Z'
const COMPLETED = '2026-03-02T09:21:40.512Z'

function clientOf(variant: Variant): Json {
  // production.md: clientId, name and isEmailVerified always; email and image null or absent.
  const always = { clientId: 'cl_7f3a', name: 'release-bot', isEmailVerified: false }
  if (variant === 'minimal') return always
  if (variant === 'nulls') return { ...always, email: null, image: null }
  if (variant === 'extras')
    return {
      ...always,
      email: 'ops@example.org',
      image: 'https://avatars.example.org/7f3a.png',
      walletAddress: '0x00000000000000000000000000000000000000ab',
      tier: 'GOLD',
    }
  return { ...always, email: 'ops@example.org', image: 'https://avatars.example.org/7f3a.png' }
}

/**
 * A query record as GET /proving-query/{id} (and the list) answers in production: with status,
 * chain, jobSize, ..., without dedupId/isProofMocked/submittedByWallet/isJobSizeValid/
 * retryCount/isRetriable. `withClient: false` is the lookup by dedupId.
 */
export function productionQuery(
  variant: Variant,
  state: { id: string; status: string; step?: string | null; facts?: Facts | null },
  options: { withClient?: boolean } = {},
): Json {
  const done = state.status === 'DONE'
  const facts = done ? (state.facts ?? null) : null
  const minimal: Json = { id: state.id, status: state.status, steps: [], createdAt: CREATED }
  if (variant === 'minimal') {
    if (facts) Object.assign(minimal, facts)
    if (options.withClient !== false) minimal.client = clientOf(variant)
    return minimal
  }
  const full: Json = {
    id: state.id,
    externalId: 'release-2026.03',
    transactionId: done ? '0x6a1c3be0d4f2a9870b5e1c2d3f4a5b6c7d8e9f00112233445566778899aabbcc' : null,
    status: state.status,
    step: state.step ?? (done ? 'PROOF_VERIFICATION_ON_L2' : 'TRACE_GENERATION'),
    programHash: facts?.programHash ?? null,
    integrityFactHash: facts?.integrityFactHash ?? null,
    sharpFactHash: facts?.sharpFactHash ?? null,
    layout: 'recursive',
    isFactMocked: false,
    chain: 'L2',
    jobSize: 'XS',
    declaredJobSize: 'S',
    cairoVm: 'rust',
    cairoVersion: 'cairo0',
    steps: ['TRACE_GENERATION', 'PROOF_GENERATION', 'PROOF_VERIFICATION_ON_L2'],
    result: 'PROOF_VERIFICATION_ON_L2',
    network: 'TESTNET',
    hints: 'svc_sn_grower',
    errorReason: done ? null : 'none so far',
    submittedByClient: 'cl_7f3a',
    projectId: 'pr_19c2',
    bucketId: 'b8d6f1c2-3a4e-4f5a-9b0c-1d2e3f4a5b6c',
    bucketJobIndex: 3,
    customerName: 'Example Labs',
    createdAt: CREATED,
    completedAt: done ? COMPLETED : null,
  }
  if (options.withClient !== false) full.client = clientOf(variant)
  if (variant === 'nulls') {
    for (const field of NULLABLE_QUERY_FIELDS) full[field] = null
    // The facts of a DONE query stay: the nulls variant is about what may be null, and a gate
    // is right to refuse a DONE query without facts. Its own test covers facts left null.
    if (facts) Object.assign(full, facts)
  }
  if (variant === 'extras') {
    Object.assign(full, {
      chain: 'WORLD_CHAIN',
      layout: 'all_cairo',
      jobSize: 'XL',
      result: 'PROOF_VERIFICATION_ON_SOME_NEW_CHAIN',
      network: 'DEVNET',
      hints: 'svc_new_grower',
      sharpProver: 'stwo_v2',
      step: done ? 'SETTLEMENT_CONFIRMED' : 'TRACE_AND_METADATA_GENERATION',
      priority: 'HIGH',
      queueName: 'q-east-2',
      costEstimate: { currency: 'USD', amount: 0.42 },
    })
  }
  return full
}

/** A bucket as GET /buckets/{id} and the bucket calls answer in production. */
export function productionBucket(variant: Variant, state: { id: string; status: string }): Json {
  const minimal: Json = {
    id: state.id,
    status: state.status,
    bucketType: 'SNOS',
    chain: 'L1',
    projectId: 'pr_19c2',
    createdByClient: 'cl_7f3a',
    createdAt: CREATED,
  }
  if (variant === 'minimal') return minimal
  const full: Json = { ...minimal, externalId: 'nightly-batch', nodeWidth: 4, leaves: 2 }
  if (variant === 'nulls') Object.assign(full, { externalId: null, nodeWidth: null, leaves: null })
  if (variant === 'extras')
    Object.assign(full, {
      bucketType: 'SVC_AR_V2',
      chain: 'WORLD_CHAIN',
      status: state.status,
      aggregatedFactHash: '0x1234',
      region: 'eu',
    })
  return full
}

/** A task of the task list: production's item may lack clientId. */
export function productionTaskItem(variant: Variant, uuid: string, status: string): Json {
  const minimal: Json = { uuid, status }
  if (variant === 'minimal') return minimal
  const full: Json = {
    uuid,
    status,
    destinationChainId: '0xaa36a7',
    programHash: '0x2a',
    createdAt: CREATED,
    updatedAt: COMPLETED,
  }
  if (variant === 'nulls')
    Object.assign(full, {
      destinationChainId: null,
      programHash: null,
      createdAt: null,
      updatedAt: null,
      clientId: null,
    })
  if (variant === 'extras')
    Object.assign(full, { status: 'SettlementQueued', isMock: true, scheduleMode: 'ON_CHAIN', retries: 0 })
  return full
}

export function productionTaskStatus(variant: Variant, uuid: string, status: string): Json {
  const record: Json = { status, taskId: uuid, updatedAt: COMPLETED }
  if (variant === 'full') record.errorMessage = ''
  if (variant === 'nulls') record.errorMessage = null
  if (variant === 'extras') Object.assign(record, { errorMessage: '', stage: 'decommitment', txHash: '0xabc' })
  return record
}
