import { AccountClient, DEFAULT_KEY_COLOR } from '../../clients/account.ts'
import type { SignInExpectation } from '../../clients/sign-in-check.ts'
import { InvalidInputError } from '../../core/errors.ts'
import { serviceLine } from '../../core/service-text.ts'
import {
  type CommandContext,
  defineCommand,
  type OptionSpecs,
  pageOptions,
  pageSummary,
  parseInteger,
  allowInsecureHttp,
} from '../context.ts'
import { EXIT } from '../exit-codes.ts'
import { missingAddressError } from '../profiles.ts'

/**
 * `proving auth ...`: the wallet sign-in of the account service. The private key comes from
 * PROVING_PRIVATE_KEY or stdin, never from a flag (a flag value lands in shell history and in
 * the process list). Tokens never leave the process; API keys reach stdout only in the JSON
 * output, which is what the command is for.
 */

const AUTH_OPTIONS = {
  'auth-url': {
    type: 'string',
    valueName: '<url>',
    env: 'PROVING_AUTH_URL',
    description: 'Address of the account service.',
  },
  'sign-in-domain': {
    type: 'string',
    valueName: '<name>',
    env: 'PROVING_SIGN_IN_DOMAIN',
    description: 'EIP-712 domain name a sign-in challenge must carry (default "Proving Account Service").',
  },
  'sign-in-chain-id': {
    type: 'string',
    valueName: '<id>',
    env: 'PROVING_SIGN_IN_CHAIN_ID',
    description: 'EIP-712 domain chainId a sign-in challenge must carry (default 1).',
  },
  // Declared only to refuse it with a useful message (and so the CLI masks its value).
  'private-key': {
    type: 'string',
    valueName: '<key>',
    description: 'Not accepted: set PROVING_PRIVATE_KEY or pipe the key on stdin.',
  },
} as const satisfies OptionSpecs

const KEY_SOURCE_DETAILS = [
  "The wallet's private key is read from PROVING_PRIVATE_KEY, or else from stdin",
  '(one line, 0x + 64 hex digits):',
  '  proving auth login --json < key.txt',
]

export const authLogin = defineCommand({
  path: ['auth', 'login'],
  summary: 'Sign in with a wallet (EIP-712) and get the API key of its project.',
  details: [
    ...KEY_SOURCE_DETAILS,
    'A first-time wallet gets a Personal project with one key. With --json, prints',
    '{ apiKey, projectId, wallet }; without it, the key is not shown (so it stays out of logs).',
  ],
  positionals: { min: 0, max: 0 },
  options: {
    ...AUTH_OPTIONS,
    'show-challenge': {
      type: 'boolean',
      description: 'Print the typed data the service asks to sign and whether it would be signed; sign nothing.',
    },
  },
  async run(context) {
    const client = await accountClientFrom(context)
    if (context.values['show-challenge'] === true) return showChallenge(context, client)
    const session = await client.signIn({ signal: context.signal })
    const apiKey = await client.getApiKey({ signal: context.signal })
    if (context.json) {
      // The one place a key is meant to reach stdout: written past the redactor on purpose.
      context.io.stdout(
        `${JSON.stringify({ apiKey, projectId: session.projectId ?? null, wallet: session.wallet }, null, 2)}\n`,
      )
      return EXIT.ok
    }
    context.print(
      [
        `Signed in as ${session.wallet}${session.projectId ? `; project ${session.projectId}` : ''}.`,
        'The project has an API key; it is not printed here. To use it:',
        '  export PROVING_API_KEY="$(proving auth login --json | jq -r .apiKey)"',
      ].join('\n'),
    )
    return EXIT.ok
  },
})

