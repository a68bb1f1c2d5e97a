/**
 * `api-key/`: signs in to the account service with a wallet (EIP-712 challenge, bearer session)
 * and hands the next steps an API key: the project's key (`data[0].apiKey`; a first-time wallet
 * gets a Personal project with one), or a newly minted one with `create-key`. The private key
 * is masked before anything else happens, and the key is masked before the output is set.
 */
import { AbortedError, InvalidInputError } from '../../core/errors.ts'
import { describeServiceFailure, type ServiceText } from '../steps/failure.ts'
import { defineAction } from '../steps/define-action.ts'
import { API_KEY_INPUTS, requireSecretAndUrl } from '../steps/inputs.ts'
import { loggerFor } from '../steps/io.ts'
import type { API_KEY_OUTPUTS } from '../steps/outputs.ts'
import { Step, type StepOptions } from '../steps/step.ts'
import type { Ending, SummaryValue } from '../steps/summary.ts'

type OutputName = (typeof API_KEY_OUTPUTS)[number]

const requireAccountService = requireSecretAndUrl(
  {
    input: 'private-key',
    message:
      "`private-key` is required: pass the wallet's key from a secret, e.g. `private-key: ${{ secrets.PROVING_WALLET_KEY }}`.",
  },
  { input: 'auth-url', service: 'account service' },
)

/** The sign-in's step: wallet, project and key in the summary (the key itself never). */
class ApiKeyStep extends Step<StepOptions, Exclude<OutputName, 'api-key'>> {
  wallet: string | undefined
  projectId: string | undefined
  keyName: string | undefined

  override rows(): [string, SummaryValue][] {
    return [
      ['Wallet', { code: this.wallet }],
      ['Project', { code: this.projectId }],
      [
        'Key',
        this.keyName
          ? `new key "${this.keyName}", in the \`api-key\` output (masked)`
          : this.wallet
            ? "the project's key, in the `api-key` output (masked)"
            : undefined,
      ],
      ...this.extraRows,
    ]
  }

  protected describe(error: unknown): Ending {
    return describeFailure(error)
  }
}

export const run = defineAction({
  inputs: API_KEY_INPUTS,
  crossCheck: requireAccountService,
  // Before anything can print it: the raw input, and the forms it is normalised to.
  secrets: (io) => {
    const rawKey = io.getInput('private-key')
    io.setSecret(rawKey)
    if (rawKey.startsWith('0x') || rawKey.startsWith('0X')) io.setSecret(rawKey.slice(2))
    else if (rawKey) io.setSecret(`0x${rawKey}`)
  },
  step: (io, signal) => new ApiKeyStep(io, { action: 'API key', signal }),
  async work({ io, signal, inputs, step }) {
    const { AccountClient } = await import('../../clients/account.ts')
    step.onClose(async () => (await import('../../core/http.ts')).closeDefaultDispatcher())
    let account
    try {
      account = new AccountClient({
        baseUrl: inputs['auth-url']!,
        privateKey: inputs['private-key'],
        logger: loggerFor(io),
        allowInsecureHttp: inputs['allow-insecure-http'],
      })
    } catch (error) {
      if (error instanceof InvalidInputError && error.input === 'privateKey') {
        throw new InvalidInputError(error.shortMessage.replace('The private key', '`private-key`'), {
          input: 'private-key',
          metaMessages: error.metaMessages,
        })
      }
      throw error
    }
    const session = await account.signIn({ signal })
    const wallet = session.wallet
    const projectId = inputs['project-id'] ?? session.projectId
    step.wallet = wallet
    step.projectId = projectId
    step.outputs.set({ wallet, 'project-id': projectId })
    io.info(`Signed in as ${wallet}${projectId ? `; project ${projectId}` : ''}.`)

    let apiKey: string
    const keyName = inputs['create-key']
    if (keyName) {
      step.keyName = keyName
      const record = await account.createApiKey({ name: keyName, projectId, signal })
      apiKey = record.apiKey
    } else {
      apiKey = await account.getApiKey({ projectId, signal })
    }
    // Masked first, then set: the runner never shows it, not even in the step's debug log.
    io.setSecret(apiKey)
    io.setOutput('api-key', apiKey, { secret: true })
    await step.report({
      outcome: 'passed',
      headline: keyName ? `Minted API key "${keyName}" for ${wallet}.` : `Got the API key of ${wallet}'s project.`,
    })
  },
})

const ACCOUNT_SERVICE: ServiceText = {
  service: 'account service',
  urlInput: 'auth-url',
  // The account service has no api-key to check: a 401 is the wallet's sign-in, a 403 or 404 the project.
  statusAdvice: (status) =>
    status === 401
      ? "The account service refused the sign-in: check that `private-key` is the wallet's key, and `auth-url` the right deployment."
      : status === 403 || status === 404
        ? 'Check `project-id`: it must be a project of this wallet.'
        : undefined,
  networkDetails: false,
}

function describeFailure(error: unknown): Ending {
  if (error instanceof AbortedError)
    return { outcome: 'cancelled', headline: 'Cancelled while signing in.', failure: 'Cancelled while signing in.' }
  return describeServiceFailure(error, ACCOUNT_SERVICE)
}
