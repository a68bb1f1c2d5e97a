import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { AccountClient } from '../../src/clients/account.ts'
import { UnsafeChallengeError } from '../../src/clients/sign-in-check.ts'
import { InvalidResponseError } from '../../src/core/errors.ts'
import { typedDataOf } from '../../src/emulator/account/routes.ts'
import { runCli } from '../helpers/cli.ts'

/**
 * A hostile account service: its challenge endpoint hands out typed data that a contract would
 * honour (an EIP-3009 USDC transfer authorization, a Safe transaction, an ERC-2771 forward
 * request, a Permit, ...) or a 20 MB body. The client must refuse every one before signing,
 * naming what was off, and send nothing after the challenge (no POST /auth/web3/session).
 */

const KEY = generatePrivateKey()
const WALLET = privateKeyToAccount(KEY).address
const ATTACKER = '0x000000000000000000000000000000000000dEaD'
const USDC = '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48'
const NONCE = 'n-8f3a2c1d9e7b'
const TOKEN = 'ct_0123456789abcdef'

type Handler = (url: URL) => { status?: number; body: string | Buffer }
let handler: Handler
let posts: string[] = []
let server: Server
let baseUrl: string

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x')
    if (req.method !== 'GET') {
      posts.push(url.pathname)
      req.resume()
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end('{"accessToken":"a","refreshToken":"b","expiresAt":9999999999}')
      return
    }
    const answer = handler(url)
    res.writeHead(answer.status ?? 200, { 'content-type': 'application/json' }).end(answer.body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))
beforeEach(() => {
  posts = []
})

const challenge = (eip712: unknown) => JSON.stringify({ challengeToken: TOKEN, nonce: NONCE, eip712 })
const serve = (eip712: unknown) => {
  handler = () => ({ body: challenge(eip712) })
}

/** The emulator's own sign-in typed data for WALLET: the one shape that must pass. */
const good = () =>
  JSON.parse(
    JSON.stringify(
      typedDataOf({
        wallet: WALLET,
        nonce: NONCE,
        issuedAt: '2025-01-01T00:00:00Z',
        expiresAtText: '2025-01-01T00:05:00Z',
      }),
    ),
  )

const receiveWithAuthorization = {
  domain: { name: 'USD Coin', version: '2', chainId: 1, verifyingContract: USDC },
  types: {
    EIP712Domain: [
      { name: 'name', type: 'string' },
      { name: 'version', type: 'string' },
      { name: 'chainId', type: 'uint256' },
      { name: 'verifyingContract', type: 'address' },
    ],
    ReceiveWithAuthorization: [
      { name: 'from', type: 'address' },
      { name: 'to', type: 'address' },
      { name: 'value', type: 'uint256' },
      { name: 'validAfter', type: 'uint256' },
      { name: 'validBefore', type: 'uint256' },
      { name: 'nonce', type: 'bytes32' },
    ],
  },
  primaryType: 'ReceiveWithAuthorization',
  message: {
    from: WALLET,
    to: ATTACKER,
    value: '1000000000',
    validAfter: 0,
    validBefore: 9999999999,
    nonce: `0x${'11'.repeat(32)}`,
  },
}

const safeTx = {
  domain: { chainId: 1, verifyingContract: ATTACKER },
  types: {
    SafeTx: [
      { name: 'to', type: 'address' },
      { name: 'value', type: 'uint256' },
      { name: 'data', type: 'bytes' },
      { name: 'operation', type: 'uint8' },
      { name: 'safeTxGas', type: 'uint256' },
      { name: 'baseGas', type: 'uint256' },
      { name: 'gasPrice', type: 'uint256' },
      { name: 'gasToken', type: 'address' },
      { name: 'refundReceiver', type: 'address' },
      { name: 'nonce', type: 'uint256' },
    ],
  },
  primaryType: 'SafeTx',
  message: {
    to: ATTACKER,
    value: '1',
    data: '0xa9059cbb',
    operation: 0,
    safeTxGas: 0,
    baseGas: 0,
    gasPrice: 0,
    gasToken: '0x0000000000000000000000000000000000000000',
    refundReceiver: ATTACKER,
    nonce: 0,
  },
}

