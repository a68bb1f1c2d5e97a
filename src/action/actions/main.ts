/**
 * The root action: pack (a directory) -> validate -> submit for L2 proof generation and
 * verification -> `query-id` at once -> wait -> check the facts locally -> gate -> outputs and
 * job summary -> (with `decommit-destination-chain-id`, once the gate passed) a decommitment
 * task for the query, with its own outputs and summary section. Never throws: every ending sets
 * the outputs known so far, writes the summary and, unless the gate passed, marks the step
 * failed.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { evaluateGate, sameFelt } from '../../pipeline/gate.ts'
import { booleanValue, MAIN_INPUTS, mainCrossCheck, parseInputs } from '../steps/inputs.ts'
import { loggerFor } from '../steps/io.ts'
import { loadClient } from '../steps/lazy.ts'
import { verifyOnchain } from '../steps/onchain.ts'
import { registerOnchainSecrets } from '../steps/onchain-inputs.ts'
import { checkFactsForStep, preparePieForStep } from '../steps/pie-step.ts'
import { QueryStep } from '../steps/query-step.ts'
import { artifactUrl } from '../steps/summary.ts'
import type { ActionIO, InputValues, RunOptions } from '../types.ts'

type MainInputs = InputValues<typeof MAIN_INPUTS>

export async function run(io: ActionIO, options: RunOptions = {}): Promise<void> {
  const signal = options.signal ?? new AbortController().signal
  // Before anything else can print or send it.
  io.setSecret(io.getInput('api-key'))
  registerOnchainSecrets(io)
  let inputs: MainInputs
  try {
    inputs = parseInputs(io, MAIN_INPUTS, mainCrossCheck)
  } catch (error) {
    const emulator = booleanValue.safeParse(io.getInput('emulator') || 'false')
    await new QueryStep(io, { action: 'Prove', signal, emulated: emulator.success ? emulator.data : undefined }).fail(error)
    return
  }
  const step = new QueryStep(io, {
    action: 'Prove',
    signal,
    emulated: inputs.emulator,
    baseUrl: inputs['base-url'],
    timeoutMinutes: inputs['timeout-minutes'],
  })
  step.expectedProgramHash = inputs['expected-program-hash']
  if (inputs['mock-fact-hash'] && !inputs['allow-mocked-fact']) {
    io.warning('`mock-fact-hash` is true but `allow-mocked-fact` is false: the gate will refuse the mocked result. Set `allow-mocked-fact: true` for a dry run.')
  }
  if (inputs.emulator && !inputs.wait) {
    io.warning('`wait: false` with `emulator: true`: the emulator stops with this step, so nothing can wait for the query later.')
  }
  if (inputs['decommit-destination-chain-id'] && !inputs.wait) {
    io.warning('`decommit-destination-chain-id` with `wait: false`: the decommitment follows a DONE proof, so none is submitted. Use the `decommit` sub-action once the query is DONE.')
  }
  if (inputs['tasks-url'] && !inputs['decommit-destination-chain-id']) {
    io.warning('`tasks-url` is only used with `decommit-destination-chain-id`; it is ignored.')
  }
  let closeEmulator: (() => Promise<void>) | undefined
  try {
    await prove(io, inputs, step, signal, (close) => (closeEmulator = close))
  } catch (error) {
    await step.fail(error)
  } finally {
    await closeEmulator?.().catch(() => {})
  }
}

async function prove(
  io: ActionIO,
  inputs: MainInputs,
  step: QueryStep,
  signal: AbortSignal,
  onEmulator: (close: () => Promise<void>) => void,
): Promise<void> {
  const services = await loadClient()
  const logger = loggerFor(io)
  let baseUrl = inputs['base-url']
  let apiKey = inputs['api-key']
  if (inputs.emulator) {
    // A throwaway key unless one was given: the emulator accepts what it was started with.
    apiKey ??= `emulator-${randomBytes(12).toString('hex')}`
    io.setSecret(apiKey)
    const { startEmulator } = await import('../../emulator/index.ts')
    // The emulator's own request log is debug noise in a CI log.
    const emulator = await startEmulator({ host: '127.0.0.1', port: 0, apiKeys: [apiKey], logger: { ...logger, info: logger.debug } })
    onEmulator(() => emulator.close())
    baseUrl = emulator.url
    io.info(`Running against the built-in emulator at ${emulator.url}: nothing is proved or verified for real.`)
  }
  const client = services.provingClient({ baseUrl: baseUrl!, apiKey, logger, allowInsecureHttp: inputs['allow-insecure-http'] === true })

  const pie = await preparePieForStep(io, step, inputs.pie, {
    signal,
    inspect: inputs['verify-facts'] || inputs['expected-program-hash'] !== undefined,
  })

  // The program is known before paying for a proof: refuse the wrong one now.
  const expected = inputs['expected-program-hash']
  if (expected && pie.inspection) {
    const matches = Object.values(pie.inspection.programHashes).some((hash) => sameFelt(hash, expected))
    if (!matches) {
      await step.report({
        outcome: 'failed',
        headline: 'The PIE is not the expected program; nothing was submitted.',
        problems: [
          `The PIE's program hash is ${pie.inspection.programHash} (Pedersen; Poseidon ${pie.inspection.programHashes.poseidon}), not the expected ${expected}.`,
        ],
        nextSteps: ['Check that `pie` comes from the program you meant to release, and that `expected-program-hash` is that program\'s hash.'],
        failure: `The PIE's program hash is ${pie.inspection.programHash}, not the expected ${expected}; nothing was submitted.`,
      })
      return
    }
  }

  const { provingQueryId } = await client.submitPie({
    pieZip: pie.zipPath,
    layout: inputs.layout,
    prover: inputs.prover,
    mockFactHash: inputs['mock-fact-hash'],
    signal,
  })
  step.submitted(provingQueryId)

  if (!inputs.wait) {
    step.facts = { kind: 'skipped', reason: '`wait` is false' }
    await step.report({
      outcome: 'submitted',
      headline: `Submitted query ${provingQueryId}; not waiting for it (\`wait: false\`).`,
      nextSteps: ['Follow the query with the `wait` sub-action and its `query-id`; it applies the same gate.'],
    })
    return
  }

  const result = await step.wait(client, provingQueryId, inputs['timeout-minutes'] * 60_000)
  const record = result.provingQuery
  let factCheck
  if (record.status === 'DONE' && inputs['verify-facts']) {
    factCheck = await checkFactsForStep(io, step, record, pie)
  } else {
    step.facts = { kind: 'skipped', reason: record.status !== 'DONE' ? `the query is ${record.status}` : '`verify-facts` is false' }
  }
  step.outputs.set({ 'facts-verified': String(factCheck?.ok === true) })

  const refusals = evaluateGate(record, factCheck, {
    allowMockedFact: inputs['allow-mocked-fact'],
    expectedProgramHash: expected,
  })
  if (inputs['upload-artifacts']) await uploadArtifacts(io, step, inputs['artifact-name'], pie.zipPath, io.env.RUNNER_TEMP || tmpdir(), signal)
  refusals.push(...(await verifyOnchain(io, step, inputs, record, refusals, { signal, emulatorUrl: inputs.emulator ? baseUrl : undefined })))
  const destinationChainId = inputs['decommit-destination-chain-id']
  if (destinationChainId) {
    step.extraRows.push([
      'Decommitment',
      refusals.length ? 'not submitted: the gate refused the result' : `to chain ${destinationChainId}, submitted next (see "Decommit" below)`,
    ])
  }
  await step.finishGate(
    refusals,
    `Query ${provingQueryId} is DONE${record.isFactMocked ? ' with a mocked fact (allowed)' : ''}${factCheck?.ok ? ', and the facts match the PIE' : ''}.`,
  )
  if (destinationChainId && refusals.length === 0) {
    // Its own summary section and outputs (task-uuid, task-status, ...); a failure fails the step,
    // and is the step's `error-reason` too.
    const { decommitAfterProof } = await import('./decommit.ts')
    const failing: ActionIO = {
      ...io,
      setFailed: (message) => {
        step.outputs.set({ 'error-reason': message })
        io.setFailed(message)
      },
    }
    await decommitAfterProof(failing, {
      // The emulator serves the task service on its own address.
      tasksUrl: inputs.emulator ? baseUrl! : inputs['tasks-url']!,
      apiKey,
      provingQueryId,
      destinationChainId,
      wait: true,
      timeoutMinutes: inputs['timeout-minutes'],
      signal,
    })
  }
}

/** pie.zip and proof.json as one artifact; a failure warns and never fails the gate. */
async function uploadArtifacts(
  io: ActionIO,
  step: QueryStep,
  name: string,
  pieZip: string,
  runnerTemp: string,
  signal: AbortSignal,
): Promise<void> {
  const services = await loadClient()
  const folder = join(runnerTemp, 'proving-kit', `artifact-${randomUUID()}`)
  const files = [pieZip]
  const proofUrl = step.metadataUrls.find((url) => new URL(url, 'http://x').pathname.endsWith('/proof.json'))
  try {
    if (proofUrl) {
      const proof = join(folder, 'download', 'proof.json')
      const { mkdir } = await import('node:fs/promises')
      await mkdir(join(folder, 'download'), { recursive: true })
      await services.downloadFile(proofUrl, proof, signal)
      files.push(proof)
    } else if (step.record?.status === 'DONE') {
      io.warning('The query lists no proof.json among its metadata URLs; uploading pie.zip alone.')
    }
    const { uploadArtifact } = await import('../steps/artifacts.ts')
    const uploaded = await uploadArtifact(name, files, join(folder, 'upload'))
    io.info(`Uploaded artifact "${name}" (${uploaded.files.join(', ')}).`)
    const url = uploaded.id === undefined ? undefined : artifactUrl(io.env, uploaded.id)
    if (url) step.artifacts.push({ label: `${name} (${uploaded.files.join(', ')})`, url })
    else step.artifactNote = `uploaded as "${name}" (${uploaded.files.join(', ')})`
  } catch (error) {
    const message = (error as Error).message.split('\n')[0]
    io.warning(`Could not upload the artifacts (${message}); the gate is not affected.`)
    step.artifactNote = `upload failed: ${message}`
  }
}
