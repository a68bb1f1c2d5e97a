/**
 * The emulator's console (`/`) in a real browser: Debian's chromium, headless, through
 * playwright-core. A developer's loop: submit with the CLI (the built bin: `npm run build`
 * first), see the row, press "Fail next query", submit again, see the FAILED row. Also what the
 * page must never do: run a string it shows, show a key, load for a page of another host, or
 * trip its own Content-Security-Policy. Without /usr/bin/chromium the suite reports itself
 * skipped, saying why (test/helpers/browser.ts).
 */
import { createServer, request as httpRequest } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest'
import { CONSOLE_CSP } from '../../src/emulator/console/routes.ts'
import { simulatedClock } from '../../src/emulator/index.ts'
import { spawnCli } from '../helpers/cli.ts'
import { describeBrowser, launchChromium } from '../helpers/browser.ts'
import {
  FIXTURE_PIE,
  KEY,
  queryForm,
  startTestEmulator,
  submitFixturePie,
  type TestEmulator,
} from '../helpers/emulator.ts'

/** Markup that runs script if a page ever parses it as HTML. */
const HOSTILE = '<img src=x onerror="window.__consolePwned=1"><script>window.__consolePwned=2</script>'
/** A name Chromium resolves to 127.0.0.1 (`--host-resolver-rules`): a DNS-rebinding page's view. */
const FOREIGN_HOST = 'rebind.attacker.test'

type Watched = { page: Page; problems: string[] }

