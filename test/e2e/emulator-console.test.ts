import { request as httpRequest } from 'node:http'
import { generatePrivateKey } from 'viem/accounts'
import { FormData } from 'undici'
import { describe, expect, it } from 'vitest'
import { localSigner } from '../../src/clients/account.ts'
import { ownerOf } from '../../src/emulator/auth.ts'
import { simulatedClock } from '../../src/emulator/index.ts'
import { spawnCli } from '../helpers/cli.ts'
import { KEY, submitFixturePie, type TestEmulator, useEmulator } from '../helpers/emulator.ts'
import { taskBody } from '../helpers/tasks.ts'

/**
 * The console's data over raw HTTP (GET /_emulator/console/snapshot; docs/emulator.md, "The
 * console"): what each list holds, and what it must never hold. The page itself, in a browser,
 * is test/browser/console.test.ts.
 */

const START = Date.parse('2026-01-05T10:00:00Z')
const HOOK_SECRET = 'hook-token-do-not-show-0042'

async function snapshot(emulator: TestEmulator) {
  const answer = await emulator.call('GET', '/_emulator/console/snapshot')
  expect(answer.status).toBe(200)
  return answer.body
}

/** A key minted by the emulated account service for a fresh wallet (a real secret of the emulator's). */
async function mintKey(emulator: TestEmulator): Promise<string> {
  const signer = await localSigner(generatePrivateKey())
  const challenge = (await emulator.call('GET', '/auth/web3/challenge', { query: { wallet: signer.address } })).body
  const signature = await signer.signTypedData(challenge.eip712)
  const session = await emulator.call('POST', '/auth/web3/session', {
    json: { wallet: signer.address, challengeToken: challenge.challengeToken, signature, channel: 'bearer' },
  })
  const keys = await emulator.call('GET', '/api-keys', {
    headers: { authorization: `Bearer ${session.body.accessToken}` },
  })
  return keys.body.data[0].apiKey as string
}

