import { InvalidInputError } from '../../core/errors.ts'
import { type CommandSpec, parseInteger, stringValue } from '../context.ts'
import { EXIT } from '../exit-codes.ts'

export const emulator: CommandSpec = {
  path: ['emulator'],
  summary: 'Run the built-in emulator of the proving, task, storage-proof and account services.',
  details: [
    'One port serves every service; GET /is-alive answers once it is ready.',
    'The control API under /_emulator/ is documented in docs/emulator.md. Stops on SIGINT or SIGTERM.',
  ],
  positionals: { min: 0, max: 0 },
  options: {
    port: { type: 'string', valueName: '<n>', description: 'Port to listen on; 0 picks a free one.', default: '8790' },
    host: { type: 'string', valueName: '<address>', description: 'Address to listen on.', default: '127.0.0.1' },
    'step-ms': { type: 'string', valueName: '<ms>', description: 'How long each query step takes.' },
    'state-dir': { type: 'string', valueName: '<dir>', description: 'Keep state on disk here, across restarts.' },
    'api-keys': {
      type: 'string',
      valueName: '<k1,k2>',
      env: 'PROVING_EMULATOR_API_KEYS',
      description: 'Accept only these API keys (default: any non-empty key; required with a --host other than this machine).',
    },
    'webhook-host': {
      type: 'string',
      valueName: '<h1,h2>',
      description: 'Also send task webhooks to these hosts (default: this machine only; * for any).',
    },
  },
  async run(context) {
    const port = parseInteger(stringValue(context, 'port')!, 'port', 0, 65_535)
    const host = stringValue(context, 'host')!.trim()
    if (!host) throw new InvalidInputError('--host must not be empty; use 127.0.0.1 or 0.0.0.0.', { input: '--host' })
    const stepText = stringValue(context, 'step-ms')
    const stepMs = stepText === undefined ? undefined : parseInteger(stepText, 'step-ms', 0, 86_400_000)
    const keys = stringValue(context, 'api-keys')?.split(',').map((key) => key.trim()).filter(Boolean)
    for (const key of keys ?? []) context.redactor.add(key)
    const { startEmulator } = await import('../../emulator/index.ts')
    const running = await startEmulator({
      host,
      port,
      logger: context.logger,
      ...(keys?.length ? { apiKeys: keys } : {}),
      webhookHosts: stringValue(context, 'webhook-host')?.split(',').map((name) => name.trim()).filter(Boolean) ?? [],
      ...(stepMs === undefined ? {} : { timing: { stepMs } }),
      ...(stringValue(context, 'state-dir') ? { stateDir: stringValue(context, 'state-dir') } : {}),
    })
    context.print(`Emulator listening on ${running.url}\nStop it with Ctrl-C.`, { url: running.url })
    await new Promise<void>((resolve) => {
      if (context.signal.aborted) resolve()
      context.signal.addEventListener('abort', () => resolve(), { once: true })
    })
    await running.close()
    context.progress('Emulator stopped.')
    return EXIT.ok
  },
}