export const authKeysCreate = defineCommand({
  path: ['auth', 'keys', 'create'],
  // Its name before the `auth keys` group: scripts that use it keep working.
  aliases: [['auth', 'create-key']],
  summary: "Mint another API key in the wallet's project, and show it (masked unless --reveal).",
  details: [
    ...KEY_SOURCE_DETAILS,
    'Prints the new key masked (pk_abc…wxyz); --reveal prints it in full, --json prints',
    '{ apiKey, name, projectId, createdAt }. The key is never lost: `proving auth keys list --reveal`',
    'shows every key of the project.',
  ],
  positionals: { min: 0, max: 0 },
  options: {
    ...AUTH_OPTIONS,
    name: { type: 'string', valueName: '<name>', description: 'Name of the new key (required).' },
    color: {
      type: 'string',
      valueName: '<color>',
      description: 'Colour shown beside it in the console.',
      default: DEFAULT_KEY_COLOR,
    },
    'project-id': {
      type: 'string',
      valueName: '<id>',
      description: "Project to add the key to (default: the session's).",
    },
    reveal: { type: 'boolean', description: "Print the new key in full (it lands in your terminal's scrollback)." },
  },
  async run(context) {
    const name = context.values.name?.trim()
    if (!name)
      throw new InvalidInputError('--name is required: what to call the new key, e.g. --name ci.', { input: '--name' })
    const client = await accountClientFrom(context)
    const session = await client.signIn({ signal: context.signal })
    const record = await client.createApiKey({
      name,
      color: context.values.color,
      projectId: context.values['project-id']?.trim() || undefined,
      signal: context.signal,
    })
    if (context.json) {
      context.io.stdout(`${JSON.stringify(record, null, 2)}\n`)
      return EXIT.ok
    }
    // The one place a key is meant to reach stdout: written past the redactor on purpose.
    context.io.stdout(
      `${[
        `Created API key "${record.name ?? name}" in project ${record.projectId ?? session.projectId ?? '(default)'}:`,
        `  ${context.values.reveal ? record.apiKey : maskKey(record.apiKey)}`,
        context.values.reveal
          ? ''
          : 'Masked: --reveal prints it in full, --json as JSON; `proving auth keys list --reveal` shows it again later.',
      ]
        .filter(Boolean)
        .join('\n')}\n`,
    )
    return EXIT.ok
  },
})

export const authKeysList = defineCommand({
  path: ['auth', 'keys', 'list'],
  summary: "List the API keys of the wallet's project (masked unless --reveal).",
  details: [
    ...KEY_SOURCE_DETAILS,
    'With --json, prints { data: [{ apiKey, name, projectId, createdAt }], total } in full.',
  ],
  positionals: { min: 0, max: 0 },
  options: {
    ...AUTH_OPTIONS,
    'project-id': {
      type: 'string',
      valueName: '<id>',
      description: "Project whose keys to list (default: the session's).",
    },
    ...pageOptions('Keys', 100),
    reveal: { type: 'boolean', description: 'Print the keys in full.' },
  },
  async run(context) {
    const limit = parseInteger(context.values.limit, 'limit', 1, 100)
    const offset = parseInteger(context.values.offset, 'offset', 0, Number.MAX_SAFE_INTEGER)
    const client = await accountClientFrom(context)
    await client.signIn({ signal: context.signal })
    const page = await client.listApiKeys({
      projectId: context.values['project-id']?.trim() || undefined,
      limit,
      offset,
      signal: context.signal,
    })
    if (context.json) {
      context.io.stdout(`${JSON.stringify(page, null, 2)}\n`)
      return EXIT.ok
    }
    const rows = page.data.map((key) => [
      context.values.reveal ? key.apiKey : maskKey(key.apiKey),
      key.name ?? '',
      key.projectId ?? '',
      key.createdAt ?? '',
    ])
    const header = ['key', 'name', 'project', 'created']
    const widths = header.map((title, column) =>
      Math.max(title.length, ...rows.map((row) => String(row[column]).length)),
    )
    const line = (cells: string[]) =>
      serviceLine(
        cells
          .map((cell, column) => String(cell).padEnd(widths[column]!))
          .join('  ')
          .trimEnd(),
      )
    context.io.stdout(
      `${[line(header), ...rows.map(line), pageSummary({ shown: page.data.length, offset, limit, total: page.total })].join('\n')}\n`,
    )
    return EXIT.ok
  },
})

export const authKeysRevoke = defineCommand({
  path: ['auth', 'keys', 'revoke'],
  args: '<key>',
  summary: "Revoke an API key: done in the service's web console (the API has no revoke call).",
  details: [
    "The account service's API lists and creates keys; it has no call that revokes one. This command",
    "says so and sends nothing: revoke the key in the service's web console, then",
    '`proving auth keys list` shows what is left.',
  ],
  positionals: { min: 1, max: 1 },
  options: {},
  async run(context) {
    // The argument is a key: masked in the message, whatever the user pasted.
    context.redactor.add(context.positionals[0]!)
    throw new InvalidInputError(
      `Cannot revoke ${maskKey(context.positionals[0]!)} from the command line: revoke it in the service's web console.`,
      {
        input: '<key>',
        metaMessages: [
          "The account service's API has no call that revokes a key.",
          'Check with `proving auth keys list` once it is revoked.',
        ],
      },
    )
  },
})

