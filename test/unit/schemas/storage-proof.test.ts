import { describe, expect, it } from 'vitest'
import {
  batchQueryBody,
  batchQueryResponse,
  batchQueryStatusResponse,
  checkBatchQueryBody,
  describeBatchQueryProblems,
} from '../../../src/schemas/storage-proof.ts'
import type { InvalidInputError } from '../../../src/core/errors.ts'
import { describeDeviations } from '../../../src/core/parse.ts'

const ACCOUNT = '0x75cec1db9dceb703200eaa6595f66885c962b920'

function validBody() {
  return {
    destinationChainId: '11155111',
    fee: '0',
    data: {
      '11155111': {
        'block:5382810': {
          accounts: {
            [ACCOUNT]: { props: ['BALANCE'], slots: [] as string[] },
          },
        },
      },
    },
  }
}

function problems(body: unknown): string[] {
  const result = batchQueryBody.safeParse(body)
  expect(result.success).toBe(false)
  return describeBatchQueryProblems(result.error!, 20)
}

describe('batch-query body', () => {
  it('accepts the shape of interface.md: chain -> block:<n> -> accounts -> props and slots', () => {
    expect(batchQueryBody.parse(validBody())).toEqual(validBody())
    const withSlots = validBody()
    withSlots.data['11155111']['block:5382810'].accounts[ACCOUNT] = {
      props: [],
      slots: ['0x0', `0x${'ab'.repeat(32)}`, '12'],
    }
    expect(batchQueryBody.safeParse(withSlots).success).toBe(true)
  })

  it('requires every field (contract.md)', () => {
    for (const field of ['destinationChainId', 'fee', 'data'] as const) {
      const body: Record<string, unknown> = validBody()
      delete body[field]
      expect(problems(body).join('\n')).toContain(field)
    }
  })

  it('names each malformed part by its path', () => {
    const list = problems({
      destinationChainId: '0xaa36a7',
      fee: 'free',
      data: {
        sepolia: {},
        '1': { 'block-5': {} },
        '10': { 'block:1': { accounts: { '12': { props: [], slots: [] } } } },
      },
    })
    const text = list.join('\n')
    expect(text).toMatch(/destinationChainId: must be a decimal chain id \("11155111"\) or a chain name/)
    expect(text).toMatch(/fee: must be a numeric string/)
    expect(text).toMatch(/data\.sepolia: the key "sepolia" must be a decimal chain id/)
    expect(text).toMatch(/data\.1\.block-5: the key "block-5" must be "block:<number>" or "timestamp:<unix seconds>"/)
    expect(text).toMatch(/data\.10\.block:1\.accounts\.12: the key "12" must be a 0x-prefixed hex address/)
  })

  it('accepts what production takes (production.md): chain names, timestamp blocks, slots-only accounts, header props', () => {
    const starknetAccount = `0x${'4'.repeat(63)}`
    const body = {
      destinationChainId: 'SN_SEPOLIA',
      fee: '0',
      data: {
        SN_SEPOLIA: { 'timestamp:1717243200': { accounts: { [starknetAccount]: { slots: ['0x1'] } } } },
        '11155111': { 'block:5382810': { accounts: { [ACCOUNT]: { props: ['BALANCE', 'TIMESTAMP', 'STATE_ROOT'] } } } },
      },
    }
    expect(batchQueryBody.safeParse(body).success).toBe(true)
  })

  it('refuses empty maps and an account that asks for nothing', () => {
    expect(problems({ ...validBody(), data: {} }).join()).toMatch(/data: names no chain/)
    expect(problems({ ...validBody(), data: { '1': {} } }).join()).toMatch(/data\.1: names no block/)
    expect(problems({ ...validBody(), data: { '1': { 'block:1': { accounts: {} } } } }).join()).toMatch(
      /accounts: names no account/,
    )
    const nothing = validBody()
    nothing.data['11155111']['block:5382810'].accounts[ACCOUNT] = { props: [], slots: [] }
    expect(problems(nothing).join()).toMatch(/asks for no props and no slots/)
  })

  it('refuses unknown fields in a request we build (a typo must not be dropped silently)', () => {
    expect(problems({ ...validBody(), destinationChain: '1' }).join()).toMatch(/destinationChain is not a known field/)
  })

  it('checkBatchQueryBody words an absent or mistyped field as a task body\'s check does: "x is required"', () => {
    const { destinationChainId: _, ...absent } = validBody()
    expect(() => checkBatchQueryBody({ ...absent, fee: 5 })).toThrow(
      'The batch query is malformed: destinationChainId is required (and 1 more, listed below); fix it before sending.',
    )
    try {
      checkBatchQueryBody({ ...absent, fee: 5 })
    } catch (error) {
      expect((error as InvalidInputError).metaMessages).toEqual([
        'destinationChainId is required',
        'fee must be a string, got number 5',
      ])
    }
    expect(() => checkBatchQueryBody({ ...validBody(), data: [] })).toThrow(/data must be an object, got an array/)
  })
})

describe('responses are tolerant', () => {
  it('internalId with extra fields', () => {
    const body = { internalId: 'bq-1', explorerUrl: 'https://x' }
    expect(batchQueryResponse.parse(body).internalId).toBe('bq-1')
    expect(describeDeviations(batchQueryResponse, body)).toEqual(['unexpected field "explorerUrl"'])
  })

  it('an unknown queryStatus parses and is noted', () => {
    const body = { queryStatus: 'QUEUED_ON_CHAIN' }
    expect(batchQueryStatusResponse.parse(body).queryStatus).toBe('QUEUED_ON_CHAIN')
    expect(describeDeviations(batchQueryStatusResponse, body).join()).toMatch(/unknown value "QUEUED_ON_CHAIN"/)
  })

  it('a wrong type is an error', () => {
    expect(batchQueryStatusResponse.safeParse({ queryStatus: 3 }).success).toBe(false)
    expect(batchQueryResponse.safeParse({ internalId: '' }).success).toBe(false)
  })
})