describeBrowser('the emulator console in Debian chromium', () => {
  let emulator: TestEmulator
  let browser: Browser
  let context: BrowserContext
  let watched: Watched

  beforeAll(async () => {
    emulator = await startTestEmulator({ apiKeys: [KEY] })
    browser = await launchChromium([`--host-resolver-rules=MAP ${FOREIGN_HOST} 127.0.0.1`])
  }, 60_000)
  afterAll(async () => {
    await browser?.close()
    await emulator?.close()
  })

  beforeEach(async () => {
    await emulator.control('POST', '/reset')
    context = await browser.newContext({ viewport: { width: 1200, height: 800 } })
    watched = await watch(await context.newPage())
  })
  afterEach(async () => {
    await context?.close()
  })

  /** Every console error, uncaught exception and CSP violation of the page, as it happens. */
  async function watch(page: Page): Promise<Watched> {
    const problems: string[] = []
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning')
        problems.push(`console ${message.type()}: ${message.text()}`)
    })
    page.on('pageerror', (error) => problems.push(`uncaught: ${error.message}`))
    await page.exposeFunction('__reportViolation', (text: string) => problems.push(`CSP violation: ${text}`))
    // Runs in the page before its own scripts (the test's tsconfig has no DOM types: a string).
    await page.addInitScript({
      content:
        "document.addEventListener('securitypolicyviolation', (event) => window.__reportViolation(event.violatedDirective + ' ' + event.blockedURI))",
    })
    return { page, problems }
  }

  async function openConsole(): Promise<Page> {
    const { page } = watched
    const response = await page.goto(`${emulator.url}/`)
    expect(response?.status()).toBe(200)
    await page.locator('#live[data-state="live"]').waitFor()
    return page
  }

  /**
   * A new query every time (`--reuse never`): by default (`--reuse auto`) a second prove of the
   * fixture follows the first one's DONE query, and a planned failure waits for a submission.
   */
  async function proveWithCli(): Promise<string> {
    const run = await spawnCli(['prove', FIXTURE_PIE, '--json', '--reuse', 'never'], {
      entry: 'bin',
      env: { PROVING_BASE_URL: emulator.url, PROVING_API_KEY: KEY },
    }).done
    expect(run.code, run.stderr).toBe(0)
    return JSON.parse(run.stdout).provingQueryId as string
  }

  const row = (page: Page, id: string, status?: string) =>
    page.locator(`#queries tr[data-id="${id}"]${status ? `[data-status="${status}"]` : ''}`)

  it('shows a query submitted with the CLI; "Fail next query" makes the next submission fail', async () => {
    const page = await openConsole()
    await page.locator('#queries .empty').waitFor()

    const first = await proveWithCli()
    await row(page, first, 'DONE').waitFor()
    expect(await row(page, first).locator('.badge').first().textContent()).toBe('DONE')
    // The row links to the query's record and its artifacts.
    const hrefs = await row(page, first)
      .locator('a')
      .evaluateAll((links) => links.map((link) => link.getAttribute('href')))
    expect(hrefs).toEqual([
      `/proving-query/${first}`,
      `/_emulator/artifacts/${first}/proof.json`,
      `/_emulator/artifacts/${first}/pie.cairo0.zip`,
      `/_emulator/artifacts/${first}/metadata.json`,
    ])
    const record = await page.request.get(`${emulator.url}${hrefs[0]}`)
    expect((await record.json()).provingQuery.id).toBe(first)

    await page.getByRole('button', { name: 'Fail next query' }).click()
    await page.locator('#plans', { hasText: 'planned: fail' }).waitFor()
    expect((await emulator.control('GET', '/state')).nextQueries).toEqual([
      expect.objectContaining({ outcome: 'fail' }),
    ])

    const second = await proveWithCli()
    await row(page, second, 'FAILED').waitFor()
    expect(await row(page, second).locator('.error').textContent()).toMatch(/\S/)
    // The first is untouched, and the plan is used up.
    expect(await row(page, first).getAttribute('data-status')).toBe('DONE')
    await page.locator('#plans', { hasText: 'no plan' }).waitFor()
    // Both submissions are in the request log, the key masked.
    await page
      .locator('#requests td', { hasText: '/v1/l2/proving-query/proof-generation-verification?apiKey=***' })
      .first()
      .waitFor()
    expect(watched.problems).toEqual([])
  })

  it('advances and fails a running query with its row buttons', async () => {
    await emulator.control('PUT', '/timing', { receivedMs: 3_600_000, stepMs: 3_600_000 })
    const page = await openConsole()
    const done = await proveWithCli()
    const failed = await proveWithCli()
    await row(page, done, 'RECEIVED').waitFor()
    await row(page, done).getByRole('button', { name: 'Complete' }).click()
    await row(page, done, 'DONE').waitFor()
    await row(page, failed, 'RECEIVED').getByRole('button', { name: 'Fail' }).click()
    await row(page, failed, 'FAILED').waitFor()
    expect(await row(page, failed).locator('.error').textContent()).toBe('Failed from the console')
    expect(watched.problems).toEqual([])
  })

  it('"Reset everything" asks first, then empties every list', async () => {
    const page = await openConsole()
    const id = await proveWithCli()
    await row(page, id, 'DONE').waitFor()
    const dismissed = page.waitForEvent('dialog').then((dialog) => dialog.dismiss())
    await page.getByRole('button', { name: 'Reset everything' }).click()
    await dismissed
    expect((await emulator.control('GET', '/state')).queries).toHaveLength(1)
    page.once('dialog', (dialog) => void dialog.accept())
    await page.getByRole('button', { name: 'Reset everything' }).click()
    await page.locator('#message', { hasText: 'Reset: the emulator is empty.' }).waitFor()
    await page.locator('#queries .empty').waitFor()
    expect((await emulator.control('GET', '/state')).queries).toEqual([])
    expect(watched.problems).toEqual([])
  })

  it('moves a simulated clock with its buttons (hidden on real time)', async () => {
    expect(await (await openConsole()).locator('#clock-controls').isHidden()).toBe(true)
    const simulated = await startTestEmulator({ clock: simulatedClock(Date.parse('2030-01-01T00:00:00Z')) })
    try {
      const { page } = watched
      await page.goto(`${simulated.url}/`)
      await page.locator('#now', { hasText: '2030-01-01 00:00:00Z' }).waitFor()
      await page.getByRole('button', { name: '+1 h' }).click()
      await page.locator('#now', { hasText: '2030-01-01 01:00:00Z' }).waitFor()
      expect((await simulated.control('GET', '/state')).now).toBe('2030-01-01T01:00:00.000Z')
    } finally {
      await simulated.close()
    }
    expect(watched.problems).toEqual([])
  })

  it('shows service and user strings as text: markup in them never runs or becomes elements', async () => {
    await emulator.control('POST', '/next-query', { outcome: 'fail', reason: HOSTILE })
    const submitted = await emulator.call('POST', '/proving-query', {
      headers: { 'api-key': KEY },
      form: await queryForm({ externalId: HOSTILE }),
    })
    expect(submitted.status).toBe(201)
    const id = submitted.body.provingQueryId as string
    const page = await openConsole()
    const hostileRow = row(page, id, 'FAILED')
    await hostileRow.waitFor()
    expect(await hostileRow.locator('.error').textContent()).toBe(HOSTILE)
    expect(await hostileRow.locator('.sub').first().textContent()).toBe(HOSTILE)
    expect(await page.locator('main img, main script').count()).toBe(0)
    expect(await page.evaluate('typeof window.__consolePwned')).toBe('undefined')
    expect(watched.problems).toEqual([])
  })

  it('never shows an API key: keys by keyId, requests with the key masked', async () => {
    const page = await openConsole()
    const id = await proveWithCli()
    await row(page, id, 'DONE').waitFor()
    await page.locator('#keys tr', { hasText: 'allow-list' }).waitFor()
    await page.locator('#requests td', { hasText: 'apiKey=***' }).first().waitFor()
    expect(await page.content()).not.toContain(KEY)
    const snapshot = await page.request.get(`${emulator.url}/_emulator/console/snapshot`)
    expect(await snapshot.text()).not.toContain(KEY)
    expect(watched.problems).toEqual([])
  })

  it('is refused to a page of another host (DNS rebinding) and sent with a strict CSP', async () => {
    const page = await openConsole()
    const headers = (await page.request.get(`${emulator.url}/`)).headers()
    expect(headers['content-security-policy']).toBe(CONSOLE_CSP)
    expect(CONSOLE_CSP).toMatch(/default-src 'self'/)
    expect(CONSOLE_CSP).not.toMatch(/unsafe-inline|unsafe-eval/)

    // The browser resolves a foreign name to this machine, as a rebinding attacker's page would.
    const foreign = await context.newPage()
    const refused = await foreign.goto(`http://${FOREIGN_HOST}:${emulator.port}/`)
    expect(refused?.status()).toBe(403)
    expect(await foreign.locator('body').textContent()).toContain('FORBIDDEN')
    // Its script reading the data, same-origin from its point of view.
    expect(await foreign.evaluate(() => fetch('/_emulator/console/snapshot').then((response) => response.status))).toBe(
      403,
    )
    // The same over plain HTTP, with a Host header and an Origin of another site.
    expect(await statusOf('/', { host: `${FOREIGN_HOST}:${emulator.port}` })).toBe(403)
    expect(await statusOf('/_emulator/console/snapshot', { origin: 'http://attacker.example' })).toBe(403)
    expect(await statusOf('/_emulator/console/snapshot', {})).toBe(200)
    expect(watched.problems).toEqual([])
  })

  it('takes no state change from a page on another loopback port: no-cors fetches and form POSTs are refused', async () => {
    await emulator.control('PUT', '/timing', { receivedMs: 3_600_000, stepMs: 3_600_000 })
    const id = await submitFixturePie(emulator)
    const stateOf = async () => {
      const state = await emulator.control('GET', '/state')
      return {
        queries: state.queries.map((query: { id: string; status: string }) => [query.id, query.status]),
        timing: state.timing,
      }
    }
    const before = await stateOf()
    expect(before.queries).toEqual([[id, 'RECEIVED']])
    // Another site on this machine: the same host names, another port. Its forms carry no field,
    // so their POSTs have no body (what a content-type check alone let through).
    const targets = ['/_emulator/reset', `/_emulator/queries/${id}/complete`, '/_emulator/restart']
    const site = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      res.end(
        targets
          .map(
            (path, index) =>
              `<form method="POST" action="${emulator.url}${path}"><button id="f${index}">go</button></form>`,
          )
          .join(''),
      )
    })
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve))
    const sitePort = (site.address() as AddressInfo).port
    try {
      for (const siteHost of ['127.0.0.1', 'localhost']) {
        const page = await context.newPage()
        await page.goto(`http://${siteHost}:${sitePort}/`)
        // no-cors fetches: the browser sends them without a preflight and hides the answer.
        const settled = await page.evaluate(
          ([base, paths]) =>
            Promise.all(
              paths.map((path) =>
                fetch(base + path, { method: 'POST', mode: 'no-cors' }).then((response) => response.type),
              ),
            ),
          [emulator.url, targets] as const,
        )
        expect(settled).toEqual(['opaque', 'opaque', 'opaque'])
        for (const [index, path] of targets.entries()) {
          await page.goto(`http://${siteHost}:${sitePort}/`)
          const [answer] = await Promise.all([
            page.waitForResponse((response) => response.url() === emulator.url + path),
            page.locator(`#f${index}`).click(),
          ])
          expect(answer.status()).toBe(403)
          expect(await answer.text()).toContain('another origin')
        }
        await page.close()
      }
    } finally {
      await new Promise((resolve) => site.close(resolve))
    }
    expect(await stateOf()).toEqual(before)
    // The console itself, on the emulator's own origin, still completes the query.
    const page = await openConsole()
    await row(page, id, 'RECEIVED').getByRole('button', { name: 'Complete' }).click()
    await row(page, id, 'DONE').waitFor()
    expect(watched.problems).toEqual([])
  })

  function statusOf(path: string, headers: Record<string, string>): Promise<number> {
    return new Promise((resolve, reject) => {
      const req = httpRequest(`${emulator.url}${path}`, { headers }, (res) => {
        res.resume()
        resolve(res.statusCode ?? 0)
      })
      req.on('error', reject)
      req.end()
    })
  }
})
