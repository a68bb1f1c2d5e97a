/**
 * Valid proving-query records as the service sends them (JSON), one builder per representation
 * of interface.md's field table: R (retry response), D (GET /proving-query/{id}) and L (the
 * /docs/... endpoints). Each builder returns a complete record with every field its column marks
 * present; `overrides` replace or add fields, and a value of `OMIT` removes one. Overrides are
 * untyped on purpose: tests use them to build invalid records too.
 */

export const OMIT: unique symbol = Symbol('omit')

export type JsonRecord = Record<string, unknown>
export type Overrides = Record<string, unknown>

export const CLIENT = {
  clientId: 'client-1',
  name: 'CI bot',
  email: 'ci@example.com',
  isEmailVerified: true,
  image: 'https://example.com/avatar.png',
}

/** Every field of the table with a valid value (the union of R, D and L). */
const ALL_FIELDS: JsonRecord = {
  id: 'q-1',
  externalId: 'build-42',
  dedupId: 'pk-0123456789abcdef',
  transactionId: null,
  status: 'IN_PROGRESS',
  step: 'PROOF_GENERATION',
  programHash: '0x5ab580b04e3532b6b18f81cfa654a05e29dd8e2352d88df1e765a84072db07',
  integrityFactHash: null,
  sharpFactHash: null,
  layout: 'recursive',
  isFactMocked: false,
  isProofMocked: false,
  chain: 'L2',
  jobSize: 'XS',
  declaredJobSize: 'XS',
  cairoVm: 'rust',
  cairoVersion: 'cairo0',
  steps: ['TRACE_GENERATION', 'PROOF_GENERATION', 'PROOF_VERIFICATION_ON_L2'],
  result: 'PROOF_VERIFICATION_ON_L2',
  network: 'TESTNET',
  hints: null,
  sharpProver: 'stone',
  errorReason: null,
  submittedByClient: 'client-1',
  projectId: 'project-1',
  submittedByWallet: '0x00000000000000000000000000000000000000aa',
  bucketId: null,
  bucketJobIndex: null,
  customerName: null,
  isJobSizeValid: true,
  retryCount: 0,
  createdAt: '2025-06-01T12:00:00.000Z',
  completedAt: null,
  client: CLIENT,
  isRetriable: false,
}

/** The fields of each representation, in the table's order (interface.md, columns R, D, L). */
export const FIELDS_R = [
  'id',
  'externalId',
  'dedupId',
  'transactionId',
  'status',
  'step',
  'programHash',
  'integrityFactHash',
  'sharpFactHash',
  'layout',
  'isFactMocked',
  'isProofMocked',
  'chain',
  'jobSize',
  'declaredJobSize',
  'cairoVm',
  'cairoVersion',
  'steps',
  'result',
  'network',
  'hints',
  'sharpProver',
  'errorReason',
  'submittedByClient',
  'projectId',
  'submittedByWallet',
  'bucketId',
  'bucketJobIndex',
  'customerName',
  'isJobSizeValid',
  'retryCount',
  'createdAt',
  'completedAt',
] as const

export const FIELDS_D = [
  'id',
  'externalId',
  'dedupId',
  'transactionId',
  'step',
  'programHash',
  'integrityFactHash',
  'sharpFactHash',
  'layout',
  'isFactMocked',
  'isProofMocked',
  'steps',
  'errorReason',
  'submittedByClient',
  'projectId',
  'submittedByWallet',
  'bucketId',
  'bucketJobIndex',
  'customerName',
  'isJobSizeValid',
  'retryCount',
  'createdAt',
  'completedAt',
  'client',
  'isRetriable',
] as const

export const FIELDS_L = [
  'id',
  'externalId',
  'transactionId',
  'status',
  'step',
  'programHash',
  'integrityFactHash',
  'sharpFactHash',
  'layout',
  'isFactMocked',
  'chain',
  'jobSize',
  'declaredJobSize',
  'cairoVm',
  'cairoVersion',
  'steps',
  'result',
  'network',
  'hints',
  'errorReason',
  'submittedByClient',
  'projectId',
  'bucketId',
  'bucketJobIndex',
  'customerName',
  'createdAt',
  'completedAt',
  'client',
] as const

/** R fields the table marks "Nullable in R: no". */
export const NOT_NULLABLE_IN_R = [
  'id',
  'status',
  'cairoVm',
  'cairoVersion',
  'steps',
  'isJobSizeValid',
  'retryCount',
  'createdAt',
] as const

function build(fields: readonly string[], overrides: Overrides): JsonRecord {
  const record: JsonRecord = {}
  for (const field of fields) record[field] = structuredClone(ALL_FIELDS[field])
  for (const [key, value] of Object.entries(overrides)) {
    if (value === OMIT) delete record[key]
    else record[key] = value
  }
  return record
}

/** Record R: the retry endpoint's `provingQuery` (status back to RECEIVED after a retry). */
export function recordR(overrides: Overrides = {}): JsonRecord {
  return build(FIELDS_R, { status: 'RECEIVED', retryCount: 1, ...overrides })
}

/** Record D: GET /proving-query/{id}'s `provingQuery` (no status by the table). */
export function recordD(overrides: Overrides = {}): JsonRecord {
  return build(FIELDS_D, overrides)
}

/** Record L: the /docs/... endpoints' `provingQuery`. */
export function recordL(overrides: Overrides = {}): JsonRecord {
  return build(FIELDS_L, overrides)
}

export function metadataUrls(id = 'q-1'): string[] {
  const base = `https://storage.example.com/queries/${id}`
  return [`${base}/proof.json`, `${base}/pie.cairo0.zip`, `${base}/metadata.json`]
}

/** A bucket record (`provingBucket`). */
export function bucket(overrides: Overrides = {}): JsonRecord {
  const record: JsonRecord = {
    id: 'b-1',
    externalId: null,
    aggregatorParams: null,
    nodeWidth: 2,
    leaves: 0,
    mockProof: false,
    projectId: 'project-1',
    createdByClient: 'client-1',
    createdAt: '2025-06-01T12:00:00.000Z',
    status: 'OPEN',
  }
  for (const [key, value] of Object.entries(overrides)) {
    if (value === OMIT) delete record[key]
    else record[key] = value
  }
  return record
}