const forwardRequest = {
  domain: { name: 'MinimalForwarder', version: '0.0.1', chainId: 1, verifyingContract: ATTACKER },
  types: {
    ForwardRequest: [
      { name: 'from', type: 'address' },
      { name: 'to', type: 'address' },
      { name: 'value', type: 'uint256' },
      { name: 'gas', type: 'uint256' },
      { name: 'nonce', type: 'uint256' },
      { name: 'data', type: 'bytes' },
    ],
  },
  primaryType: 'ForwardRequest',
  message: { from: WALLET, to: USDC, value: 0, gas: 100000, nonce: 0, data: '0xa9059cbb' },
}

/** Variations: each a "sign-in" made slightly hostile; the reason the client must give. */
const variations: [string, () => unknown, RegExp][] = [
  ['USDC ReceiveWithAuthorization', () => receiveWithAuthorization, /verifyingContract/],
  ['Safe SafeTx', () => safeTx, /calldata/],
  ['ERC-2771 ForwardRequest', () => forwardRequest, /verifyingContract/],
  [
    'the sign-in shape with a verifyingContract added',
    () => {
      const data = good()
      data.domain.verifyingContract = USDC
      data.types.EIP712Domain.push({ name: 'verifyingContract', type: 'address' })
      return data
    },
    /verifyingContract/,
  ],
  [
    'the sign-in renamed to the USDC domain',
    () => ({ ...good(), domain: { ...good().domain, name: 'USD Coin' } }),
    /domain name is "USD Coin"/,
  ],
  ['another chain', () => ({ ...good(), domain: { ...good().domain, chainId: 137 } }), /chainId is 137/],
  [
    'made out to another wallet',
    () => {
      const data = good()
      data.message.wallet = ATTACKER
      return data
    },
    /not this wallet/,
  ],
  [
    'an amount beside the wallet',
    () => {
      const data = good()
      data.types.SignIn.push({ name: 'amount', type: 'uint256' })
      data.message.amount = '1000'
      return data
    },
    /amount-like integer/,
  ],
  [
    'a second address (the recipient)',
    () => {
      const data = good()
      data.types.SignIn.push({ name: 'spender', type: 'address' })
      data.message.spender = ATTACKER
      return data
    },
    /2 addresses/,
  ],
  [
    'a nested Permit struct',
    () => {
      const data = good()
      data.types.Permit = [
        { name: 'owner', type: 'address' },
        { name: 'spender', type: 'address' },
        { name: 'value', type: 'uint256' },
      ]
      data.types.SignIn.push({ name: 'permit', type: 'Permit' })
      data.message.permit = { owner: WALLET, spender: ATTACKER, value: '1' }
      return data
    },
    /other struct types \(Permit\)/,
  ],
  [
    'calldata in a bytes field',
    () => {
      const data = good()
      data.types.SignIn.push({ name: 'data', type: 'bytes' })
      data.message.data = '0x095ea7b3'
      return data
    },
    /calldata/,
  ],
  [
    'an array of addresses',
    () => {
      const data = good()
      data.types.SignIn.push({ name: 'targets', type: 'address[]' })
      data.message.targets = [ATTACKER]
      return data
    },
    /array/,
  ],
  [
    'not bound to the challenge (no nonce)',
    () => {
      const data = good()
      data.message.nonce = 'some-other-nonce'
      return data
    },
    /nonce or token/,
  ],
  [
    'a Permit renamed SignIn-like primary type',
    () => ({
      ...good(),
      primaryType: 'PermitSingle',
      types: { ...good().types, PermitSingle: good().types.SignIn, SignIn: undefined },
    }),
    /moves value/,
  ],
  [
    'a message field the type does not declare',
    () => {
      const data = good()
      data.message.extra = 'x'
      return data
    },
    /does not declare/,
  ],
]

