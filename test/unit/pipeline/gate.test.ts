import { describe, expect, it } from 'vitest'
import {
  afterOnChainCheck,
  ANY_PROOF,
  evaluateGate,
  expectResult,
  requiredFacts,
  resultHasFact,
  sameFelt,
  showValue,
  type GateRecord,
} from '../../../src/pipeline/gate.ts'
import type { FactCheckResult, FactField } from '../../../src/pie/index.ts'

const DONE: GateRecord = {
  status: 'DONE',
  result: 'PROOF_VERIFICATION_ON_L2',
  programHash: '0x4f028ea2f2568d9b71509641f65cd3879482a371ab2a18d20ca7528d960dd45',
  sharpFactHash: '0x5a1',
  integrityFactHash: '0x1e9',
  isFactMocked: false,
}
/** The root action's L2 endpoint asks for PROOF_VERIFICATION_ON_L2. */
const L2 = expectResult('PROOF_VERIFICATION_ON_L2')
const STRICT = { allowMockedFact: false, expected: L2 }
const TRACE = expectResult('TRACE_GENERATION')
const kinds = (refusals: { kind: string }[]) => refusals.map((refusal) => refusal.kind)

function mismatch(field: FactField, actual: string, expected: string): FactCheckResult {
  return { ok: false, programHashVariant: null, checked: [field], mismatches: [{ field, actual, expected }] }
}

