import { describe, expect, it } from 'vitest'
import { runCli } from '../helpers/cli.ts'
import { FIXTURE_PIE, KEY, useEmulator } from '../helpers/emulator.ts'

/**
 * Waits outlive transient failures after a submission (issue 13): the service accepted the
 * query, then its reads answer 503 twice, reset the connection, send an HTML 502 and a
 * text/plain "404 page not found" (a gateway that lost its route for a moment). The wait goes on
 * at the poll schedule with a visible warning and ends DONE. A wrong URL, on the other hand, is
 * caught before anything is submitted: the service is probed first.
 */

const READS = ['/proving-query/:id', '/docs/proving-query/:id']

describe('prove --wait through a gateway hiccup', () => {
  const emulator = useEmulator({ apiKeys: [KEY] })

  it('503, 503, a reset, an HTML 502, a text/plain 404: warnings, then DONE (exit 0), one query', async () => {
    for (const path of READS) {
      for (const fault of [
        { kind: 'status', status: 503, times: 2 },
        { kind: 'drop' },
        { kind: 'html-502' },
        { kind: 'gateway-404', times: 2 },
      ]) {
        await emulator().control('POST', '/faults', { path, method: 'GET', ...fault })
      }
    }
    const run = await runCli(['prove', FIXTURE_PIE, '--wait', '--timeout', '120s'], {
      env: { PROVING_BASE_URL: emulator().url, PROVING_API_KEY: KEY },
    })
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toMatch(/status\s+DONE/)
    expect(run.stderr).toMatch(/still waiting|Trying again/)
    expect(run.stderr).toMatch(/404/)
    const state = await emulator().control('GET', '/requests')
    const submissions = (state.requests as { method: string; path: string }[]).filter(
      (request) => request.method === 'POST',
    )
    expect(submissions).toHaveLength(1)
  })

  it('a URL that reaches a gateway, not the service: refused before the upload (exit 2), nothing submitted', async () => {
    await emulator().control('POST', '/faults', { path: '*', kind: 'gateway-404', times: 1000 })
    const run = await runCli(['prove', FIXTURE_PIE, '--wait'], {
      env: { PROVING_BASE_URL: emulator().url, PROVING_API_KEY: KEY },
    })
    expect(run.code).toBe(2)
    expect(run.stderr).toMatch(/does not answer like the proving service/)
    expect(run.stderr).toMatch(/nothing was submitted/)
    await emulator().control('DELETE', '/faults')
    const state = await emulator().control('GET', '/requests')
    expect((state.requests as { method: string }[]).filter((request) => request.method === 'POST')).toEqual([])
  })
})
