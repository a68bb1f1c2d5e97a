import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { run as runBucketClose } from '../../src/action/actions/bucket-close.ts'
import { run as runBucketCreate } from '../../src/action/actions/bucket-create.ts'
import { run as runMain } from '../../src/action/actions/main.ts'
import { run as runWait } from '../../src/action/actions/wait.ts'
import { computePieFacts } from '../../src/emulator/index.ts'
import { runCli } from '../helpers/cli.ts'
import { fakeIO, repoPath } from '../helpers/run-action.ts'
import type { Variant } from './bodies.ts'
import { type ProductionService, startProductionService } from './production-service.ts'

/**
 * The cases of cli-action*.test.ts, split in two files by variant so they run side by side (each
 * waits on its own production stand-in): the CLI and the actions' steps against production-shaped answers (test/contract/bodies.ts),
 * in each variant: `prove --wait`, `query wait/get/list`, the bucket commands, the root action,
 * the `wait` and `bucket-close` actions. The stand-in serves no /docs/ route, as production.
 */
const KEY = 'pk_contract_cli_58e1a4'
const PIE = repoPath('examples/fib/pie.zip')

/** Registers the cases for these variants, and with `nullFacts` the case of a DONE record with null facts. */
export function contractCases(variants: readonly Variant[], options: { nullFacts?: boolean } = {}): void {
  let service: ProductionService
  beforeAll(async () => {
    const facts = await computePieFacts(PIE)
    if ('invalid' in facts) throw new Error(facts.invalid)
    const { programHash, integrityFactHash, sharpFactHash } = facts
    service = await startProductionService({ facts: { programHash, integrityFactHash, sharpFactHash } })
  })
  afterAll(async () => {
    await service.close()
  })

  describe.each(variants)('%s bodies', (variant) => {
    const env = () => ({ PROVING_BASE_URL: service.url, PROVING_API_KEY: KEY })
    beforeEach(() => {
      service.variant = variant
    })
    // The nulls and minimal bodies null or leave out isFactMocked: a gate cannot tell a real fact
    // from a mocked one, so it refuses unless mocked facts are allowed (issue 23).
    const mockStateUnknown = variant === 'nulls' || variant === 'minimal'
    const unknownMessage = new RegExp(`isFactMocked is ${variant === 'nulls' ? 'null' : 'absent'}`)
    // The extras record says a result kind this version does not know (a verification on a new
    // chain): read without a failure, it is a proof to `query wait` and `wait`, which expect a proof
    // of any kind; `prove` and the root action asked the L2 endpoint for PROOF_VERIFICATION_ON_L2,
    // and the gate judges what was asked, never the record's word for it (issue 31).
    const otherKind = variant === 'extras'
    const otherKindMessage =
      'The query was asked for PROOF_VERIFICATION_ON_L2, but its record says its result is "PROOF_VERIFICATION_ON_SOME_NEW_CHAIN"'

    it('CLI: prove --wait ends DONE with the facts checked locally', async () => {
      const result = await runCli(['prove', PIE, '--wait'], { env: env() })
      expect(result.stdout).toMatch(/status\s+DONE/)
      expect(result.stderr).toMatch(/Facts checked locally/)
      if (mockStateUnknown) {
        expect(result.code, result.stderr).toBe(1)
        expect(result.stderr).toMatch(unknownMessage)
        const allowed = await runCli(['prove', PIE, '--wait', '--allow-mocked-fact'], { env: env() })
        expect(allowed.code, allowed.stderr).toBe(0)
      } else if (otherKind) {
        expect(result.code, result.stderr).toBe(1)
        expect(result.stderr).toContain(`proving: gate refused: ${otherKindMessage}`)
      } else {
        expect(result.code, result.stderr).toBe(0)
      }
    })

    it('CLI: query wait, query get and query list', async () => {
      const waited = await runCli(['query', 'wait', `cli-wait-${variant}`, '--json'], { env: env() })
      expect(JSON.parse(waited.stdout).provingQuery).toMatchObject({ id: `cli-wait-${variant}`, status: 'DONE' })
      if (mockStateUnknown) {
        // `query wait` gates as `prove --wait` does: an unknown mock state is refused unless allowed.
        expect(waited.code, waited.stderr).toBe(1)
        expect(waited.stderr).toMatch(unknownMessage)
        const allowed = await runCli(['query', 'wait', `cli-wait-${variant}`, '--allow-mocked-fact'], { env: env() })
        expect(allowed.code, allowed.stderr).toBe(0)
      } else {
        expect(waited.code, waited.stderr).toBe(0)
      }

      const got = await runCli(['query', 'get', `cli-wait-${variant}`], { env: env() })
      expect(got.code, got.stderr).toBe(0)
      expect(got.stdout).toMatch(/status\s+DONE/)

      const listed = await runCli(['query', 'list', '--all', '--json'], { env: env() })
      expect(listed.code, listed.stderr).toBe(0)
      expect(JSON.parse(listed.stdout).provingQueries).toHaveLength(3)
      expect(service.seen.some((request) => request.path.startsWith('/docs/proving-query/'))).toBe(false)
    })

    it('CLI: bucket create (--param), close and get', async () => {
      const created = await runCli(
        [
          'bucket',
          'create',
          '--aggregator-version',
          'v2',
          '--node-width',
          '4',
          '--param',
          'use_kzg_da=true',
          '--param',
          'layout=dynamic',
          '--json',
        ],
        { env: env() },
      )
      expect(created.code, created.stderr).toBe(0)
      expect(service.seen.at(-1)!.json).toEqual({
        aggregatorVersion: 'v2',
        nodeWidth: '4',
        aggregatorParams: { use_kzg_da: true, layout: 'dynamic' },
      })
      const id = JSON.parse(created.stdout).provingBucket.id as string
      const closed = await runCli(['bucket', 'close', id], { env: env() })
      expect(closed.code, closed.stderr).toBe(0)
      const got = await runCli(['bucket', 'get', id], { env: env() })
      expect(got.code, got.stderr).toBe(0)
      expect(got.stdout).toMatch(/status\s+DONE/)
    })

    it('Action: the root action proves to DONE with the facts verified', async () => {
      const io = fakeIO({ pie: PIE, 'api-key': KEY, 'base-url': service.url })
      await runMain(io)
      expect(io.outputs).toMatchObject({
        status: 'DONE',
        'facts-verified': 'true',
        'program-hash': service.facts!.programHash,
      })
      if (mockStateUnknown) {
        expect(io.failed).toMatch(unknownMessage)
        const allowed = fakeIO({ pie: PIE, 'api-key': KEY, 'base-url': service.url, 'allow-mocked-fact': 'true' })
        await runMain(allowed)
        expect(allowed.failed).toBeUndefined()
      } else if (otherKind) {
        expect(io.failed).toContain(otherKindMessage)
      } else {
        expect(io.failed).toBeUndefined()
      }
    })

    it('Action: bucket-create sends aggregator-params as an object and node-width as a string', async () => {
      const io = fakeIO({
        'aggregator-params': '{"use_kzg_da": true, "full_output": false}',
        'node-width': '4',
        'api-key': KEY,
        'base-url': service.url,
      })
      await runBucketCreate(io)
      expect(io.failed).toBeUndefined()
      expect(service.seen.at(-1)!.json).toMatchObject({
        nodeWidth: '4',
        aggregatorParams: { use_kzg_da: true, full_output: false },
      })
      const bad = fakeIO({ 'aggregator-params': 'use_kzg_da=true', 'api-key': KEY, 'base-url': service.url })
      await runBucketCreate(bad)
      expect(bad.failed).toMatch(/`aggregator-params` must be a JSON object/)
    })

    it('Action: the wait step follows a query to DONE; bucket-close closes', async () => {
      const io = fakeIO({
        'query-id': `action-wait-${variant}`,
        'api-key': KEY,
        'base-url': service.url,
        ...(mockStateUnknown ? { 'allow-mocked-fact': 'true' } : {}),
      })
      await runWait(io)
      expect(io.failed).toBeUndefined()
      expect(io.outputs).toMatchObject({ 'query-id': `action-wait-${variant}`, status: 'DONE' })
      if (mockStateUnknown) {
        const strict = fakeIO({ 'query-id': `action-wait-${variant}`, 'api-key': KEY, 'base-url': service.url })
        await runWait(strict)
        expect(strict.failed).toMatch(unknownMessage)
      }

      const close = fakeIO({
        'bucket-id': '0b4e6a1c-2d3f-4a5b-8c6d-7e8f9a0b1c2d',
        'api-key': KEY,
        'base-url': service.url,
      })
      await runBucketClose(close)
      expect(close.failed).toBeUndefined()
    })
  })

  if (options.nullFacts) {
    describe('a DONE record with its facts null (production nulls them)', () => {
      const env = () => ({ PROVING_BASE_URL: service.url, PROVING_API_KEY: KEY })
      let kept: ProductionService['facts']
      beforeEach(() => {
        service.variant = 'full'
        kept = service.facts
        service.facts = null
      })
      afterEach(() => {
        service.facts = kept
      })

      it('CLI: prove --wait refuses it (exit 1), naming the fields', async () => {
        const proved = await runCli(['prove', PIE, '--wait'], { env: env() })
        expect(proved.code, proved.stderr).toBe(1)
        expect(proved.stderr).toMatch(
          /gate refused: The service reported no programHash \(null\) for a DONE PROOF_VERIFICATION_ON_L2 result/,
        )
        expect(proved.stderr).toMatch(/neither sharpFactHash nor integrityFactHash/)
      })

      it("CLI: bucket close --wait reads the bucket's queries on production's path and gates them", async () => {
        // Production serves no /docs/ route: the gate reads GET /proving-query/{id} (it used to fail with a 404, exit 2).
        const since = service.seen.length
        const closed = await runCli(['bucket', 'close', '0b4e6a1c-2d3f-4a5b-8c6d-7e8f9a0b1c2d', '--wait'], {
          env: env(),
        })
        expect(closed.code, closed.stderr).toBe(1)
        expect(closed.stdout).toMatch(/Gate refused:/)
        const reads = service.seen.slice(since).map((request) => request.path)
        expect(reads.some((path) => /^\/proving-query\/[0-9a-f-]+$/.test(path))).toBe(true)
      })

      it('Action: the root action and wait fail the step; facts-verified is false', async () => {
        const io = fakeIO({ pie: PIE, 'api-key': KEY, 'base-url': service.url })
        await runMain(io)
        expect(io.failed).toMatch(/no programHash \(null\)/)
        expect(io.outputs['facts-verified']).toBe('false')
        const waited = fakeIO({ 'query-id': 'action-wait-null-facts', 'api-key': KEY, 'base-url': service.url })
        await runWait(waited)
        expect(waited.failed).toMatch(/no programHash \(null\)/)
      })
    })
  }
}