describe('evaluateGate', () => {
  it('passes a DONE query with a real fact and no expectations', () => {
    expect(evaluateGate(DONE, undefined, STRICT)).toEqual([])
  })

  it("refuses a FAILED query with the service's reason, and nothing else", () => {
    const refusals = evaluateGate(
      { status: 'FAILED', errorReason: '  Prover ran out of memory. ', isFactMocked: true },
      undefined,
      STRICT,
    )
    expect(refusals).toEqual([{ kind: 'failed', message: 'The query FAILED: Prover ran out of memory..' }])
    expect(evaluateGate({ status: 'FAILED', errorReason: null }, undefined, STRICT)[0]!.message).toBe(
      'The query FAILED: the service gave no reason.',
    )
  })

  it('refuses a query that has not finished', () => {
    expect(evaluateGate({ status: 'IN_PROGRESS' }, undefined, STRICT)).toEqual([
      { kind: 'not-done', message: 'The query is IN_PROGRESS, not DONE.' },
    ])
  })

  it('refuses a mocked fact unless allowed', () => {
    const mocked = { ...DONE, isFactMocked: true }
    expect(kinds(evaluateGate(mocked, undefined, STRICT))).toEqual(['mocked-fact'])
    expect(evaluateGate(mocked, undefined, { allowMockedFact: true, expected: L2 })).toEqual([])
  })

  it('refuses an unknown mock state (null or absent) unless mocked facts are allowed', () => {
    const nulled = evaluateGate({ ...DONE, isFactMocked: null }, undefined, STRICT)
    expect(kinds(nulled)).toEqual(['mock-state-unknown'])
    expect(nulled[0]!.message).toMatch(/isFactMocked is null/)
    const { isFactMocked: _, ...absent } = DONE
    expect(evaluateGate(absent, undefined, STRICT)[0]!.message).toMatch(/isFactMocked is absent/)
    expect(evaluateGate({ ...DONE, isFactMocked: null }, undefined, { allowMockedFact: true, expected: L2 })).toEqual(
      [],
    )
    // A trace asked for proves nothing: whether its (absent) fact is mocked does not matter.
    expect(
      evaluateGate({ status: 'DONE', result: 'TRACE_GENERATION', isFactMocked: null }, undefined, {
        ...STRICT,
        expected: TRACE,
      }),
    ).toEqual([])
  })

  it('refuses a DONE proof whose facts are all null, naming the fields, whatever the local check says', () => {
    const empty = { ...DONE, programHash: null, sharpFactHash: null, integrityFactHash: null }
    const refusals = evaluateGate(empty, undefined, STRICT)
    expect(kinds(refusals)).toEqual(['fact-missing', 'fact-missing'])
    expect(refusals[0]!.message).toMatch(/no programHash \(null\)/)
    expect(refusals[1]!.message).toMatch(/neither sharpFactHash nor integrityFactHash/)
    // The library's own check no longer calls nothing compared a match.
    const nothing: FactCheckResult = { ok: false, programHashVariant: null, checked: [], mismatches: [] }
    expect(kinds(evaluateGate(empty, nothing, STRICT))).toEqual(['fact-missing', 'fact-missing'])
    // Absent fields count as null.
    expect(kinds(evaluateGate({ status: 'DONE', isFactMocked: false }, undefined, STRICT))).toEqual([
      'fact-missing',
      'fact-missing',
    ])
  })

  it('refuses a program hash kept alone: it is shared by every run of the program and binds no output', () => {
    const refusals = evaluateGate({ ...DONE, sharpFactHash: null, integrityFactHash: undefined }, undefined, STRICT)
    expect(refusals).toEqual([
      {
        kind: 'fact-missing',
        message:
          "The service reported neither sharpFactHash nor integrityFactHash for a DONE PROOF_VERIFICATION_ON_L2 result: no fact binds the program's output, so nothing shows what was proved.",
      },
    ])
  })

  it('requires the fact of the registry the result is verified in', () => {
    expect(requiredFacts('PROOF_VERIFICATION_ON_L1')).toEqual({ all: ['programHash', 'sharpFactHash'], oneOf: [] })
    expect(requiredFacts('PROOF_VERIFICATION_ON_L2', 'stone')).toEqual({
      all: ['programHash', 'integrityFactHash'],
      oneOf: [],
    })
    expect(requiredFacts('PROOF_VERIFICATION_ON_L2', 'stwo')).toEqual({
      all: ['programHash', 'sharpFactHash'],
      oneOf: [],
    })
    expect(requiredFacts('PROOF_GENERATION')).toEqual({
      all: ['programHash'],
      oneOf: ['sharpFactHash', 'integrityFactHash'],
    })
    expect(requiredFacts(undefined)).toEqual({ all: ['programHash'], oneOf: ['sharpFactHash', 'integrityFactHash'] })
    expect(requiredFacts('TRACE_GENERATION')).toEqual({ all: [], oneOf: [] })
    expect(resultHasFact('TRACE_AND_METADATA_GENERATION')).toBe(false)
    expect(resultHasFact(undefined)).toBe(true)

    const l1 = { ...DONE, result: 'PROOF_VERIFICATION_ON_L1', sharpFactHash: null }
    expect(evaluateGate(l1, undefined, { ...STRICT, expected: expectResult('PROOF_VERIFICATION_ON_L1') })).toEqual([
      {
        kind: 'fact-missing',
        message:
          'The service reported no sharpFactHash (null) for a DONE PROOF_VERIFICATION_ON_L1 result, so there is nothing to check it against.',
      },
    ])
    const stone = { ...DONE, sharpProver: 'stone', integrityFactHash: null }
    expect(evaluateGate(stone, undefined, STRICT)[0]!.message).toMatch(
      /no integrityFactHash \(null\) for a DONE PROOF_VERIFICATION_ON_L2 \(stone\) result/,
    )
    // The kind asked for stands in for a record that nulls its own.
    const unknownKind = { ...DONE, result: null, sharpFactHash: null, integrityFactHash: '0x1e9' }
    expect(
      evaluateGate(unknownKind, undefined, { ...STRICT, expected: expectResult('PROOF_VERIFICATION_ON_L1') }),
    ).toEqual([
      {
        kind: 'fact-missing',
        message:
          'The service reported no sharpFactHash (null) for a DONE PROOF_VERIFICATION_ON_L1 result, so there is nothing to check it against.',
      },
    ])
  })

  it('refuses a malformed hash by name, quoted as data', () => {
    const garbled = { ...DONE, sharpFactHash: 'not\u001b[31m hex`|' }
    const refusals = evaluateGate(garbled, undefined, STRICT)
    expect(kinds(refusals)).toEqual(['fact-malformed'])
    expect(refusals[0]!.message).toBe(
      'The service\'s sharpFactHash is not a 0x hex hash of at most 64 digits (it says "not\\u001b[31m hex`|"), so it cannot be compared.',
    )
    expect(kinds(evaluateGate({ ...DONE, programHash: `0x${'1'.repeat(65)}` }, undefined, STRICT))).toEqual([
      'fact-malformed',
    ])
  })

  it('lets a trace asked for through without facts', () => {
    expect(
      evaluateGate({ status: 'DONE', result: 'TRACE_GENERATION', isFactMocked: false }, undefined, {
        ...STRICT,
        expected: TRACE,
      }),
    ).toEqual([])
    expect(
      evaluateGate({ status: 'DONE', result: null, isFactMocked: false }, undefined, { ...STRICT, expected: TRACE }),
    ).toEqual([])
  })

  it('compares the program hash as a field element, and refuses a missing one when one is expected', () => {
    const expected = '0x04F028EA2F2568D9B71509641F65CD3879482A371AB2A18D20CA7528D960DD45'
    expect(
      evaluateGate(DONE, undefined, { allowMockedFact: false, expected: L2, expectedProgramHash: expected }),
    ).toEqual([])
    const other = evaluateGate(DONE, undefined, { allowMockedFact: false, expected: L2, expectedProgramHash: '0x1' })
    expect(other).toEqual([
      { kind: 'program-hash', message: `The program hash is ${DONE.programHash}, not the expected 0x1.` },
    ])
    expect(
      kinds(
        evaluateGate({ ...DONE, programHash: null }, undefined, {
          allowMockedFact: false,
          expected: L2,
          expectedProgramHash: '0x1',
        }),
      ),
    ).toEqual(['fact-missing', 'program-hash'])
  })

  it('refuses facts that differ from the PIE, naming each field', () => {
    const refusals = evaluateGate(DONE, mismatch('sharpFactHash', '0xaa', '0xbb'), STRICT)
    expect(refusals).toEqual([
      {
        kind: 'fact-mismatch',
        message:
          'What the service says it proved differs from the PIE: sharpFactHash: the service says 0xaa, the PIE gives 0xbb.',
      },
    ])
    expect(
      evaluateGate(DONE, { ok: true, programHashVariant: null, checked: ['sharpFactHash'], mismatches: [] }, STRICT),
    ).toEqual([])
  })

  it('lists every reason at once, in a fixed order', () => {
    const refusals = evaluateGate({ ...DONE, isFactMocked: true }, mismatch('programHash', '0x1', '0x2'), {
      allowMockedFact: false,
      expected: L2,
      expectedProgramHash: '0x2',
    })
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

describe("refusals quote the service's result kind and prover as one line of data", () => {
  it('a result or prover holding a line break and an escape cannot forge a second line in a message', () => {
    const record: GateRecord = {
      ...DONE,
      sharpFactHash: null,
      integrityFactHash: null,
      result: 'X\nproving: facts match\u001b[2K',
      sharpProver: 'stwo\r\n::notice::forged',
    }
    const messages = evaluateGate(record, undefined, STRICT).map((refusal) => refusal.message)
    expect(messages.length).toBeGreaterThan(0)
    for (const message of messages) {
      expect(message).not.toMatch(/[\r\n\u001b]/)
    }
    expect(messages.join(' ')).toContain('X\\nproving: facts match')
  })
})

describe('the one-line messages the gate gives users', () => {
  it('names the input that lets a mocked fact through', () => {
    expect(evaluateGate({ ...DONE, isFactMocked: true }, undefined, STRICT)).toEqual([
      {
        kind: 'mocked-fact',
        message: 'The fact is mocked: nothing was verified on chain, and `allow-mocked-fact` is false.',
      },
    ])
  })

  it('says a missing program hash cannot be checked against the expected one, and names it', () => {
    const stwo = { ...DONE, programHash: undefined, sharpProver: 'stwo' }
    expect(evaluateGate(stwo, undefined, { ...STRICT, expectedProgramHash: '0x4f028ea2' })).toEqual([
      {
        kind: 'fact-missing',
        message:
          'The service reported no programHash (absent) for a DONE PROOF_VERIFICATION_ON_L2 (stwo) result, so there is nothing to check it against.',
      },
      {
        kind: 'program-hash',
        message: 'The service reported no program hash, so it cannot be checked against the expected 0x4f028ea2.',
      },
    ])
  })

  it("names a proof of any kind (query wait's default) as such when the record does not say which", () => {
    expect(
      evaluateGate({ status: 'DONE', isFactMocked: false, sharpFactHash: '0x5a1' }, undefined, {
        ...STRICT,
        expected: ANY_PROOF,
      }),
    ).toEqual([
      {
        kind: 'fact-missing',
        message:
          'The service reported no programHash (absent) for a DONE a proof (PROOF_GENERATION or PROOF_VERIFICATION_ON_*) result, so there is nothing to check it against.',
      },
    ])
  })

  it('lists every fact that differs from the PIE in one message, separated by semicolons', () => {
    const both: FactCheckResult = {
      ok: false,
      programHashVariant: 'pedersen',
      checked: ['programHash', 'sharpFactHash', 'integrityFactHash'],
      mismatches: [
        { field: 'sharpFactHash', actual: '0xaa', expected: '0xbb' },
        { field: 'integrityFactHash', actual: 'garbled\n', expected: '0xcc' },
      ],
    }
    expect(evaluateGate(DONE, both, STRICT)).toEqual([
      {
        kind: 'fact-mismatch',
        message:
          'What the service says it proved differs from the PIE: sharpFactHash: the service says 0xaa, the PIE gives 0xbb; integrityFactHash: the service says "garbled\\n", the PIE gives 0xcc.',
      },
    ])
  })
})

describe('a local check that compared no fact', () => {
  const nothing: FactCheckResult = { ok: false, programHashVariant: null, checked: [], mismatches: [] }
  const message =
    'The service reported no fact to compare with the PIE (sharpFactHash and integrityFactHash are null or absent).'

  it('is refused even when the record looks complete', () => {
    expect(evaluateGate(DONE, nothing, STRICT)).toEqual([{ kind: 'fact-missing', message }])
  })

  it('is refused beside other refusals that say nothing about the facts', () => {
    expect(evaluateGate({ ...DONE, isFactMocked: true }, nothing, STRICT)).toEqual([
      {
        kind: 'mocked-fact',
        message: 'The fact is mocked: nothing was verified on chain, and `allow-mocked-fact` is false.',
      },
      { kind: 'fact-missing', message },
    ])
  })

  it('is not refused twice when the record already lacks or garbles its facts', () => {
    const garbled = { ...DONE, sharpFactHash: 'zz', integrityFactHash: null }
    expect(kinds(evaluateGate(garbled, nothing, STRICT))).toEqual(['fact-malformed'])
    const missing = { ...DONE, sharpFactHash: null, integrityFactHash: null }
    expect(kinds(evaluateGate(missing, nothing, STRICT))).toEqual(['fact-missing'])
  })
})

describe('which facts a result kind requires', () => {
  it('takes the prover into account only for L2 verification', () => {
    const either = { all: ['programHash'], oneOf: ['sharpFactHash', 'integrityFactHash'] }
    expect(requiredFacts('PROOF_GENERATION', 'stone')).toEqual(either)
    expect(requiredFacts('PROOF_GENERATION', 'stwo')).toEqual(either)
    expect(requiredFacts('PROOF_VERIFICATION_ON_L1', 'stone')).toEqual({
      all: ['programHash', 'sharpFactHash'],
      oneOf: [],
    })
  })

  it('reads a prover as a known name in any letter case (stone, stwo, stwoHerodotus), nothing else', () => {
    expect(requiredFacts('PROOF_VERIFICATION_ON_L2', 'stwoHerodotus')).toEqual({
      all: ['programHash', 'sharpFactHash'],
      oneOf: [],
    })
    expect(requiredFacts('PROOF_VERIFICATION_ON_L2', 'STWOHERODOTUS')).toEqual({
      all: ['programHash', 'sharpFactHash'],
      oneOf: [],
    })
    expect(requiredFacts('PROOF_VERIFICATION_ON_L2', 'Stone')).toEqual({
      all: ['programHash', 'integrityFactHash'],
      oneOf: [],
    })
    // Another name narrows nothing: its requirement is an absent prover's, and the gate refuses it (below).
    for (const other of ['halo', 'nostwo', 'stwo_v2', 'st\u043ene', 'stone ']) {
      expect(requiredFacts('PROOF_VERIFICATION_ON_L2', other), other).toEqual({
        all: ['programHash'],
        oneOf: ['sharpFactHash', 'integrityFactHash'],
      })
    }
  })

  it('refuses an L2 proof whose record names a prover it does not know, a lookalike included, naming it with its escapes', () => {
    // A Cyrillic о in "stone", and only the SHARP fact: before, either fact passed.
    const lookalike = { ...DONE, sharpProver: 'st\u043ene', integrityFactHash: null }
    expect(evaluateGate(lookalike, undefined, STRICT)).toEqual([
      {
        kind: 'unknown-prover',
        message:
          'The record names its prover "st\\u043ene", not a prover this version knows (stone, stwo, stwoHerodotus, in any letter case): which fact binds the output (Stone\'s Integrity, Stwo\'s SHARP) cannot be told.',
      },
    ])
    expect(kinds(evaluateGate({ ...DONE, sharpProver: 'stwo_v2' }, undefined, STRICT))).toEqual(['unknown-prover'])
    expect(evaluateGate({ ...DONE, sharpProver: 7 as unknown as string }, undefined, STRICT)[0]!.message).toMatch(
      /^The record gives its prover \(sharpProver\) as 7, not text,/,
    )
    // Known in any case, or absent (records L and D carry none): judged as before.
    expect(evaluateGate({ ...DONE, sharpProver: 'STONE', sharpFactHash: null }, undefined, STRICT)).toEqual([])
    expect(evaluateGate({ ...DONE, sharpProver: null, integrityFactHash: null }, undefined, STRICT)).toEqual([])
    // Where the prover decides nothing (L1, PROOF_GENERATION), it is not read.
    expect(
      evaluateGate({ ...DONE, result: null, sharpProver: 'st\u043ene' }, undefined, {
        ...STRICT,
        expected: expectResult('PROOF_VERIFICATION_ON_L1'),
      }),
    ).toEqual([])
    expect(
      evaluateGate({ ...DONE, result: null, sharpProver: 'st\u043ene' }, undefined, {
        ...STRICT,
        expected: expectResult('PROOF_GENERATION'),
      }),
    ).toEqual([])
  })

  it('passes a proof of either registry that carries only one of the two facts', () => {
    expect(evaluateGate({ ...DONE, sharpFactHash: null }, undefined, STRICT)).toEqual([])
    expect(evaluateGate({ ...DONE, integrityFactHash: undefined }, undefined, STRICT)).toEqual([])
  })

  it('does not judge the fact fields of a trace asked for, which proves nothing', () => {
    const trace: GateRecord = {
      status: 'DONE',
      result: 'TRACE_GENERATION',
      isFactMocked: false,
      sharpFactHash: 'not a hash',
      programHash: null,
    }
    expect(evaluateGate(trace, undefined, { ...STRICT, expected: TRACE })).toEqual([])
  })
})

describe('what counts as a well-formed hash', () => {
  it('is the whole value, 0x and hex digits, never a hash found inside other text', () => {
    expect(kinds(evaluateGate({ ...DONE, sharpFactHash: 'zz0x5a1' }, undefined, STRICT))).toEqual(['fact-malformed'])
    expect(kinds(evaluateGate({ ...DONE, sharpFactHash: '0x5a1 and more' }, undefined, STRICT))).toEqual([
      'fact-malformed',
    ])
  })

  it('is a string: an array holding one (a garbled record) is malformed and shown quoted', () => {
    const refusals = evaluateGate({ ...DONE, sharpFactHash: ['0x5a1'] as unknown as string }, undefined, STRICT)
    expect(refusals).toEqual([
      {
        kind: 'fact-malformed',
        message:
          'The service\'s sharpFactHash is not a 0x hex hash of at most 64 digits (it says "[\\"0x5a1\\"]"), so it cannot be compared.',
      },
    ])
  })
})

describe('showValue', () => {
  it('shows a well-formed hash as it is, and cuts other text after 80 characters', () => {
    expect(showValue('0xAbC')).toBe('0xAbC')
    expect(showValue('x'.repeat(80))).toBe(`"${'x'.repeat(80)}"`)
    expect(showValue(`${'y'.repeat(80)}z`)).toBe(`"${'y'.repeat(80)}…"`)
    expect(showValue(null)).toBe('"null"')
  })
})

describe("the kind asked for, never the record's word for it (issue 31)", () => {
  const switchedOff: GateRecord = {
    status: 'DONE',
    result: 'TRACE_GENERATION',
    isFactMocked: false,
    programHash: null,
    sharpFactHash: null,
    integrityFactHash: null,
  }

  it('refuses a DONE record that says TRACE_GENERATION, with null facts, when a proof was asked for: naming both kinds', () => {
    const refusals = evaluateGate(switchedOff, undefined, STRICT)
    expect(kinds(refusals)).toEqual(['wrong-kind', 'fact-missing', 'fact-missing'])
    expect(refusals[0]!.message).toBe(
      'The query was asked for PROOF_VERIFICATION_ON_L2, but its record says its result is "TRACE_GENERATION": the gate judges what was asked, not the service\'s word for it.',
    )
    // With every fact allowed to be mocked and the program hash echoed, it is still refused.
    const echoed = { ...switchedOff, programHash: DONE.programHash }
    expect(
      kinds(
        evaluateGate(echoed, undefined, {
          allowMockedFact: true,
          expected: L2,
          expectedProgramHash: DONE.programHash!,
        }),
      ),
    ).toEqual(['wrong-kind', 'fact-missing'])
    // query wait's default: a proof of any kind.
    expect(evaluateGate(switchedOff, undefined, { ...STRICT, expected: ANY_PROOF })[0]!.message).toMatch(
      /asked for a proof \(PROOF_GENERATION or PROOF_VERIFICATION_ON_\*\), but its record says its result is "TRACE_GENERATION"/,
    )
  })

  it('refuses another proof kind, an odd spelling or a value of another type as the result', () => {
    for (const result of [
      'PROOF_VERIFICATION_ON_L1',
      'proof_verification_on_l2',
      ' PROOF_VERIFICATION_ON_L2',
      'PROOF_VERIFICATION_ON_MOON',
      7,
      true,
      ['PROOF_VERIFICATION_ON_L2'],
    ]) {
      const refusals = evaluateGate({ ...DONE, result: result as string }, undefined, STRICT)
      expect(kinds(refusals), String(result)).toEqual(['wrong-kind'])
    }
    // Null or absent claims nothing (production may null it): the kind asked for is judged.
    expect(evaluateGate({ ...DONE, result: null }, undefined, STRICT)).toEqual([])
    // A proof of any kind takes a verification on a chain this version does not know yet, as a proof.
    expect(
      evaluateGate({ ...DONE, result: 'PROOF_VERIFICATION_ON_SOME_NEW_CHAIN' }, undefined, {
        ...STRICT,
        expected: ANY_PROOF,
      }),
    ).toEqual([])
    for (const result of [
      'PROOF_VERIFICATION_ON_',
      'proof_verification_on_moon',
      'TRACE_GENERATION',
      'PROOF_GENERATION_V2',
    ]) {
      expect(kinds(evaluateGate({ ...DONE, result }, undefined, { ...STRICT, expected: ANY_PROOF })), result).toEqual([
        'wrong-kind',
      ])
    }
  })

  it("refuses a trace's step on a proof, in any case, and a step that is not text", () => {
    expect(evaluateGate({ ...DONE, step: 'TRACE_GENERATION' }, undefined, STRICT)[0]!.message).toBe(
      'The query was asked for PROOF_VERIFICATION_ON_L2, but its record says its step is "TRACE_GENERATION", a trace, not a proof.',
    )
    expect(kinds(evaluateGate({ ...DONE, step: ' trace_and_metadata_generation ' }, undefined, STRICT))).toEqual([
      'wrong-kind',
    ])
    expect(kinds(evaluateGate({ ...DONE, step: 3 as unknown as string }, undefined, STRICT))).toEqual(['wrong-kind'])
    // A proof's steps, a step this version does not know, or none: not judged.
    for (const step of ['PROOF_VERIFICATION_ON_L2', 'FACT_HASH_REGISTRATION', 'SOME_NEW_STEP', null, undefined]) {
      expect(evaluateGate({ ...DONE, step }, undefined, STRICT), String(step)).toEqual([])
    }
  })

  it("refuses a proof's result or step on a trace asked for", () => {
    const trace = { status: 'DONE', result: 'TRACE_GENERATION', isFactMocked: false }
    expect(
      kinds(evaluateGate({ ...trace, result: 'PROOF_GENERATION' }, undefined, { ...STRICT, expected: TRACE })),
    ).toEqual(['wrong-kind'])
    expect(
      evaluateGate({ ...trace, step: 'PROOF_GENERATION' }, undefined, { ...STRICT, expected: TRACE })[0]!.message,
    ).toMatch(/asked for TRACE_GENERATION, but its record says its step is "PROOF_GENERATION", past a trace/)
    expect(evaluateGate({ ...trace, step: 'TRACE_GENERATION' }, undefined, { ...STRICT, expected: TRACE })).toEqual([])
  })

  it('quotes what the record claims as one line of data', () => {
    const message = evaluateGate({ ...DONE, result: 'X\n::error::forged\u001b[2J' }, undefined, STRICT)[0]!.message
    expect(message).not.toMatch(/[\r\n\u001b]/)
    expect(message).toContain('"X\\n::error::forged\\u001b[2J"')
  })
})

describe('the bucket whose listing names the query', () => {
  const IN_B1 = { ...STRICT, expected: ANY_PROOF, bucketId: 'b-1' }

  it('passes a record that names it, and refuses one that names another, naming both', () => {
    expect(evaluateGate({ ...DONE, bucketId: 'b-1' }, undefined, IN_B1)).toEqual([])
    expect(evaluateGate({ ...DONE, bucketId: 'b-2' }, undefined, IN_B1)).toEqual([
      {
        kind: 'other-bucket',
        message:
          "The query is in bucket b-2 by its own record, not in bucket b-1, whose listing names it: the gate trusts the query's record, not the listing.",
      },
    ])
  })

  it('refuses a record in no bucket, of another type, or a lookalike id, showing which', () => {
    const said = (bucketId: unknown) =>
      evaluateGate({ ...DONE, bucketId } as GateRecord, undefined, IN_B1).map(
        (refusal) => refusal.message.split(' by its own record')[0],
      )
    expect(said(null)).toEqual(['The query is in no bucket (bucketId is null)'])
    expect(said(undefined)).toEqual(['The query is in no bucket (bucketId is absent)'])
    expect(said(7)).toEqual(['The query is in no bucket (bucketId is 7, not text)'])
    expect(said({ id: 'b-1' })).toEqual(['The query is in no bucket (bucketId is {"id":"b-1"}, not text)'])
    expect(said('b\u20101')).toEqual(['The query is in bucket "b\\u20101"'])
    expect(said('b-1 ')).toEqual(['The query is in bucket "b-1 "'])
    expect(said('B-1')).toEqual(['The query is in bucket B-1'])
  })

  it('holds in every state: a FAILED or unfinished query of another bucket is refused as both', () => {
    expect(kinds(evaluateGate({ status: 'FAILED', errorReason: 'boom', bucketId: 'b-2' }, undefined, IN_B1))).toEqual([
      'failed',
      'other-bucket',
    ])
    expect(kinds(evaluateGate({ status: 'IN_PROGRESS', bucketId: null }, undefined, IN_B1))).toEqual([
      'not-done',
      'other-bucket',
    ])
  })

  it('is not judged outside a bucket gate', () => {
    expect(evaluateGate({ ...DONE, bucketId: 'b-2' }, undefined, STRICT)).toEqual([])
  })
})

describe('afterOnChainCheck', () => {
  const unknown = { kind: 'mock-state-unknown' as const, message: 'unknown' }
  const missing = { kind: 'fact-missing' as const, message: 'missing' }
  const offChain = { kind: 'not-on-chain' as const, message: 'not registered' }

  it('settles an unknown mock state by a registration in the real registry, and nothing else', () => {
    expect(afterOnChainCheck([unknown], { refusals: [], registered: true })).toEqual([])
    expect(afterOnChainCheck([unknown, missing], { refusals: [], registered: true })).toEqual([missing])
  })

  it("keeps every refusal without a registration, and adds the check's own", () => {
    expect(afterOnChainCheck([unknown], { refusals: [], registered: false })).toEqual([unknown])
    expect(afterOnChainCheck([unknown], { refusals: [offChain], registered: false })).toEqual([unknown, offChain])
    expect(afterOnChainCheck([], { refusals: [offChain], registered: true })).toEqual([offChain])
  })
})
