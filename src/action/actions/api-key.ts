/**
 * `api-key/`: signs in to the account service with a wallet (EIP-712 challenge, bearer session)
 * and hands the next steps an API key: the project's key (`data[0].apiKey`; a first-time wallet
 * gets a Personal project with one), or a newly minted one with `create-key`. The private key
 * is masked before anything else happens, and the key is masked before the output is set.
 */
import { AbortedError, InvalidInputError } from '../../core/errors.ts'
import { describeServiceFailure, type ServiceText } from '../steps/failure.ts'
import { API_KEY_INPUTS, parseInputs, requireSecretAndUrl } from '../steps/inputs.ts'
import { loggerFor, writeSummary } from '../steps/io.ts'
import { API_KEY_OUTPUTS, OutputWriter } from '../steps/outputs.ts'
import { renderSummary, runUrl, type Ending } from '../steps/summary.ts'
import type { ActionIO, RunOptions } from '../types.ts'

type OutputName = (typeof API_KEY_OUTPUTS)[number]

const requireAccountService = requireSecretAndUrl(
  {
    input: 'private-key',
    message: '`private-key` is required: pass the wallet\'s key from a secret, e.g. `private-key: ${{ secrets.PROVING_WALLET_KEY }}`.',
  },
  { input: 'auth-url', service: 'account service' },
)

export async function run(io: ActionIO, options: RunOptions = {}): Promise<void> {
  const signal = options.signal ?? new AbortController().signal
  // Before anything can print it: the raw input, and the forms it is normalised to.
  const rawKey = io.getInput('private-key')
  io.setSecret(rawKey)
  if (rawKey.startsWith('0x') || rawKey.startsWith('0X')) io.setSecret(rawKey.slice(2))
  else if (rawKey) io.setSecret(`0x${rawKey}`)
  const outputs = new OutputWriter<Exclude<OutputName, 'api-key'>>(io)
  let close: (() => Promise<void>) | undefined
  let wallet: string | undefined
  let projectId: string | undefined
  let keyName: string | undefined
  const report = async (end: Ending) => {
    await writeSummary(
      io,
      renderSummary({
        action: 'API key',
        rows: [
          ['Wallet', { code: wallet }],
          ['Project', { code: projectId }],
          ['Key', keyName ? `new key "${keyName}", in the \`api-key\` output (masked)` : wallet ? 'the project\'s key, in the `api-key` output (masked)' : undefined],
        ],
        runUrl: runUrl(io.env),
        ...end,
      }),
    )
    if (end.failure) io.setFailed(end.failure)
  }
  try {
    const inputs = parseInputs(io, API_KEY_INPUTS, requireAccountService)
    const { AccountClient } = await import('../../clients/account.ts')
    close = async () => (await import('../../core/http.ts')).closeDefaultDispatcher()
    let account
    try {
      account = new AccountClient({ baseUrl: inputs['auth-url']!, privateKey: inputs['private-key'], logger: loggerFor(io) })
    } catch (error) {
      if (error instanceof InvalidInputError && error.input === 'privateKey') {
        throw new InvalidInputError(error.shortMessage.replace('The private key', '`private-key`'), { input: 'private-key' })
      }
      throw error
    }
    const session = await account.signIn({ signal })
    wallet = session.wallet
    projectId = inputs['project-id'] ?? session.projectId
    outputs.set({ wallet, 'project-id': projectId })
    io.info(`Signed in as ${wallet}${projectId ? `; project ${projectId}` : ''}.`)

    let apiKey: string
    if (inputs['create-key']) {
      keyName = inputs['create-key']
      const record = await account.createApiKey({ name: keyName, projectId, signal })
      apiKey = record.apiKey
    } else {
      apiKey = await account.getApiKey({ projectId, signal })
    }
    // Masked first, then set: the runner never shows it, not even in the step's debug log.
    io.setSecret(apiKey)
    io.setOutput('api-key', apiKey, { secret: true })
    await report({
      outcome: 'passed',
      headline: keyName ? `Minted API key "${keyName}" for ${wallet}.` : `Got the API key of ${wallet}'s project.`,
    })
  } catch (error) {
    await report(describeFailure(error))
  } finally {
    await close?.().catch(() => {})
  }
}

const ACCOUNT_SERVICE: ServiceText = {
  service: 'account service',
  urlInput: 'auth-url',
  // The account service has no api-key to check: a 401 is the wallet's sign-in, a 403 or 404 the project.
  statusAdvice: (status) =>
    status === 401
      ? 'The account service refused the sign-in: check that `private-key` is the wallet\'s key, and `auth-url` the right deployment.'
      : status === 403 || status === 404
        ? 'Check `project-id`: it must be a project of this wallet.'
        : undefined,
  networkDetails: false,
}

function describeFailure(error: unknown): Ending {
  if (error instanceof AbortedError) return { outcome: 'cancelled', headline: 'Cancelled while signing in.', failure: 'Cancelled while signing in.' }
  return describeServiceFailure(error, ACCOUNT_SERVICE)
}
