import { createHash } from 'node:crypto'
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { artifactName, downloadArtifacts } from '../../src/pipeline/artifacts.ts'
import { productionQuery } from '../contract/bodies.ts'
import { runCli } from '../helpers/cli.ts'
import { FIXTURE_PIE, KEY, submitFixturePie, useEmulator } from '../helpers/emulator.ts'

/**
 * `proving query download <id>` (issue 25): a query's artifacts fetched through the one HTTP
 * client into a folder, each SHA-256 printed, nothing overwritten without --force; and against
 * a hostile service, every refusal writes nothing, inside the folder or outside it.
 */

const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex')
const fresh = () => mkdtempSync(join(tmpdir(), 'proving-download-'))

describe('proving query download against the emulator', () => {
  const emulator = useEmulator()

  async function doneQuery(): Promise<string> {
    const id = await submitFixturePie(emulator())
    await emulator().client().waitForQuery(id, { timeoutMs: 20_000 })
    return id
  }

  it('writes every artifact the query lists, byte for byte, and prints the SHA-256 of each', async () => {
    const id = await doneQuery()
    const out = join(fresh(), 'artifacts')
    const run = await runCli(['query', 'download', id, '--out', out, '--base-url', emulator().url])
    expect(run.stderr).toBe('')
    expect(run.code).toBe(0)
    expect(readdirSync(out).sort()).toEqual(['metadata.json', 'pie.cairo0.zip', 'proof.json'])
    // The uploaded PIE comes back as it was sent, and the printed digest is the file's.
    const pie = readFileSync(FIXTURE_PIE)
    expect(readFileSync(join(out, 'pie.cairo0.zip')).equals(pie)).toBe(true)
    expect(run.stdout).toContain(`sha256 ${sha256(pie)}`)
    for (const name of ['proof.json', 'metadata.json']) {
      expect(run.stdout).toMatch(
        new RegExp(`${name.replace('.', '\\.')}\\s+\\d+ bytes\\s+sha256 ${sha256(readFileSync(join(out, name)))}`),
      )
    }
    expect(JSON.parse(readFileSync(join(out, 'metadata.json'), 'utf8'))).toHaveProperty('program_hash')
  })

  it('--json gives each file with its size and digest; --only keeps the named ones', async () => {
    const id = await doneQuery()
    const out = fresh()
    const run = await runCli([
      'query',
      'download',
      id,
      '--out',
      out,
      '--only',
      'proof.json',
      '--json',
      '--base-url',
      emulator().url,
    ])
    expect(run.code).toBe(0)
    const report = JSON.parse(run.stdout)
    expect(report).toMatchObject({ queryId: id, outDir: out })
    expect(report.files).toHaveLength(1)
    const [file] = report.files
    expect(file).toMatchObject({ name: 'proof.json', path: join(out, 'proof.json') })
    const written = readFileSync(join(out, 'proof.json'))
    expect(file.bytes).toBe(written.length)
    expect(file.sha256).toBe(sha256(written))
    expect(readdirSync(out)).toEqual(['proof.json'])
  })

  it('an --only name the query does not list is refused with the names it does list', async () => {
    const id = await doneQuery()
    const out = fresh()
    const run = await runCli([
      'query',
      'download',
      id,
      '--out',
      out,
      '--only',
      'proof.bin',
      '--base-url',
      emulator().url,
    ])
    expect(run.code).toBe(2)
    expect(run.stderr).toContain('The artifacts asked for (--only; only in the library) include proof.bin')
    expect(run.stderr).toContain('(it lists: proof.json, pie.cairo0.zip, metadata.json)')
    expect(readdirSync(out)).toEqual([])
  })

  it('refuses to replace an existing file without --force, writing nothing; --force replaces it', async () => {
    const id = await doneQuery()
    const out = fresh()
    writeFileSync(join(out, 'metadata.json'), 'mine')
    const refused = await runCli(['query', 'download', id, '--out', out, '--base-url', emulator().url])
    expect(refused.code).toBe(2)
    expect(refused.stderr).toContain(`${join(out, 'metadata.json')} already exists; replace it (--force`)
    // Checked before the first byte: not even the other files were written.
    expect(readdirSync(out)).toEqual(['metadata.json'])
    expect(readFileSync(join(out, 'metadata.json'), 'utf8')).toBe('mine')

    const forced = await runCli(['query', 'download', id, '--out', out, '--force', '--base-url', emulator().url])
    expect(forced.code).toBe(0)
    expect(readFileSync(join(out, 'metadata.json'), 'utf8')).not.toBe('mine')
    expect(readdirSync(out).sort()).toEqual(['metadata.json', 'pie.cairo0.zip', 'proof.json'])
  })

  it('an id that is not an id is refused before any request (exit 2)', async () => {
    const run = await runCli(['query', 'download', '../etc', '--base-url', emulator().url])
    expect(run.code).toBe(2)
    expect(emulator().requests()).toEqual([])
  })

  it('needs no API key, and a key given is never printed', async () => {
    const id = await doneQuery()
    const out = fresh()
    const run = await runCli(['query', 'download', id, '--out', out, '--json', '--base-url', emulator().url], {
      env: { PROVING_API_KEY: KEY },
    })
    expect(run.code).toBe(0)
    expect(run.stdout + run.stderr).not.toContain(KEY)
  })
})

