import { describe, expect, it, vi } from 'vitest'

// undici's error quoting the URL it failed on (with no code to stand in for it).
vi.mock('undici', () => ({
  request: vi.fn(async (url: string) => {
    throw new Error(`could not reach ${url}`)
  }),
}))

const { deliverWebhook } = await import('../../../../src/emulator/tasks/webhooks.ts')

describe('a webhook that cannot be delivered (left open by the last session)', () => {
  it("logs and keeps the failure without the hook's secret", async () => {
    const url = 'http://127.0.0.1:9/services/T000/B000/XsecretHookToken123?token=SECRET_QUERY_1'
    const debug: string[] = []
    const delivery = { url, state: 'pending', attempts: [] } as never as Parameters<typeof deliverWebhook>[0]
    await deliverWebhook(
      delivery,
      { status: 'done' },
      {
        logger: { debug: (line: string) => debug.push(line), info: () => {}, warn: () => {}, error: () => {} } as never,
        onAttempt: () => {},
      },
    )
    const shown = JSON.stringify({ debug, attempts: delivery.attempts })
    expect(debug).toHaveLength(3)
    expect(shown).toContain('could not reach')
    expect(shown).not.toContain('XsecretHookToken123')
    expect(shown).not.toContain('SECRET_QUERY_1')
  })
})
