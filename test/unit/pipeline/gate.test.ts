import { describe, expect, it } from 'vitest'
import { evaluateGate, sameFelt, type GateRecord } from '../../../src/pipeline/gate.ts'
import type { FactCheckResult, FactField } from '../../../src/pie/index.ts'

const DONE: GateRecord = { status: 'DONE', programHash: '0x4f028ea2f2568d9b71509641f65cd3879482a371ab2a18d20ca7528d960dd45', isFactMocked: false }
const STRICT = { allowMockedFact: false }
const kinds = (refusals: { kind: string }[]) => refusals.map((refusal) => refusal.kind)

function mismatch(field: FactField, actual: string, expected: string): FactCheckResult {
  return { ok: false, programHashVariant: null, checked: [field], mismatches: [{ field, actual, expected }] }
}

describe('evaluateGate', () => {
  it('passes a DONE query with a real fact and no expectations', () => {
    expect(evaluateGate(DONE, undefined, STRICT)).toEqual([])
  })

  it('refuses a FAILED query with the service\'s reason, and nothing else', () => {
    const refusals = evaluateGate({ status: 'FAILED', errorReason: '  Prover ran out of memory. ', isFactMocked: true }, undefined, STRICT)
    expect(refusals).toEqual([{ kind: 'failed', message: 'The query FAILED: Prover ran out of memory..' }])
    expect(evaluateGate({ status: 'FAILED', errorReason: null }, undefined, STRICT)[0]!.message).toBe('The query FAILED: the service gave no reason.')
  })

  it('refuses a query that has not finished', () => {
    expect(evaluateGate({ status: 'IN_PROGRESS' }, undefined, STRICT)).toEqual([{ kind: 'not-done', message: 'The query is IN_PROGRESS, not DONE.' }])
  })

  it('refuses a mocked fact unless allowed', () => {
    const mocked = { ...DONE, isFactMocked: true }
    expect(kinds(evaluateGate(mocked, undefined, STRICT))).toEqual(['mocked-fact'])
    expect(evaluateGate(mocked, undefined, { allowMockedFact: true })).toEqual([])
    // Unknown (null) is not "mocked": production may send null before it knows.
    expect(evaluateGate({ ...DONE, isFactMocked: null }, undefined, STRICT)).toEqual([])
  })

  it('compares the program hash as a field element, and refuses a missing one when one is expected', () => {
    const expected = '0x04F028EA2F2568D9B71509641F65CD3879482A371AB2A18D20CA7528D960DD45'
    expect(evaluateGate(DONE, undefined, { allowMockedFact: false, expectedProgramHash: expected })).toEqual([])
    const other = evaluateGate(DONE, undefined, { allowMockedFact: false, expectedProgramHash: '0x1' })
    expect(other).toEqual([{ kind: 'program-hash', message: `The program hash is ${DONE.programHash}, not the expected 0x1.` }])
    expect(kinds(evaluateGate({ ...DONE, programHash: null }, undefined, { allowMockedFact: false, expectedProgramHash: '0x1' }))).toEqual(['program-hash'])
  })

  it('refuses facts that differ from the PIE, naming each field', () => {
    const refusals = evaluateGate(DONE, mismatch('sharpFactHash', '0xaa', '0xbb'), STRICT)
    expect(refusals).toEqual([
      { kind: 'fact-mismatch', message: 'What the service says it proved differs from the PIE: sharpFactHash: the service says 0xaa, the PIE gives 0xbb.' },
    ])
    expect(evaluateGate(DONE, { ok: true, programHashVariant: null, checked: ['sharpFactHash'], mismatches: [] }, STRICT)).toEqual([])
  })

  it('lists every reason at once, in a fixed order', () => {
    const refusals = evaluateGate({ ...DONE, isFactMocked: true }, mismatch('programHash', '0x1', '0x2'), { allowMockedFact: false, expectedProgramHash: '0x2' })
    expect(kinds(refusals)).toEqual(['mocked-fact', 'program-hash', 'fact-mismatch'])
  })
})

describe('sameFelt', () => {
  it('ignores case and leading zeros, and reads decimal', () => {
    expect(sameFelt('0x0aB', '0xab')).toBe(true)
    expect(sameFelt('171', '0xab')).toBe(true)
    expect(sameFelt(' 0xab ', '0xAB')).toBe(true)
  })

  it('never equates what is not a number', () => {
    expect(sameFelt('0xab', '0xac')).toBe(false)
    expect(sameFelt('', '')).toBe(false)
    expect(sameFelt('0xzz', '0xzz')).toBe(false)
    expect(sameFelt('-1', '-1')).toBe(false)
  })
})