describe('the console snapshot', () => {
  const emulator = useEmulator({
    apiKeys: [KEY],
    clock: simulatedClock(START),
    timing: { receivedMs: 1_000, stepMs: 60_000 },
  })

  it('names every caller by keyId and holds no key: given, minted, or in a webhook URL', async () => {
    const minted = await mintKey(emulator())
    await submitFixturePie(emulator(), KEY)
    const batch = await emulator().call('POST', '/batch-query', {
      headers: { 'api-key': minted },
      json: {
        destinationChainId: '11155111',
        fee: '0',
        data: { '11155111': { 'block:1': { accounts: { [`0x${'ab'.repeat(20)}`]: { props: ['BALANCE'] } } } } },
      },
    })
    expect(batch.status).toBe(200)
    const task = await emulator().call('POST', '/tasks', {
      headers: { 'x-api-key': minted },
      json: taskBody({ webhook_url: `http://127.0.0.1:9/hook?token=${HOOK_SECRET}` }),
    })
    expect(task.status).toBe(200)

    const answer = await emulator().call('GET', '/_emulator/console/snapshot')
    const text = JSON.stringify(answer.body)
    for (const secret of [KEY, minted, HOOK_SECRET]) expect(text).not.toContain(secret)
    expect(answer.body.keys).toEqual({
      anyKeyAccepted: false,
      keys: [
        expect.objectContaining({
          keyId: ownerOf(KEY).keyId,
          masked: '••••••••',
          source: 'allow-list',
          queries: 1,
          tasks: 0,
          batchQueries: 0,
        }),
        expect.objectContaining({
          keyId: ownerOf(minted).keyId,
          masked: 'pk_emu_••••••••',
          source: 'account service',
          name: 'Default',
          queries: 0,
          tasks: 1,
          batchQueries: 1,
        }),
      ],
    })
    expect(answer.body.totals).toEqual({
      queries: 1,
      buckets: 0,
      tasks: 1,
      batches: 1,
      webhooks: 1,
      requests: answer.body.requests.length,
    })
    expect(answer.body.webhooks).toEqual([
      expect.objectContaining({
        taskId: task.body.uuid,
        url: 'http://127.0.0.1:9/hook?token=***',
        state: 'pending',
        attempts: 0,
      }),
    ])
    // The request log as the page shows it: the key masked in the L2 submission's query string.
    expect(answer.body.requests.map((entry: { path: string }) => entry.path)).toContain(
      '/v1/l2/proving-query/proof-generation-verification?apiKey=***',
    )
  })

  it('shows a query as its record does: status, step, facts once DONE, its record and artifact links', async () => {
    const running = await submitFixturePie(emulator())
    emulator().clock.advance(1_000)
    await emulator().control('POST', '/next-query', { outcome: 'fail', reason: 'planned for the test' })
    const failed = await submitFixturePie(emulator())
    // The first query is in its second step; the second has failed at the end of its first.
    emulator().clock.advance(61_500)
    let rows = (await snapshot(emulator())).queries
    expect(rows.map((row: { id: string }) => row.id)).toEqual([failed, running])
    const byId = (id: string) => rows.find((row: { id: string }) => row.id === id)
    expect(byId(running)).toMatchObject({
      status: 'IN_PROGRESS',
      step: 'PROOF_GENERATION',
      stepsDone: 2,
      steps: ['TRACE_GENERATION', 'PROOF_GENERATION', 'PROOF_VERIFICATION_ON_L2'],
      programHash: null,
      artifacts: [],
    })
    expect(byId(failed)).toMatchObject({ status: 'FAILED', errorReason: 'planned for the test', retriable: false })

    emulator().clock.advance(3 * 60_000)
    rows = (await snapshot(emulator())).queries
    const record = (await emulator().call('GET', byId(running).recordUrl)).body.provingQuery
    expect(byId(running)).toMatchObject({
      status: 'DONE',
      programHash: record.programHash,
      sharpFactHash: record.sharpFactHash,
      integrityFactHash: record.integrityFactHash,
      completedAt: record.completedAt,
      artifacts: ['proof.json', 'pie.cairo0.zip', 'metadata.json'].map((name) => ({
        name,
        url: `/_emulator/artifacts/${running}/${name}`,
      })),
    })
    expect(record.programHash).toMatch(/^0x[0-9a-f]+$/)
    for (const { url } of byId(running).artifacts) expect((await emulator().call('GET', url)).status).toBe(200)
  })

  it("shows a task's MMRs once its chain proofs are fetched, as GET /tasks/{uuid}/mmrs does", async () => {
    const { uuid } = (await emulator().call('POST', '/tasks', { headers: { 'x-api-key': KEY }, json: taskBody() })).body
    expect((await snapshot(emulator())).tasks).toEqual([
      expect.objectContaining({ uuid, status: 'Received', mmrs: [] }),
    ])
    emulator().clock.advance(60 * 60_000)
    const [task] = (await snapshot(emulator())).tasks
    expect(task).toMatchObject({ uuid, status: 'TaskDecommitmentCompleted', ended: true })
    expect(task.mmrs).toHaveLength(2)
    expect(task.mmrs).toEqual((await emulator().call('GET', `/tasks/${uuid}/mmrs`)).body.mmrs)
  })

  it('lists the newest 200 rows of a list and counts them all', async () => {
    const ids: string[] = []
    for (let index = 0; index < 201; index++) {
      const form = new FormData()
      form.append('declaredJobSize', 'XS')
      form.append('programHash', `0x${(index + 1).toString(16)}`)
      const answer = await emulator().call('POST', '/proving-query', { headers: { 'api-key': KEY }, form })
      ids.push(answer.body.provingQueryId)
      emulator().clock.advance(1)
    }
    const body = await snapshot(emulator())
    expect(body.totals.queries).toBe(201)
    expect(body.queries.map((row: { id: string }) => row.id)).toEqual(ids.slice(1).reverse())
    expect(body.keys.keys).toEqual([expect.objectContaining({ keyId: ownerOf(KEY).keyId, queries: 201 })])
  })

  it('is a control route: refused to another Host, and neither it nor the page is in the request log', async () => {
    const refused = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(
        `${emulator().url}/_emulator/console/snapshot`,
        { headers: { host: 'attacker.example' } },
        (res) => {
          res.resume()
          resolve(res.statusCode ?? 0)
        },
      )
      req.on('error', reject)
      req.end()
    })
    expect(refused).toBe(403)
    expect((await emulator().call('GET', '/')).status).toBe(200)
    await snapshot(emulator())
    expect(emulator().requests()).toEqual([])
  })
})

describe('`proving emulator` prints where its console is', () => {
  /** Runs `proving emulator --port 0 ...args`, hands `check` the printed console URL and listening URL, then stops it. */
  async function withEmulator(
    args: string[],
    check: (consoleUrl: string | undefined, listening: string) => Promise<void>,
  ): Promise<void> {
    const emulator = spawnCli(['emulator', '--port', '0', ...args])
    try {
      const [, line] = await emulator.waitForOutput(/Console: (.*)/)
      const [, listening] = await emulator.waitForOutput(/listening on (http:\/\/\S+)/)
      await check(/^(http:\/\/\S+)/.exec(line!)?.[1], listening!)
    } finally {
      emulator.child.kill('SIGINT')
      expect((await emulator.done).code).toBe(0)
    }
  }

  it('on this machine: its own address, which serves the page', async () => {
    await withEmulator([], async (url) => {
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/)
      const page = await fetch(url!)
      expect(page.status).toBe(200)
      expect(page.headers.get('content-type')).toMatch(/^text\/html/)
    })
  })

  it('on 0.0.0.0: 127.0.0.1, since the console refuses the Host 0.0.0.0', async () => {
    await withEmulator(['--host', '0.0.0.0', '--api-keys', 'console-test-key'], async (url, listening) => {
      const port = new URL(listening).port
      expect(url).toBe(`http://127.0.0.1:${port}/`)
      expect((await fetch(url!)).status).toBe(200)
      expect((await fetch(`http://0.0.0.0:${port}/`)).status).toBe(403)
    })
  })
})
