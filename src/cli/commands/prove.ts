import { AbortedError, InvalidInputError } from '../../core/errors.ts'
import { checkEnum, checkOpenEnum } from '../../core/checks.ts'
import { L2_LAYOUTS, MEMORY_VERIFICATIONS, STONE_VERSIONS } from '../../schemas/proving.ts'
import { type CommandContext, type CommandSpec, SERVICE_OPTIONS, stringValue } from '../context.ts'
import { EXIT } from '../exit-codes.ts'
import { describeQuery, progressReporter, provingClientFrom, timeoutFrom } from '../services.ts'
import { preparePieForUpload, checkFactsAfterWait } from '../pie-steps.ts'
import { withLocalEmulator } from '../local-emulator.ts'

const WAIT_OPTIONS = {
  wait: { type: 'boolean', description: 'Wait for the query to finish (exit 0 DONE, 1 FAILED).' },
  timeout: {
    type: 'string',
    valueName: '<duration>',
    description: 'With --wait: give up after this long (90s, 30m, 2h).',
    default: '2h',
  },
  emulator: {
    type: 'boolean',
    description: 'Run against a built-in emulator started for this command (no address or key needed).',
  },
} as const

export const prove: CommandSpec = {
  path: ['prove'],
  args: '<pie>',
  summary: 'Submit a Cairo PIE (pie.zip or PIE directory) for L2 proof generation and verification.',
  details: [
    'A PIE directory is packed first; the PIE is validated before anything is uploaded.',
    'With --wait, the facts the service reports are checked against the ones computed locally.',
  ],
  positionals: { min: 1, max: 1 },
  options: {
    ...SERVICE_OPTIONS,
    ...WAIT_OPTIONS,
    layout: { type: 'string', valueName: '<layout>', description: `Cairo layout: ${L2_LAYOUTS.join(', ')} (another is sent with a warning).`, default: 'auto' },
    prover: { type: 'string', valueName: '<name>', description: 'Prover instance.', default: 'svc_sharp' },
    'mock-fact-hash': { type: 'boolean', description: 'Mock the fact hash: no real on-chain verification (testing).' },
  },
  async run(context) {
    // A layout this version does not know is sent as given (the service decides), with a warning.
    const layout = checkOpenEnum(stringValue(context, 'layout')!, '--layout', L2_LAYOUTS, context.logger)
    const prover = stringValue(context, 'prover')!.trim()
    if (!prover) throw new InvalidInputError('--prover must not be empty; omit it to use svc_sharp.', { input: '--prover' })
    const timeoutMs = timeoutFrom(context)
    return withLocalEmulator(context, async (service) => {
      const client = provingClientFrom(context, { needsKey: true, ...service })
      const pie = await preparePieForUpload(context, context.positionals[0]!)
      try {
        const { provingQueryId } = await client.submitPie({
          pieZip: pie.zipPath,
          layout,
          prover,
          mockFactHash: context.values['mock-fact-hash'] === true,
          signal: context.signal,
        })
        if (!context.values.wait) {
          context.print(`Submitted: query ${provingQueryId}\nFollow it with: proving query wait ${provingQueryId}`, { provingQueryId })
          return EXIT.ok
        }
        context.progress(`Submitted: query ${provingQueryId}`)
        const result = await waitReportingId(context, provingQueryId, () =>
          client.waitForQuery(provingQueryId, { timeoutMs, signal: context.signal, onProgress: progressReporter(context) }),
        )
        const factCheck = result.provingQuery.status === 'DONE' ? await checkFactsAfterWait(context, result, pie) : undefined
        context.print(describeQuery(result), factCheck ? { ...result, localFactCheck: factCheck.summary } : result)
        if (result.provingQuery.status !== 'DONE') return EXIT.remoteFailure
        return factCheck && !factCheck.ok ? EXIT.remoteFailure : EXIT.ok
      } finally {
        await pie.cleanup()
      }
    })
  },
}

export const verifyProof: CommandSpec = {
  path: ['verify-proof'],
  args: '<proof.json>',
  summary: 'Submit an existing proof file for verification on L2.',
  positionals: { min: 1, max: 1 },
  options: {
    ...SERVICE_OPTIONS,
    ...WAIT_OPTIONS,
    'stone-version': { type: 'string', valueName: '<stone5|stone6>', description: 'Prover version of the proof (shared-prover proofs need stone6).' },
    'memory-verification': {
      type: 'string',
      valueName: '<strict|relaxed|cairo1>',
      description: 'Memory verification: strict (preferred for Cairo 0), relaxed (some bootloaders), cairo1.',
    },
    'mock-fact-hash': { type: 'boolean', description: 'Mock the fact hash (testing).' },
  },
  async run(context) {
    for (const flag of ['stone-version', 'memory-verification']) {
      if (!stringValue(context, flag)) {
        throw new InvalidInputError(`--${flag} is required: see \`proving verify-proof --help\` for the allowed values.`, {
          input: `--${flag}`,
        })
      }
    }
    const stoneVersion = checkFlagEnum(context, 'stone-version', STONE_VERSIONS)
    const memoryVerification = checkFlagEnum(context, 'memory-verification', MEMORY_VERIFICATIONS)
    const timeoutMs = timeoutFrom(context)
    return withLocalEmulator(context, async (service) => {
      const client = provingClientFrom(context, { needsKey: true, ...service })
      const { provingQueryId } = await client.submitProofVerification({
        proof: context.positionals[0]!,
        stoneVersion,
        memoryVerification,
        mockFactHash: context.values['mock-fact-hash'] === true,
        signal: context.signal,
      })
      if (!context.values.wait) {
        context.print(`Submitted: query ${provingQueryId}`, { provingQueryId })
        return EXIT.ok
      }
      context.progress(`Submitted: query ${provingQueryId}`)
      const result = await waitReportingId(context, provingQueryId, () =>
        client.waitForQuery(provingQueryId, { timeoutMs, signal: context.signal, onProgress: progressReporter(context) }),
      )
      context.print(describeQuery(result), result)
      return result.provingQuery.status === 'DONE' ? EXIT.ok : EXIT.remoteFailure
    })
  },
}

/** On interruption or timeout, the query id is what a person needs to pick up the wait again. */
async function waitReportingId<T>(context: CommandContext, queryId: string, wait: () => Promise<T>): Promise<T> {
  try {
    return await wait()
  } catch (error) {
    if (context.json && error instanceof AbortedError) {
      context.io.stdout(`${JSON.stringify({ provingQueryId: queryId, interrupted: true })}\n`)
    }
    throw error
  }
}

function checkFlagEnum<T extends string>(context: CommandContext, flag: string, allowed: readonly T[]): T {
  const value = stringValue(context, flag) ?? ''
  try {
    return checkEnum(value, `--${flag}`, allowed)
  } catch (error) {
    throw new InvalidInputError((error as Error).message.split('\n')[0]!, { input: `--${flag}` })
  }
}
