import { existsSync } from 'node:fs'
import { type Browser, chromium } from 'playwright-core'
import { describe, it } from 'vitest'

/**
 * A real browser for the console's tests: Debian's chromium, driven headless by playwright-core
 * (which downloads no browser). `.ci/run` installs it; on a machine without it the suite reports
 * one skipped test whose name says why, like the interop suite.
 */

export const CHROMIUM = '/usr/bin/chromium'
export const BROWSER_PRESENT = existsSync(CHROMIUM)
export const BROWSER_SKIP_REASON = `skipped: ${CHROMIUM} is absent (Debian's chromium: apt-get install chromium; .ci/run installs it)`

/**
 * Flags for a machine without network: without them Chromium keeps retrying refused
 * connections (updates, sync, QUIC probes) and stalls. playwright-core gives every launch a
 * fresh user-data-dir of its own.
 */
const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

export function describeBrowser(name: string, body: () => void): void {
  if (BROWSER_PRESENT) {
    // A browser, the CLI's processes and the emulator on two shared cores: room for a slow start.
    describe(name, { timeout: 60_000 }, body)
    return
  }
  // CI (.ci/run) installs the browser and sets this: there, a missing browser is a failure, never a skip.
  if (process.env.PROVING_REQUIRE_SYSTEM_TOOLS === '1') {
    describe(name, () =>
      it('has the browser .ci/run installs', () => {
        throw new Error(`${CHROMIUM} is absent, and PROVING_REQUIRE_SYSTEM_TOOLS=1 requires it`)
      }),
    )
    return
  }
  // Said on the console too: a reporter that lists no skipped test's name still shows why.
  console.warn(`${name}: ${BROWSER_SKIP_REASON}`)
  describe(name, () => it.skip(BROWSER_SKIP_REASON, () => {}))
}

/** `extraArgs`: e.g. `--host-resolver-rules=MAP name 127.0.0.1`, a DNS answer of our choosing. */
export function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: [...FLAGS, ...extraArgs] })
}
