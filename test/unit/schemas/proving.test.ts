import { describe, expect, it } from 'vitest'
import type { z } from 'zod'
import { InvalidResponseError } from '../../../src/core/errors.ts'
import { parseResponse } from '../../../src/core/parse.ts'
import type { Logger } from '../../../src/core/runtime.ts'
import {
  bucketResponse,
  docsQueryListResponse,
  docsQueryResponse,
  queryRecord,
  queryRecordWithStatus,
  queryResponse,
  retryResponse,
  submissionResponse,
} from '../../../src/schemas/proving.ts'
import {
  bucket,
  FIELDS_D,
  FIELDS_L,
  FIELDS_R,
  metadataUrls,
  NOT_NULLABLE_IN_R,
  OMIT,
  recordD,
  recordL,
  recordR,
} from '../../helpers/records.ts'

function capture() {
  const debug: string[] = []
  const logger: Logger = { debug: (m) => debug.push(m), info() {}, warn() {}, error() {} }
  return { logger, debug }
}

/** Parses as the HttpClient does: through parseResponse, so debug notes are visible. */
function parse<T>(schema: z.ZodType<T>, json: unknown) {
  const { logger, debug } = capture()
  const data = parseResponse(schema, json, { logger, what: 'proving service response to test' })
  return { data, debug }
}

function parseError(schema: z.ZodType, json: unknown): InvalidResponseError {
  try {
    parse(schema, json)
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidResponseError)
    return error as InvalidResponseError
  }
  throw new Error('expected the record to be rejected')
}

/**
 * The parse error lists `path: problem` for each issue; match the path as a whole (array items
 * add `.index`), not as a substring of another word ("Invalid" contains "id").
 */
function expectNamed(error: InvalidResponseError, path: string): void {
  const escaped = path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  expect(error.message).toMatch(new RegExp(`(?:specification: |; )${escaped}(?:\\.\\d+)*: `))
}

describe('valid records parse', () => {
  it('R, D and L as the service sends them parse without notes', () => {
    for (const [schema, record] of [
      [queryRecordWithStatus, recordR()],
      [queryRecord, recordD()],
      [queryRecordWithStatus, recordL()],
    ] as const) {
      const { data, debug } = parse(schema as z.ZodType, record)
      expect(data).toEqual(record)
      expect(debug).toEqual([])
    }
  })

  it('the endpoint bodies wrapping them parse', () => {
    expect(parse(retryResponse, { provingQuery: recordR(), message: 'Query retry initiated' }).debug).toEqual([])
    expect(parse(queryResponse, { provingQuery: recordD(), metadataUrls: metadataUrls() }).debug).toEqual([])
    expect(parse(docsQueryResponse, { provingQuery: recordL(), metadataUrls: metadataUrls() }).debug).toEqual([])
    expect(
      parse(docsQueryListResponse, { provingQueries: [recordL(), recordL({ id: 'q-2' })], total: 2 }).debug,
    ).toEqual([])
    expect(parse(bucketResponse, { provingBucket: bucket() }).debug).toEqual([])
    expect(parse(submissionResponse, { provingQueryId: 'q-9' }).data).toEqual({ provingQueryId: 'q-9' })
  })

  it('the builders follow the table: D has no status, L has status, R has every R field', () => {
    expect(Object.keys(recordR()).sort()).toEqual([...FIELDS_R].sort())
    expect(recordD()).not.toHaveProperty('status')
    expect(recordL()).toHaveProperty('status')
    expect(Object.keys(recordD()).sort()).toEqual([...FIELDS_D].sort())
    expect(Object.keys(recordL()).sort()).toEqual([...FIELDS_L].sort())
  })
})

