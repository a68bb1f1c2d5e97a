import { isLoopback } from '../../core/checks.ts'
import { InvalidInputError } from '../../core/errors.ts'
import { defineCommand, parseInteger } from '../context.ts'
import { EXIT } from '../exit-codes.ts'
import { docsUrl } from '../help.ts'

export const emulator = defineCommand({
  path: ['emulator'],
  summary: 'Run the built-in emulator of the proving, task, storage-proof and account services.',
  details: [
    'One port serves every service; GET /is-alive answers once it is ready.',
    'Stops on SIGINT or SIGTERM. The control API under /_emulator/ is documented at',
    `  ${docsUrl('emulator.md')}`,
  ],
  positionals: { min: 0, max: 0 },
  options: {
    port: { type: 'string', valueName: '<n>', description: 'Port to listen on; 0 picks a free one.', default: '8790' },
    host: { type: 'string', valueName: '<address>', description: 'Address to listen on.', default: '127.0.0.1' },
    'step-ms': { type: 'string', valueName: '<ms>', description: 'How long each query step takes.' },
    'state-dir': { type: 'string', valueName: '<dir>', description: 'Keep state on disk here, across restarts.' },
    shape: {
      type: 'string',
      valueName: '<interface|production>',
      description:
        'Records as interface.md gives them (interface) or as production sends them (production: no /docs/ routes).',
      default: 'interface',
    },
    'api-keys': {
      type: 'string',
      valueName: '<k1,k2>',
      env: 'PROVING_EMULATOR_API_KEYS',
      description:
        'Accept only these API keys (default: any non-empty key; required with a --host other than this machine).',
    },
    'webhook-host': {
      type: 'string',
      valueName: '<h1,h2>',
      description: 'Also send task webhooks to these hosts (default: this machine only; * for any).',
    },
  },
  async run(context) {
    const port = parseInteger(context.values.port, 'port', 0, 65_535)
    const host = context.values.host.trim()
    if (!host) throw new InvalidInputError('--host must not be empty; use 127.0.0.1 or 0.0.0.0.', { input: '--host' })
    const stepText = context.values['step-ms']
    const stepMs = stepText === undefined ? undefined : parseInteger(stepText, 'step-ms', 0, 86_400_000)
    const shape = context.values.shape
    if (shape !== 'interface' && shape !== 'production') {
      throw new InvalidInputError(`--shape must be interface or production; got ${JSON.stringify(shape)}.`, {
        input: '--shape',
      })
    }
    const keys = context.values['api-keys']
      ?.split(',')
      .map((key) => key.trim())
      .filter(Boolean)
    if (!isLoopback(host) && !keys?.length) {
      throw new InvalidInputError(
        `--host ${host} is reachable from other machines: give the keys it accepts with --api-keys k1,k2 (or PROVING_EMULATOR_API_KEYS), or listen on 127.0.0.1.`,
        { input: '--api-keys', metaMessages: ['Without them, the emulator would accept any API key.'] },
      )
    }
    for (const key of keys ?? []) context.redactor.add(key)
    const { startEmulator } = await import('../../emulator/index.ts')
    const running = await startEmulator({
      host,
      port,
      logger: context.logger,
      shape,
      ...(keys?.length ? { apiKeys: keys } : {}),
      webhookHosts:
        context.values['webhook-host']
          ?.split(',')
          .map((name) => name.trim())
          .filter(Boolean) ?? [],
      ...(stepMs === undefined ? {} : { timing: { stepMs } }),
      ...(context.values['state-dir'] ? { stateDir: context.values['state-dir'] } : {}),
    }).catch((error: unknown) => {
      throw listenProblem(error, host, port) ?? error
    })
    const local = running.url.replace(/\/$/, '') === 'http://127.0.0.1:8790'
    // The console answers only a Host of this machine: on 0.0.0.0 or ::, it is at 127.0.0.1.
    const consoleUrl = isLoopback(host)
      ? `${running.url}/`
      : host === '0.0.0.0' || host === '::'
        ? `http://127.0.0.1:${running.port}/`
        : undefined
    // With --api-keys only those are accepted: the line names no key it would refuse (nor one of them).
    const keyed = Boolean(keys?.length)
    const urls = ['BASE', 'TASKS', 'STORAGE_PROOF', 'AUTH']
      .map((name) => `PROVING_${name}_URL=${running.url}`)
      .join(' ')
    const point = `Point every command at it: export ${local ? 'PROVING_PROFILE=local' : urls}${keyed ? '' : ' PROVING_API_KEY=dev-key'}`
    const lines = [
      `Emulator listening on ${running.url}`,
      `Console: ${consoleUrl ? `${consoleUrl} (this machine only)` : 'none: it answers only on 127.0.0.1, where this emulator does not listen'}`,
      'Stop it with Ctrl-C.',
      point,
      ...(keyed ? ['and set PROVING_API_KEY to one of the keys given with --api-keys (any other is refused).'] : []),
    ]
    context.print(lines.join('\n'), { url: running.url })
    await new Promise<void>((resolve) => {
      if (context.signal.aborted) resolve()
      context.signal.addEventListener('abort', () => resolve(), { once: true })
    })
    await running.close()
    context.progress('Emulator stopped.')
    return EXIT.ok
  },
})

/** A port it cannot listen on is the user's to change: one line naming --port, exit 2. */
function listenProblem(error: unknown, host: string, port: number): InvalidInputError | undefined {
  const code = (error as NodeJS.ErrnoException).code
  const where = `${host}:${port}`
  if (code === 'EADDRINUSE') {
    return new InvalidInputError(
      `Port ${port} is in use on ${host}: pass --port <n> for another (0 picks a free one), or stop what listens on ${where}.`,
      { input: '--port', cause: error },
    )
  }
  if (code === 'EACCES') {
    return new InvalidInputError(
      `No permission to listen on ${where}: pass --port <n> above 1023 (0 picks a free one).`,
      { input: '--port', cause: error },
    )
  }
  if (code === 'EADDRNOTAVAIL') {
    return new InvalidInputError(
      `--host ${host} is not an address of this machine: use 127.0.0.1, or 0.0.0.0 for every interface.`,
      { input: '--host', cause: error },
    )
  }
  return undefined
}
