import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { DEFAULT_TIMING } from '../../../../src/emulator/proving/lifecycle.ts'
import { createQuery, findByDedupId, queriesOfBucket } from '../../../../src/emulator/proving/queries.ts'
import { holdsJobIndex, newestFirst, nextJobIndex, queryIndex } from '../../../../src/emulator/proving/query-index.ts'
import { emptyState, type EmulatorState, type StoredQuery } from '../../../../src/emulator/state.ts'

/**
 * The emulator's query indexes answer what the scans they replaced answered: the first query of
 * a key with a dedupId, a bucket's queries by job index (ties in creation order), a key's list
 * page newest first with or without a filter, the queries of an Integrity fact. Whether the index
 * was built before the queries arrived (kept by createQuery) or after (built from the state).
 */

type Spec = {
  key: number
  dedup: number | null
  bucket: number | null
  jobIndex: number | null
  network: 'SEPOLIA' | 'MAINNET' | null
  fact: number
  externalId: string | null
}

const spec: fc.Arbitrary<Spec> = fc.record({
  key: fc.nat(3),
  dedup: fc.option(fc.nat(6)),
  bucket: fc.option(fc.nat(3)),
  jobIndex: fc.option(fc.nat(5)),
  network: fc.constantFrom('SEPOLIA' as const, 'MAINNET' as const, null),
  fact: fc.nat(4),
  externalId: fc.option(fc.constantFrom('alpha', 'Beta', 'gamma-1', 'ALPHA-2')),
})

const owner = (n: number) => ({ keyId: `key${n}`, projectId: `project-key${n}`, clientId: `client-key${n}` })

function store(state: EmulatorState, specs: Spec[]): StoredQuery[] {
  return specs.map((s, n) =>
    createQuery(
      state,
      {
        owner: owner(s.key),
        endpoint: 'general',
        externalId: s.externalId,
        dedupId: s.dedup === null ? null : `dedup-${s.dedup}`,
        layout: 'recursive',
        mockFactHash: false,
        result: 'PROOF_GENERATION',
        network: s.network,
        cairoVm: 'rust',
        cairoVersion: 'cairo0',
        sharpProver: null,
        hints: null,
        bucketId: s.bucket === null ? null : `bucket-${s.bucket}`,
        bucketJobIndex: s.bucket === null ? null : s.jobIndex,
        isProofMocked: false,
        // Some facts written with leading zeros or in capitals: the index keys the value.
        facts: {
          programHash: '0x1',
          sharpFactHash: null,
          integrityFactHash: [`0x${s.fact}`, `0x000${s.fact}`, `0X${s.fact}`][n % 3]!,
          output: null,
          nSteps: null,
        },
        declaredJobSize: null,
      },
      n,
      `query-${n}`,
    ),
  )
}

describe('the emulator query index', () => {
  it('answers as the scans did, built before or after the queries arrive', () => {
    fc.assert(
      fc.property(
        fc.array(spec, { maxLength: 40 }),
        fc.boolean(),
        fc.nat(12),
        fc.integer({ min: 1, max: 10 }),
        (specs, buildFirst, offset, limit) => {
          const state = emptyState(DEFAULT_TIMING)
          if (buildFirst) queryIndex(state)
          store(state, specs)
          const all = Object.values(state.queries)
          for (let key = 0; key < 4; key++) {
            for (let dedup = 0; dedup < 7; dedup++) {
              const scanned = all.find(
                (query) => query.dedupId === `dedup-${dedup}` && query.owner.keyId === `key${key}`,
              )
              expect(findByDedupId(state, owner(key), `dedup-${dedup}`)).toBe(scanned)
            }
            const mine = all.filter((query) => query.owner.keyId === `key${key}`).reverse()
            const unfiltered = newestFirst(queryIndex(state).byOwner.get(`key${key}`) ?? [], offset, limit, null)
            expect(unfiltered).toEqual({ page: mine.slice(offset, offset + limit), total: mine.length })
            const onSepolia = (query: StoredQuery) =>
              query.network === 'SEPOLIA' && (query.externalId ?? '').toLowerCase().includes('alpha')
            const filtered = newestFirst(queryIndex(state).byOwner.get(`key${key}`) ?? [], offset, limit, onSepolia)
            const scannedFiltered = mine.filter(onSepolia)
            expect(filtered).toEqual({
              page: scannedFiltered.slice(offset, offset + limit),
              total: scannedFiltered.length,
            })
          }
          for (let bucket = 0; bucket < 4; bucket++) {
            const scanned = all
              .filter((query) => query.bucketId === `bucket-${bucket}`)
              .sort((a, b) => (a.bucketJobIndex ?? 0) - (b.bucketJobIndex ?? 0))
            expect(queriesOfBucket(state, `bucket-${bucket}`)).toEqual(scanned)
          }
          for (let fact = 0; fact < 5; fact++) {
            const scanned = all.filter((query) => BigInt(query.facts.integrityFactHash!) === BigInt(fact))
            expect(queryIndex(state).byIntegrityFact.get(BigInt(fact).toString(16)) ?? []).toEqual(scanned)
          }
          expect(queryIndex(state).all).toEqual(all)
        },
      ),
      { numRuns: 300, seed: Number(process.env.FC_SEED ?? 35) },
    )
  })

  it("answers a submission's job index questions as the scan of the bucket did (taken? next?)", () => {
    fc.assert(
      fc.property(fc.array(spec, { maxLength: 40 }), fc.nat(7), (specs, asked) => {
        const state = emptyState(DEFAULT_TIMING)
        store(state, specs)
        for (let bucket = 0; bucket < 4; bucket++) {
          const joined = queriesOfBucket(state, `bucket-${bucket}`)
          // The scan the submission route made (queries without an index count as -1).
          const used = joined.map((query) => query.bucketJobIndex ?? -1)
          expect(holdsJobIndex(joined, asked)).toBe(used.includes(asked))
          expect(nextJobIndex(joined)).toBe(used.reduce((next, index) => Math.max(next, index + 1), 0))
        }
      }),
      { numRuns: 300, seed: Number(process.env.FC_SEED ?? 35) },
    )
  })

  it("reads a few of a bucket's queries per submission, not all of them", () => {
    const state = emptyState(DEFAULT_TIMING)
    const specs = Array.from(
      { length: 10_000 },
      (_, n): Spec => ({ key: 0, dedup: null, bucket: 0, jobIndex: n, network: null, fact: 1, externalId: null }),
    )
    store(state, specs)
    let reads = 0
    const joined = new Proxy(queriesOfBucket(state, 'bucket-0') as StoredQuery[], {
      get(target, property, receiver) {
        if (typeof property === 'string' && /^\d+$/.test(property)) reads++
        return Reflect.get(target, property, receiver)
      },
    })
    expect(nextJobIndex(joined)).toBe(10_000)
    expect(holdsJobIndex(joined, 4_321)).toBe(true)
    expect(holdsJobIndex(joined, 10_000)).toBe(false)
    expect(reads).toBeLessThan(60)
  })

  it('starts anew with a new state (a reset or a reload brings a new queries object)', () => {
    const first = emptyState(DEFAULT_TIMING)
    store(first, [{ key: 0, dedup: 1, bucket: null, jobIndex: null, network: null, fact: 1, externalId: null }])
    expect(findByDedupId(first, owner(0), 'dedup-1')?.id).toBe('query-0')
    const second = emptyState(DEFAULT_TIMING)
    expect(findByDedupId(second, owner(0), 'dedup-1')).toBeUndefined()
    expect(queryIndex(second).all).toEqual([])
  })
})