/** A key as a person may see it on screen: enough to tell keys apart, not enough to use one. */
export function maskKey(key: string): string {
  if (key.length <= 12) return `${key.slice(0, 2)}…`
  return `${key.slice(0, 7)}…${key.slice(-4)}`
}

/** `auth login --show-challenge`: the challenge as received and the verdict; nothing signed or sent. */
async function showChallenge(context: CommandContext, client: AccountClient): Promise<number> {
  const { wallet, challenge, problems } = await client.previewChallenge({ signal: context.signal })
  const shown = {
    wallet,
    primaryType: challenge.eip712.primaryType,
    domain: challenge.eip712.domain,
    types: challenge.eip712.types,
    message: challenge.eip712.message,
  }
  context.print(
    [
      `The account service asks ${wallet} to sign this EIP-712 typed data:`,
      JSON.stringify(shown, null, 2),
      problems.length === 0
        ? 'It is a plain sign-in: `proving auth login` would sign it. Nothing was signed.'
        : `It would be refused, unsigned: ${problems.join('; ')}.`,
    ].join('\n'),
    { ...shown, wouldSign: problems.length === 0, problems },
  )
  return problems.length === 0 ? EXIT.ok : EXIT.service
}

async function accountClientFrom(context: CommandContext<typeof AUTH_OPTIONS>): Promise<AccountClient> {
  if (context.values['private-key'] !== undefined) {
    throw new InvalidInputError(
      '--private-key is not accepted: a value on the command line lands in shell history and the process list. Set PROVING_PRIVATE_KEY or pipe the key on stdin.',
      { input: '--private-key' },
    )
  }
  const baseUrl = context.values['auth-url']?.trim()
  if (!baseUrl) {
    throw missingAddressError('authUrl')
  }
  const privateKey = await readPrivateKey(context)
  context.redactor.add(privateKey)
  try {
    return new AccountClient({
      baseUrl,
      privateKey,
      logger: context.logger,
      redactor: context.redactor,
      signIn: signInExpectation(context),
      allowInsecureHttp: allowInsecureHttp(context),
    })
  } catch (error) {
    if (error instanceof InvalidInputError && error.input === 'privateKey') throw error
    throw new InvalidInputError(`--auth-url ${(error as Error).message.split('\n')[0]}`, {
      input: '--auth-url',
      cause: error,
    })
  }
}

function signInExpectation(context: CommandContext<typeof AUTH_OPTIONS>): SignInExpectation {
  const domainName = context.values['sign-in-domain']?.trim() || undefined
  const chainText = context.values['sign-in-chain-id']?.trim() || undefined
  if (chainText !== undefined && !/^(\d{1,78}|0x[0-9a-fA-F]{1,64})$/.test(chainText)) {
    throw new InvalidInputError(
      `--sign-in-chain-id must be a chain id (decimal or 0x hex); got ${JSON.stringify(chainText.slice(0, 40))}.`,
      {
        input: '--sign-in-chain-id',
      },
    )
  }
  return { domainName, chainId: chainText === undefined ? undefined : BigInt(chainText) }
}

const MAX_KEY_INPUT_BYTES = 4096

/** PROVING_PRIVATE_KEY, else the first line of stdin (never a prompt that echoes it). */
async function readPrivateKey(context: CommandContext): Promise<string> {
  const fromEnv = context.io.env.PROVING_PRIVATE_KEY?.trim()
  if (fromEnv) return fromEnv
  const stdin = context.io.stdin as (NodeJS.ReadableStream & { isTTY?: boolean }) | undefined
  if (!stdin || stdin.isTTY) {
    throw new InvalidInputError(
      'No private key: set PROVING_PRIVATE_KEY, or pipe the key on stdin (proving auth login < key.txt).',
      {
        input: 'PROVING_PRIVATE_KEY',
      },
    )
  }
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of stdin) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer)
    size += buffer.length
    if (size > MAX_KEY_INPUT_BYTES) break
    chunks.push(buffer)
  }
  const line = Buffer.concat(chunks)
    .toString('utf8')
    .split(/\r?\n/)
    .map((text) => text.trim())
    .find(Boolean)
  if (!line) {
    throw new InvalidInputError('No private key: stdin was empty. Set PROVING_PRIVATE_KEY, or pipe the key on stdin.', {
      input: 'PROVING_PRIVATE_KEY',
    })
  }
  return line
}
