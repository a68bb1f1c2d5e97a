import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { GitHubPublisher, type PublishedStep } from '../../../../src/action/github/publish.ts'
import { OutputWriter } from '../../../../src/action/steps/outputs.ts'
import { RecordingIO } from '../../../helpers/recording-io.ts'

describe('facts.json', () => {
  it('scrubs the refusals it quotes of the registered secrets, as the summary is', async () => {
    const io = new RecordingIO({}, { scrub: true })
    io.env = { RUNNER_TEMP: mkdtempSync(join(tmpdir(), 'publish-')) }
    io.setSecret('pk_live_echoed_by_the_service')
    const step = {
      ended: {
        outcome: 'failed',
        headline: 'HTTP 401',
        problems: ['The service said: key pk_live_echoed_by_the_service is not valid'],
      },
      summaryMarkdown: '### Prove: failed',
      outputs: new OutputWriter(io),
      options: { emulated: false },
      queryId: undefined,
    } as unknown as PublishedStep
    const publisher = await GitHubPublisher.open(io, {
      'github-token': 'ghs_unused',
      'pr-comment': false,
      'check-run': false,
      attest: true,
    })
    await publisher.finish(step, { serviceUrl: undefined, download: () => Promise.reject(new Error('not called')) })
    const facts = JSON.parse(readFileSync(step.outputs.get('facts-json')!, 'utf8')) as { gate: { refusals: string[] } }
    expect(facts.gate.refusals).toEqual(['The service said: key *** is not valid'])
  })
})

describe('facts.json (issue 31: facts in their on-chain form)', () => {
  it('writes the SHARP fact as 0x and 64 hex digits; the program hash and the Integrity fact keep their form', async () => {
    const io = new RecordingIO({}, { scrub: true })
    io.env = { RUNNER_TEMP: mkdtempSync(join(tmpdir(), 'publish-')) }
    const step = {
      ended: { outcome: 'failed', headline: 'refused', problems: [] },
      summaryMarkdown: '### Prove: failed',
      outputs: new OutputWriter(io),
      options: { emulated: false },
      queryId: 'q-1',
      record: {
        status: 'DONE',
        programHash: '0xabc',
        sharpFactHash: '0x00FF',
        integrityFactHash: '0x1',
        isFactMocked: false,
      },
    } as unknown as PublishedStep
    const publisher = await GitHubPublisher.open(io, {
      'github-token': 'ghs_unused',
      'pr-comment': false,
      'check-run': false,
      attest: true,
    })
    await publisher.finish(step, { serviceUrl: undefined, download: () => Promise.reject(new Error('not called')) })
    const facts = JSON.parse(readFileSync(step.outputs.get('facts-json')!, 'utf8'))
    expect(facts).toMatchObject({
      programHash: '0xabc',
      sharpFactHash: `0x${'0'.repeat(62)}ff`,
      integrityFactHash: '0x1',
    })
  })
})
