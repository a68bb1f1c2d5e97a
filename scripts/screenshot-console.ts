/**
 * Takes docs/emulator-console.png: an emulator with a bit of everything (queries done, failed
 * and running, a bucket, a task with its webhook, a batch query), its console opened in Debian's
 * chromium (playwright-core) at 1200x800. Run after changing the console:
 *
 *   node scripts/screenshot-console.ts [out.png]
 */
import { openAsBlob } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import { chromium } from 'playwright-core'
import { simulatedClock, startEmulator } from '../src/emulator/index.ts'
import { taskBody } from '../test/helpers/tasks.ts'

const ROOT = new URL('..', import.meta.url)
const OUT = process.argv[2] ?? fileURLToPath(new URL('docs/emulator-console.png', ROOT))
const PIE = fileURLToPath(new URL('examples/fib/pie.zip', ROOT))
const KEY = 'dev-key'

// Takes the task's webhook, so the screenshot shows a delivered one.
const receiver = createServer((req, res) => req.resume().on('end', () => res.end('ok')))
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
const clock = simulatedClock(Date.parse('2026-11-26T09:00:00Z'))
const emulator = await startEmulator({ clock, apiKeys: [KEY], timing: { receivedMs: 5_000, stepMs: 60_000 } })

/** The few fields of the answers this script reads. */
type Answer = { provingQueryId: string; provingBucket: { id: string }; tasks: { webhook: { state: string } }[] }

async function call(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const init: RequestInit = { method, headers: { ...headers } }
  if (body instanceof FormData) init.body = body
  else if (body !== undefined) {
    init.body = JSON.stringify(body)
    ;(init.headers as Record<string, string>)['content-type'] = 'application/json'
  }
  const response = await fetch(`${emulator.url}${path}`, init)
  const answer = (await response.json()) as Answer
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(answer)}`)
  return answer
}

async function prove(fields: Record<string, string> = {}): Promise<string> {
  const form = new FormData()
  for (const [name, value] of Object.entries({ declaredJobSize: 'XS', result: 'PROOF_VERIFICATION_ON_L2', ...fields }))
    form.append(name, value)
  form.append('pieFile', await openAsBlob(PIE), 'pie.zip')
  return (await call('POST', '/proving-query', form, { 'api-key': KEY })).provingQueryId
}

try {
  await prove({ externalId: 'release-v1.4.0' })
  await call('POST', '/_emulator/next-query', {
    outcome: 'fail',
    atStep: 'PROOF_GENERATION',
    reason: 'Prover ran out of memory (emulated)',
    retriable: true,
  })
  await prove({ externalId: 'nightly-2026-11-25' })
  const { provingBucket } = await call(
    'POST',
    '/buckets',
    { externalId: 'batch-42', aggregatorVersion: 'v1' },
    { 'api-key': KEY },
  )
  await prove({ bucketId: provingBucket.id, externalId: 'batch-42/0' })
  await prove({ bucketId: provingBucket.id, externalId: 'batch-42/1' })
  await call(
    'POST',
    '/tasks',
    taskBody({ webhook_url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/task` }),
    { 'x-api-key': KEY },
  )
  await call(
    'POST',
    '/batch-query',
    {
      destinationChainId: '11155111',
      fee: '0',
      data: {
        '11155111': {
          'block:5382810': {
            accounts: { '0x75cec1db9dceb703200eaa6595f66885c962b920': { props: ['BALANCE'], slots: ['0x0'] } },
          },
        },
      },
    },
    { 'api-key': KEY },
  )
  // Long enough for the task to end (its 5 stages, a minute and a handoff each).
  clock.advance(15 * 60_000)
  await prove({ externalId: 'pr-318' })
  clock.advance(30_000)
  // The task's webhook goes out on the next request to the task service (simulated time).
  await call('GET', '/_emulator/tasks')
  for (let polls = 0; (await call('GET', '/_emulator/tasks')).tasks[0]?.webhook.state !== 'delivered'; polls++) {
    if (polls > 100) throw new Error('the task webhook was not delivered')
    await new Promise((resolve) => setTimeout(resolve, 50))
  }

  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  })
  try {
    const page = await browser.newPage({ viewport: { width: 1200, height: 800 } })
    await page.goto(`${emulator.url}/`)
    await page.locator('#queries tr[data-status="FAILED"]').waitFor()
    await page.locator('#webhooks tbody tr').waitFor()
    await page.screenshot({ path: OUT })
    console.log(`wrote ${OUT}`)
  } finally {
    await browser.close()
  }
} finally {
  await emulator.close()
  receiver.close()
}
