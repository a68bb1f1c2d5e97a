import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { run } from '../../src/action/actions/main.ts'
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.ts'
import { fakeIO, FIXTURE_PIE, REPO_ROOT, unzipPie } from '../helpers/run-action.ts'

/**
 * What the root action's job summary shows a person who opens the run: the PIE as the workflow
 * named it (relative to the workspace, not the runner's absolute path), the proof one click away
 * (the service's artifact links), and no on-chain verdict where none was asked for.
 */
const API_KEY = 'pk_summary_7c1e9a'
let emulator: RunningEmulator

beforeAll(async () => {
  emulator = await startEmulator({ timing: { receivedMs: 0, stepMs: 20 } })
})
afterAll(async () => {
  await emulator.close()
})

const service = () => ({ 'api-key': API_KEY, 'base-url': emulator.url, reuse: 'never' })
const row = (summary: string, label: string) => summary.split('\n').find((line) => line.startsWith(`| **${label}** |`))

describe("the root action's job summary", () => {
  it('names the PIE relative to the workspace and links the proof on the service', async () => {
    const io = fakeIO({ pie: FIXTURE_PIE, ...service() })
    await run(io)
    expect(io.failed).toBeUndefined()
    expect(row(io.summary, 'PIE')).toMatch(/^\| \*\*PIE\*\* \| `examples\/fib\/pie\.zip`<br>sha256 `[0-9a-f]{64}` \|$/)
    expect(io.summary).not.toContain(REPO_ROOT)
    // The output stays absolute: a later step reads the file.
    expect(io.outputs['pie-zip']).toBe(join(REPO_ROOT, FIXTURE_PIE))

    const urls = JSON.parse(io.outputs['metadata-urls']!) as string[]
    const proof = urls.find((url) => url.endsWith('/proof.json'))!
    const links = [...row(io.summary, 'Proof')!.matchAll(/\[([^\]]+)\]\(([^)]+)\)/g)].map(([, label, url]) => [
      label,
      url,
    ])
    expect(links[0]).toEqual(['proof.json (on the service)', proof])
    expect(links.map(([, url]) => url).sort()).toEqual([...urls].sort())
  })

  it('a PIE directory is named as given, packed', async () => {
    const workspace = mkdtempSync(join(tmpdir(), 'workspace-'))
    await unzipPie(join(REPO_ROOT, FIXTURE_PIE), join(workspace, 'build', 'pie'))
    const io = fakeIO({ pie: 'build/pie', ...service() }, { env: { GITHUB_WORKSPACE: workspace } })
    await run(io)
    expect(io.failed).toBeUndefined()
    expect(row(io.summary, 'PIE')).toMatch(/^\| \*\*PIE\*\* \| `build\/pie \(packed\)`<br>sha256 /)
  })

  it('without verify-onchain, onchain-verified is left empty (nothing was asked, nothing refused), and no "On chain" row', async () => {
    const io = fakeIO({ pie: FIXTURE_PIE, ...service() })
    await run(io)
    expect(io.failed).toBeUndefined()
    expect(io.outputs).not.toHaveProperty('onchain-verified')
    expect(io.outputs['onchain-details']).toBe('[]')
    expect(row(io.summary, 'On chain')).toBeUndefined()
  })

  it('on the emulator, no link to the proof: the emulator stops with the step', async () => {
    const io = fakeIO({ pie: FIXTURE_PIE, emulator: 'true' })
    await run(io)
    expect(io.failed).toBeUndefined()
    expect(row(io.summary, 'Proof')).toBeUndefined()
  })
})