describe('the sign-in signs only a sign-in (library)', () => {
  it("the service's own sign-in passes (and the session POST is made)", async () => {
    serve(good())
    const client = new AccountClient({ baseUrl, privateKey: KEY })
    await client.signIn()
    expect(posts).toEqual(['/auth/web3/session'])
  })

  it.each(variations)(
    '%s: refused before signing, naming what was off; nothing POSTed',
    async (_name, make, reason) => {
      serve(make())
      const client = new AccountClient({ baseUrl, privateKey: KEY })
      const error = await client.signIn().catch((caught: unknown) => caught)
      expect(error).toBeInstanceOf(UnsafeChallengeError)
      expect((error as Error).message).toMatch(reason)
      expect((error as Error).message).toMatch(/Nothing was signed/)
      expect(posts).toEqual([])
    },
  )

  it('the expected domain can be overridden (another name and chain accepted, the default refused)', async () => {
    serve({ ...good(), domain: { ...good().domain, name: 'Acme Auth', chainId: 11155111 } })
    await expect(new AccountClient({ baseUrl, privateKey: KEY }).signIn()).rejects.toThrow(/domain name is "Acme Auth"/)
    expect(posts).toEqual([])
    await new AccountClient({
      baseUrl,
      privateKey: KEY,
      signIn: { domainName: 'Acme Auth', chainId: '0xaa36a7' },
    }).signIn()
    expect(posts).toEqual(['/auth/web3/session'])
  })

  it('a 20 MB challenge (5M array elements) is refused unread past 64 KiB, at once', async () => {
    const huge = Buffer.from(
      `{"challengeToken":"t","eip712":{"domain":{},"types":{},"primaryType":"X","message":{"a":[${'1,'.repeat(10_000_000)}1]}}}`,
    )
    handler = () => ({ body: huge })
    const started = Date.now()
    const before = process.memoryUsage().rss
    const error = await new AccountClient({ baseUrl, privateKey: KEY }).signIn().catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(InvalidResponseError)
    expect((error as Error).message).toMatch(/larger than 64 KiB/)
    expect(posts).toEqual([])
    // Not a timing assertion: a sanity bound far above any machine's need for a 64 KiB read.
    expect(Date.now() - started).toBeLessThan(30_000)
    expect(process.memoryUsage().rss - before).toBeLessThan(200 * 1024 * 1024)
  })
})

describe('proving auth login against a hostile service (CLI)', () => {
  it.each([
    ['ReceiveWithAuthorization', receiveWithAuthorization],
    ['SafeTx', safeTx],
    ['ForwardRequest', forwardRequest],
  ])(
    '%s: one line naming what was off and one saying what to do, exit 3, nothing signed or sent',
    async (_name, typedData) => {
      serve(typedData)
      const run = await runCli(['auth', 'login', '--auth-url', baseUrl], { env: { PROVING_PRIVATE_KEY: KEY } })
      expect(run.code).toBe(3)
      expect(run.stderr).toMatch(/Refused to sign the sign-in challenge/)
      // One line for what was off, one for what to do (the CLI's words for the library's next step).
      expect(run.stderr.trim().split('\n')).toEqual([
        expect.stringMatching(/^proving: Refused to sign/),
        '  See the challenge with `proving auth login --show-challenge`; check --auth-url.',
      ])
      expect(run.stderr).not.toContain(KEY.slice(2))
      expect(posts).toEqual([])
    },
  )

  it('--show-challenge prints the typed data and the verdict, signs nothing', async () => {
    serve(receiveWithAuthorization)
    const run = await runCli(['auth', 'login', '--auth-url', baseUrl, '--show-challenge', '--json'], {
      env: { PROVING_PRIVATE_KEY: KEY },
    })
    const shown = JSON.parse(run.stdout)
    expect(shown).toMatchObject({ wallet: WALLET, primaryType: 'ReceiveWithAuthorization', wouldSign: false })
    expect(shown.problems.join(' ')).toMatch(/verifyingContract/)
    expect(run.code).toBe(3)
    serve(good())
    const ok = await runCli(['auth', 'login', '--auth-url', baseUrl, '--show-challenge'], {
      env: { PROVING_PRIVATE_KEY: KEY },
    })
    expect(ok.code).toBe(0)
    expect(ok.stdout).toMatch(/would sign it. Nothing was signed/)
    expect(posts).toEqual([])
  })

  it('--sign-in-domain / --sign-in-chain-id override the expected domain; a bad chain id is exit 2', async () => {
    serve({ ...good(), domain: { ...good().domain, name: 'Acme Auth', chainId: 10 } })
    const run = await runCli(
      [
        'auth',
        'login',
        '--auth-url',
        baseUrl,
        '--sign-in-domain',
        'Acme Auth',
        '--sign-in-chain-id',
        '10',
        '--show-challenge',
      ],
      {
        env: { PROVING_PRIVATE_KEY: KEY },
      },
    )
    expect(run.code).toBe(0)
    const bad = await runCli(['auth', 'login', '--auth-url', baseUrl, '--sign-in-chain-id', 'ten'], {
      env: { PROVING_PRIVATE_KEY: KEY },
    })
    expect(bad.code).toBe(2)
    expect(bad.stderr).toMatch(/--sign-in-chain-id/)
  })
})