describe('required fields: only what the client acts on (production.md omits the rest)', () => {
  it('every record needs its id', () => {
    expectNamed(parseError(queryRecordWithStatus, recordR({ id: OMIT })), 'id')
    expectNamed(parseError(queryRecord, recordD({ id: OMIT })), 'id')
    expectNamed(parseError(queryRecordWithStatus, recordL({ id: OMIT })), 'id')
  })

  it('R and L need status (readers decide on it); D parses without it (the table has none)', () => {
    expectNamed(parseError(queryRecordWithStatus, recordR({ status: OMIT })), 'status')
    expectNamed(parseError(queryRecordWithStatus, recordL({ status: OMIT })), 'status')
    expect(() => parse(queryRecord, recordD())).not.toThrow()
  })

  it.each(FIELDS_R.filter((field) => field !== 'id' && field !== 'status'))('R without %s parses', (field) => {
    expect(parse(queryRecordWithStatus, recordR({ [field]: OMIT })).data).not.toHaveProperty(field)
  })

  it.each(FIELDS_D.filter((field) => field !== 'id'))('D without %s parses', (field) => {
    expect(parse(queryRecord, recordD({ [field]: OMIT })).data).not.toHaveProperty(field)
  })

  it.each(FIELDS_L.filter((field) => field !== 'id' && field !== 'status'))('L without %s parses', (field) => {
    expect(parse(queryRecordWithStatus, recordL({ [field]: OMIT })).data).not.toHaveProperty(field)
  })

  it('a D that does carry status (production does) keeps it', () => {
    expect(parse(queryRecord, recordD({ status: 'DONE' })).data.status).toBe('DONE')
  })
})

describe('nullability: production nulls what the table marks not nullable', () => {
  const nullable = FIELDS_R.filter((field) => field !== 'id' && field !== 'status')

  it.each(nullable)('R.%s = null is accepted', (field) => {
    const { data } = parse(queryRecordWithStatus, recordR({ [field]: null }))
    expect((data as Record<string, unknown>)[field]).toBeNull()
  })

  it.each(NOT_NULLABLE_IN_R.filter((field) => field !== 'id' && field !== 'status'))(
    'D and L with %s = null parse too',
    (field) => {
      if ((FIELDS_D as readonly string[]).includes(field))
        expect(() => parse(queryRecord, recordD({ [field]: null }))).not.toThrow()
      if ((FIELDS_L as readonly string[]).includes(field))
        expect(() => parse(queryRecordWithStatus, recordL({ [field]: null }))).not.toThrow()
    },
  )

  it('status null is rejected where it is read; step null is accepted', () => {
    expectNamed(parseError(queryRecordWithStatus, recordR({ status: null })), 'status')
    expect(parse(queryRecordWithStatus, recordR({ step: null })).data.step).toBeNull()
  })

  it('client.email and client.image may be null or absent (wallet sign-ups have neither)', () => {
    const client = recordD().client as Record<string, unknown>
    expect(() => parse(queryRecord, recordD({ client: { ...client, email: null, image: null } }))).not.toThrow()
    const { email: _email, image: _image, ...rest } = client
    expect(() => parse(queryRecordWithStatus, recordL({ client: rest }))).not.toThrow()
  })
})

describe('fact hashes are read as sent: the gate judges their form', () => {
  it.each(['programHash', 'integrityFactHash', 'sharpFactHash'])(
    '%s: a malformed string does not fail the read; another type does',
    (field) => {
      expect(() => parse(queryRecordWithStatus, recordL({ [field]: '0xABCdef0123' }))).not.toThrow()
      for (const bad of ['abc', '0x', '0xZZ', `0x${'1'.repeat(65)}`]) {
        expect(parse(queryRecordWithStatus, recordL({ [field]: bad })).data).toHaveProperty(field, bad)
      }
      expectNamed(parseError(queryRecordWithStatus, recordL({ [field]: 12 })), field)
    },
  )
})

describe('bounds', () => {
  it.each(['retryCount', 'bucketJobIndex'])('%s is a 32-bit signed integer', (field) => {
    expect(parse(queryRecordWithStatus, recordR({ [field]: 2_147_483_647 })).data).toHaveProperty(field, 2_147_483_647)
    expect(parse(queryRecordWithStatus, recordR({ [field]: -2_147_483_648 })).data).toHaveProperty(
      field,
      -2_147_483_648,
    )
    expectNamed(parseError(queryRecordWithStatus, recordR({ [field]: 2_147_483_648 })), field)
    expectNamed(parseError(queryRecordWithStatus, recordR({ [field]: -2_147_483_649 })), field)
    expectNamed(parseError(queryRecordWithStatus, recordR({ [field]: 1.5 })), field)
  })

  it('bucketJobIndex bound holds in D and L too', () => {
    expectNamed(parseError(queryRecord, recordD({ bucketJobIndex: 2_147_483_648 })), 'bucketJobIndex')
    expectNamed(parseError(queryRecordWithStatus, recordL({ bucketJobIndex: 2_147_483_648 })), 'bucketJobIndex')
  })

  it("submittedByWallet longer than the table's 64 characters is not the client's business: it parses", () => {
    expect(() => parse(queryRecordWithStatus, recordR({ submittedByWallet: 'a'.repeat(65) }))).not.toThrow()
  })

  it('createdAt and completedAt must be ISO 8601 date-times', () => {
    for (const good of ['2025-06-01T12:00:00Z', '2025-06-01T12:00:00.123Z', '2025-06-01T14:00:00+02:00']) {
      expect(() => parse(queryRecordWithStatus, recordR({ createdAt: good, completedAt: good }))).not.toThrow()
    }
    for (const bad of ['yesterday', '2025-13-01T00:00:00Z', '2025-06-01', '1717243200000']) {
      expectNamed(parseError(queryRecordWithStatus, recordR({ createdAt: bad })), 'createdAt')
      expectNamed(parseError(queryRecordWithStatus, recordL({ completedAt: bad })), 'completedAt')
    }
    expectNamed(parseError(queryRecordWithStatus, recordR({ createdAt: 1_717_243_200_000 })), 'createdAt')
  })
})

