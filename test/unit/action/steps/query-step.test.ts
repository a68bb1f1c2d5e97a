import { describe, expect, it } from 'vitest'
import { QueryStep } from '../../../../src/action/steps/query-step.ts'
import { fakeIO } from '../../../helpers/run-action.ts'

describe('QueryStep.proofJson', () => {
  const stepWith = (metadataUrls: string[]) => {
    const step = new QueryStep(fakeIO(), { action: 'Prove', signal: new AbortController().signal })
    step.metadataUrls = metadataUrls
    return step
  }

  it("downloads proof.json once for the artifact and the release: the second gets the first one's file", async () => {
    const step = stepWith(['https://files.example/q/pie.zip', 'https://files.example/q/proof.json?sig=1'])
    const downloads: [string, string][] = []
    const download = async (url: string, path: string) => void downloads.push([url, path])
    expect(await step.proofJson('/tmp/artifact/proof.json', download)).toBe('/tmp/artifact/proof.json')
    expect(await step.proofJson('/tmp/release/proof.json', download)).toBe('/tmp/artifact/proof.json')
    expect(downloads).toEqual([['https://files.example/q/proof.json?sig=1', '/tmp/artifact/proof.json']])
  })

  it('a failed download is tried again by the next caller; none listed, nothing to download', async () => {
    const step = stepWith(['https://files.example/q/proof.json'])
    await expect(step.proofJson('/tmp/a/proof.json', () => Promise.reject(new Error('HTTP 503')))).rejects.toThrow(
      'HTTP 503',
    )
    expect(await step.proofJson('/tmp/b/proof.json', async () => {})).toBe('/tmp/b/proof.json')
    expect(stepWith(['https://files.example/q/pie.zip']).proofJson('/tmp/c/proof.json', async () => {})).toBeUndefined()
  })
})
