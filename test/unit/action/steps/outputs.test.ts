import { describe, expect, it } from 'vitest'
import { bucketOutputs, OutputWriter, queryOutputs } from '../../../../src/action/steps/outputs.ts'
import type { QueryResult } from '../../../../src/clients/proving.ts'

function result(overrides: Record<string, unknown> = {}): QueryResult {
  return {
    provingQuery: {
      id: 'q-1',
      status: 'DONE',
      step: 'PROOF_VERIFICATION_ON_L2',
      programHash: '0xabc',
      integrityFactHash: '0x1',
      sharpFactHash: '0x2',
      isFactMocked: false,
      errorReason: null,
      ...overrides,
    } as never,
    metadataUrls: ['https://svc.example/q-1/proof.json', 'https://svc.example/q-1/metadata.json'],
  }
}

describe('queryOutputs', () => {
  it('maps a DONE record to the output names', () => {
    expect(queryOutputs(result())).toEqual({
      'query-id': 'q-1',
      status: 'DONE',
      step: 'PROOF_VERIFICATION_ON_L2',
      'program-hash': '0xabc',
      'integrity-fact-hash': '0x1',
      // bytes32 on chain: 0x and 64 hex digits; the felts keep their minimal form (issue 31).
      'sharp-fact-hash': `0x${'0'.repeat(63)}2`,
      'is-fact-mocked': 'false',
      'metadata-urls': '["https://svc.example/q-1/proof.json","https://svc.example/q-1/metadata.json"]',
    })
  })

  it('leaves unset what the record leaves null, and carries the error reason of a FAILED query', () => {
    const outputs = queryOutputs(
      result({
        status: 'FAILED',
        step: null,
        programHash: null,
        integrityFactHash: null,
        sharpFactHash: null,
        isFactMocked: null,
        errorReason: 'TRACE_GENERATION failed',
      }),
    )
    expect(outputs).toEqual({
      'query-id': 'q-1',
      status: 'FAILED',
      'metadata-urls': expect.any(String),
      'error-reason': 'TRACE_GENERATION failed',
    })
    expect(JSON.parse(outputs['metadata-urls']!)).toHaveLength(2)
  })

  it('writes the SHARP fact in its 32-byte form whatever case or leading zeros the service used; felts stay minimal; malformed text is left as the service wrote it', () => {
    const outputs = queryOutputs(
      result({ sharpFactHash: '0x00ABCdef', programHash: '0x0abc', integrityFactHash: '0x01' }),
    )
    expect(outputs['sharp-fact-hash']).toBe(`0x${'0'.repeat(58)}abcdef`)
    expect(outputs['program-hash']).toBe('0x0abc')
    expect(outputs['integrity-fact-hash']).toBe('0x01')
    expect(queryOutputs(result({ sharpFactHash: `0x1${'0'.repeat(64)}` }))['sharp-fact-hash']).toBe(
      `0x1${'0'.repeat(64)}`,
    )
    expect(queryOutputs(result({ sharpFactHash: 'not a hash' }))['sharp-fact-hash']).toBe('not a hash')
  })

  it('is-fact-mocked is the string true for a mocked fact', () => {
    expect(queryOutputs(result({ isFactMocked: true }))['is-fact-mocked']).toBe('true')
  })
})

describe('bucketOutputs', () => {
  it('gives the id, the leaves and the record as JSON', () => {
    const bucket = { id: 'b-1', leaves: 3, mockProof: false, externalId: null } as never
    const outputs = bucketOutputs(bucket)
    expect(outputs['bucket-id']).toBe('b-1')
    expect(outputs.leaves).toBe('3')
    expect(JSON.parse(outputs.bucket!)).toEqual(bucket)
  })
})

describe('OutputWriter', () => {
  it('writes each value once, again only when it changes, and skips unknown values', () => {
    const calls: [string, string][] = []
    const writer = new OutputWriter({ setOutput: (name, value) => void calls.push([name, value]) })
    writer.set({ status: 'RECEIVED', step: undefined })
    writer.set({ status: 'RECEIVED' })
    writer.set({ status: 'DONE', 'query-id': 'q' })
    expect(calls).toEqual([
      ['status', 'RECEIVED'],
      ['status', 'DONE'],
      ['query-id', 'q'],
    ])
    expect(writer.values).toEqual({ status: 'DONE', 'query-id': 'q' })
    expect(writer.get('step')).toBeUndefined()
  })
})
