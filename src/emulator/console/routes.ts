import type { EmulatorContext } from '../context.ts'
import { controlRoute, type Reply, type Route } from '../router.ts'
import { CONSOLE_SCRIPT } from './script.ts'
import { consoleSnapshot } from './snapshot.ts'
import { CONSOLE_HTML, CONSOLE_STYLES } from './page.ts'

/**
 * The console: a page at `/` that shows what the emulator holds and calls its control routes
 * (docs/emulator.md, "The console"). Its files and its data are control routes, so they answer
 * only this machine under the control API's Host and Origin rules, are never faulted and are
 * not written to the request log (the page's own polling would fill it). The page is three
 * plain files kept as strings, so it needs no build step and ships inside the package's lib/
 * (and inside the action's bundle) like any other module.
 */

export const CONSOLE_PREFIX = '/_emulator/console'

/**
 * Scripts and styles only from the emulator itself, never inline (a string that slipped into
 * the page as markup could not run), no framing, no form posts, no plugins.
 */
export const CONSOLE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

const PAGE_HEADERS = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cache-control': 'no-store',
}

export function consoleRoutes(emulator: EmulatorContext): Route[] {
  return [
    controlRoute('GET', '/', () => file(CONSOLE_HTML, 'text/html; charset=utf-8')),
    controlRoute('GET', `${CONSOLE_PREFIX}/app.js`, () => file(CONSOLE_SCRIPT, 'text/javascript; charset=utf-8')),
    controlRoute('GET', `${CONSOLE_PREFIX}/app.css`, () => file(CONSOLE_STYLES, 'text/css; charset=utf-8')),
    controlRoute('GET', `${CONSOLE_PREFIX}/snapshot`, () => ({
      status: 200,
      headers: { 'cache-control': 'no-store' },
      body: consoleSnapshot(emulator),
    })),
  ]
}

function file(text: string, contentType: string): Reply {
  return { status: 200, text, headers: { ...PAGE_HEADERS, 'content-type': contentType } }
}