describe('proving query download of a query still running', () => {
  const emulator = useEmulator({ timing: { receivedMs: 3_600_000, stepMs: 3_600_000 } })

  it('says it lists no artifacts yet and how to wait for it, and writes no folder', async () => {
    const id = await submitFixturePie(emulator())
    const out = join(fresh(), 'never')
    const run = await runCli(['query', 'download', id, '--out', out, '--base-url', emulator().url])
    expect(run.code).toBe(0)
    expect(run.stdout).toContain(
      `Query ${id} lists no artifacts; they are listed once it is DONE. Wait for it with: proving query wait ${id}`,
    )
    expect(existsSync(out)).toBe(false)
  })
})

/**
 * A proving service whose record lists artifact links chosen per query id, on one origin (A),
 * and a second origin (B) that a hostile redirect points at.
 */
describe('proving query download against a hostile service', () => {
  let service: Server
  let other: Server
  let base: string
  let otherBase: string
  const otherHits: string[] = []
  const big = Buffer.alloc(2 * 1024 * 1024 + 1, 1)
  const links: Record<string, (base: string) => string[]> = {
    'q-redirect': (b) => [`${b}/files/proof.json`, `${b}/files/away/metadata.json`],
    'q-big': (b) => [`${b}/files/big/proof.json`],
    'q-big-chunked': (b) => [`${b}/files/chunked/proof.json`],
    'q-traversal': (b) => [`${b}/files/..%2F..%2Fescaped.json`],
    'q-slash': (b) => [`${b}/files/sub%2Fdir.json`],
    'q-hidden': (b) => [`${b}/files/.bashrc`],
    'q-twice': (b) => [`${b}/files/proof.json`, `${b}/other/proof.json`],
    'q-not-a-url': () => ['proof.json'],
    'q-fine': (b) => [`${b}/files/proof.json`],
  }

  function listen(server: Server): Promise<string> {
    return new Promise((resolve) =>
      server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
    )
  }

  beforeAll(async () => {
    other = createServer((req, res) => {
      otherHits.push(req.url ?? '')
      res.end('{"from":"elsewhere"}')
    })
    otherBase = await listen(other)
    service = createServer((req, res) => {
      const url = (req.url ?? '').split('?')[0]!
      const record = /^\/proving-query\/([\w-]+)$/.exec(url)
      if (record) {
        const id = record[1]!
        const body = {
          provingQuery: productionQuery('full', { id, status: 'DONE' }),
          metadataUrls: links[id]?.(base) ?? [],
        }
        return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body))
      }
      if (url === '/files/proof.json' || url === '/other/proof.json') return res.writeHead(200).end('{"proof":true}')
      if (url === '/files/away/metadata.json')
        return res.writeHead(302, { location: `${otherBase}/metadata.json` }).end()
      if (url === '/files/big/proof.json') return res.writeHead(200, { 'content-length': String(big.length) }).end(big)
      if (url === '/files/chunked/proof.json') {
        res.writeHead(200)
        res.write(big.subarray(0, 1024 * 1024))
        res.write(big.subarray(1024 * 1024, 2 * 1024 * 1024))
        return res.end(big.subarray(2 * 1024 * 1024))
      }
      res.writeHead(404).end('{}')
    })
    base = await listen(service)
  })
  afterAll(async () => {
    await Promise.all([service, other].map((server) => new Promise<void>((resolve) => server.close(() => resolve()))))
  })

  async function download(id: string, ...flags: string[]) {
    const parent = fresh()
    const out = join(parent, 'out')
    const run = await runCli(['query', 'download', id, '--out', out, '--base-url', base, ...flags])
    return { run, out, parent }
  }

  it('a redirect to another origin is refused and never followed; the file before it is kept whole, none is half-written', async () => {
    const { run, out } = await download('q-redirect')
    expect(run.code).not.toBe(0)
    expect(run.stderr).toContain('Refused to follow the artifact metadata.json')
    expect(run.stderr).toContain('to another origin')
    expect(otherHits).toEqual([])
    expect(readdirSync(out)).toEqual(['proof.json'])
  })

  it('an artifact over --max-size is refused, announced or not, and leaves no file', async () => {
    for (const id of ['q-big', 'q-big-chunked']) {
      const { run, out } = await download(id, '--max-size', '2')
      expect(run.code, id).not.toBe(0)
      expect(run.stderr, id).toMatch(
        /more than the 2 MiB allowed; refused unread|larger than the 2 MiB allowed; cut and refused/,
      )
      expect(readdirSync(out), id).toEqual([])
    }
    // Within the cap, the same artifact is written whole.
    const { run, out } = await download('q-big', '--max-size', '3')
    expect(run.code).toBe(0)
    expect(readFileSync(join(out, 'proof.json')).equals(big)).toBe(true)
  })

  it('a link whose name is a path, hidden, doubled or not a URL writes nothing, in the folder or beside it', async () => {
    for (const id of ['q-traversal', 'q-slash', 'q-hidden', 'q-twice', 'q-not-a-url']) {
      const { run, out, parent } = await download(id)
      expect(run.code, id).toBe(3)
      expect(run.stderr, id).toMatch(/does not end in a plain file name|two artifacts named proof\.json|not a URL/)
      expect(existsSync(out) ? readdirSync(out) : [], id).toEqual([])
      expect(
        readdirSync(parent).filter((name) => name !== 'out'),
        id,
      ).toEqual([])
    }
  })

  it("a presigned link's query string (its signature) is left out of what is reported", async () => {
    const out = fresh()
    const [file] = await downloadArtifacts(
      [`${base}/files/proof.json?X-Amz-Credential=AKIAEXAMPLE&X-Amz-Signature=deadbeef`],
      out,
    )
    expect(file!.url).toBe(`${base}/files/proof.json`)
    expect(JSON.stringify(file)).not.toMatch(/AKIAEXAMPLE|deadbeef/)
  })

  it('plain http to another machine is refused unless allowed (the service rule applies to artifacts too)', async () => {
    const out = fresh()
    await expect(downloadArtifacts(['http://192.0.2.1/files/proof.json'], out)).rejects.toThrow(
      /plain http from another machine/,
    )
    expect(readdirSync(out)).toEqual([])
  })

  it('names: the last segment, decoded; anything that could choose where a file lands is refused', () => {
    expect(artifactName('https://cdn.example/q/1/proof.json?sig=abc')).toBe('proof.json')
    expect(artifactName('https://cdn.example/q/1/pie.cairo0.zip')).toBe('pie.cairo0.zip')
    for (const url of [
      'https://cdn.example/a/%2e%2e',
      'https://cdn.example/a/..',
      'https://cdn.example/a/',
      'https://cdn.example/a/x%5Cy.json',
      'https://cdn.example/a/%00.json',
      'https://cdn.example/a/a..b',
    ]) {
      expect(() => artifactName(url), url).toThrow(/does not end in a plain file name/)
    }
  })

  it('the exit code says a service problem (3) for a hostile listing, an input problem (2) for an existing file', async () => {
    const { run, out } = await download('q-fine')
    expect(run.code).toBe(0)
    const again = await runCli(['query', 'download', 'q-fine', '--out', out, '--base-url', base])
    expect(again.code).toBe(2)
  })
})