describe('tolerance: unknown enum values and extra fields pass with a debug note', () => {
  it('status QUEUED is accepted and noted, naming the field', () => {
    const { data, debug } = parse(docsQueryResponse, { provingQuery: recordL({ status: 'QUEUED' }), metadataUrls: [] })
    expect(data.provingQuery.status).toBe('QUEUED')
    expect(debug).toHaveLength(1)
    expect(debug[0]).toContain('"QUEUED"')
    expect(debug[0]).toContain('provingQuery.status')
  })

  it('chain SOLANA is accepted and noted, naming the field', () => {
    const { data, debug } = parse(queryRecordWithStatus, recordR({ chain: 'SOLANA' }))
    expect(data.chain).toBe('SOLANA')
    expect(debug.join('\n')).toMatch(/"SOLANA".*"chain"/)
  })

  it('an unknown value in each enum-typed field of R is accepted and noted', () => {
    for (const field of [
      'status',
      'layout',
      'chain',
      'jobSize',
      'declaredJobSize',
      'cairoVm',
      'cairoVersion',
      'result',
      'network',
      'hints',
      'sharpProver',
    ]) {
      const { data, debug } = parse(queryRecordWithStatus, recordR({ [field]: 'SOMETHING_NEW' }))
      expect(data).toHaveProperty(field, 'SOMETHING_NEW')
      expect(debug.join('\n'), field).toContain(`"${field}"`)
    }
  })

  it('a step not seen before is accepted (step is an open string)', () => {
    expect(parse(queryRecordWithStatus, recordL({ step: 'NEW_STEP' })).data.step).toBe('NEW_STEP')
  })

  it('an extra field is accepted, kept and noted by name', () => {
    const { data, debug } = parse(queryResponse, {
      provingQuery: recordD({ priority: 'high' }),
      metadataUrls: [],
      requestId: 'r-1',
    })
    expect((data.provingQuery as Record<string, unknown>).priority).toBe('high')
    const notes = debug.join('\n')
    expect(notes).toContain('provingQuery.priority')
    expect(notes).toContain('requestId')
  })

  it('extra fields are noted in R too (the spec says it has none)', () => {
    const { debug } = parse(queryRecordWithStatus, recordR({ priority: 'high' }))
    expect(debug.join('\n')).toContain('"priority"')
  })
})

describe('wrong types are rejected with a message naming the field', () => {
  it.each([
    ['retryCount', '3'],
    ['isFactMocked', 'true'],
    ['isJobSizeValid', 1],
    ['steps', 'TRACE_GENERATION'],
    ['steps', [1, 2]],
    ['status', 3],
    ['bucketJobIndex', '0'],
    ['id', 17],
  ])('R.%s = %j', (field, value) => {
    const error = parseError(retryResponse, {
      provingQuery: recordR({ [field]: value }),
      message: 'Query retry initiated',
    })
    expectNamed(error, `provingQuery.${field}`)
    expect(error.message).toContain('does not match the specification')
  })

  it('isFactMocked "true" in L is rejected (a string must not pass a mock check)', () => {
    expectNamed(parseError(queryRecordWithStatus, recordL({ isFactMocked: 'true' })), 'isFactMocked')
  })

  it('a wrong type in the client object is rejected', () => {
    expectNamed(
      parseError(queryRecord, recordD({ client: { ...(recordD().client as object), isEmailVerified: 'yes' } })),
      'client.isEmailVerified',
    )
  })

  it('list total must be a non-negative integer', () => {
    expectNamed(parseError(docsQueryListResponse, { provingQueries: [], total: '3' }), 'total')
  })
})
